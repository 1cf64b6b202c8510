"""Hooks in Claude Code's format: commands the person configures to run at points of a session.

`settings` reads them (the agentcli config's `[hooks]`, `~/.claude/settings.json`, and a trusted
project's `.claude/settings.json` / `.claude/settings.local.json`), `process` runs one command
(JSON on stdin, a time limit, its process group killed), and `engine` turns what the commands
said into decisions the loop, the runner and the conversation act on, reporting each run as a
`HookRunEvent`.
"""
