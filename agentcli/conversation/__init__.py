"""Conversation: the composition root. One person's session with the main agent, as the TUI,
`agentcli run` and the demo drive it.

Split by responsibility: `root` (`Conversation`: building the parts, the turns, the way in and out),
`person_settings` (hooks, Claude Code's rules and setting sources, additional directories, the sandbox note,
the transcript, the main agent's shape), `model_switch` (`/model`, `--fallback-model`, effort), `sessions`
(stored sessions: resume, fork, release), `servers` (the session's MCP servers, started when first needed),
`turn_hooks` (SessionStart and UserPromptSubmit around a prompt), `checkpoints` and `rewinds` (the files before and
after every prompt; rewinds of files and conversation, and their undoing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.conversation.checkpoints import RewindDone, RewindError, RewindPreview
    from agentcli.conversation.root import Conversation, OpenError, main_agent_tools
    from agentcli.conversation.stored_sessions import Resumed, ResumeError, stored_ledger
    from agentcli.conversation.trust_report import TrustReport, may_arm, untrusted_warning, what_trust_arms

__all__ = [
    "Conversation",
    "OpenError",
    "ResumeError",
    "Resumed",
    "RewindDone",
    "RewindError",
    "RewindPreview",
    "TrustReport",
    "main_agent_tools",
    "may_arm",
    "stored_ledger",
    "untrusted_warning",
    "what_trust_arms",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.conversation.checkpoints": ["RewindDone", "RewindError", "RewindPreview"],
    "agentcli.conversation.root": ["Conversation", "OpenError", "main_agent_tools"],
    "agentcli.conversation.stored_sessions": ["ResumeError", "Resumed", "stored_ledger"],
    "agentcli.conversation.trust_report": ["TrustReport", "may_arm", "untrusted_warning", "what_trust_arms"],
})
