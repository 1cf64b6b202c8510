"""The interactive Textual TUI (`agentcli` with no command); imported lazily, never by the engine."""
