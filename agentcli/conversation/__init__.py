"""Conversation: the composition root. One person's session with the main agent, as the TUI,
`agentcli run` and the demo drive it.

Split by responsibility: `root` (`Conversation`: building the parts, the turns, the way in and out),
`person_settings` (hooks, Claude Code's rules and setting sources, additional directories, the sandbox note,
the transcript, the main agent's shape), `model_switch` (`/model`, `--fallback-model`, effort), `sessions`
(stored sessions: resume, fork, release), `servers` (the session's MCP servers, started when first needed) and
`turn_hooks` (SessionStart and UserPromptSubmit around a prompt).
"""

from agentcli.conversation.root import Conversation, OpenError, main_agent_tools

__all__ = ["Conversation", "OpenError", "main_agent_tools"]
