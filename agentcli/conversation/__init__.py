"""Conversation: the composition root. One person's session with the main agent, as the TUI, `agentcli run` and the demo
drive it.

Split by responsibility: `root` (`Conversation`: building the parts, the turns, the way in and out),
`person_settings` (hooks, Claude Code's rules and setting sources, additional directories, the sandbox note, the
transcript, the main agent's shape), `model_switch` (`/model`, `--fallback-model`, effort), `sessions` (stored
sessions: resume, fork, release), `servers` (the session's MCP servers, started when first needed) and `turn_hooks`
(SessionStart and UserPromptSubmit around a prompt), `background` (background commands as events), `checkpoints` (the
files before and after every prompt), `rewinds` (`/rewind`, `/undo`, `/redo`: files and conversation) and
`stored_rewind` (a stored session's rewind from the command line), `program_plugins` (plugins a driving program names
in `initialize`, and those the person turns on in the TUI, joining a running session).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.conversation.checkpoints import (
        MODE_TEXT,
        MODES,
        Mode,
        RewindDone,
        RewindError,
        RewindPreview,
        as_mode,
        taken_back,
    )
    from agentcli.conversation.program_plugins import add_plugins, join_enabled
    from agentcli.conversation.root import Conversation, OpenError, main_agent_tools
    from agentcli.conversation.stored_rewind import StoredRewinder
    from agentcli.conversation.stored_sessions import Resumed, ResumeError, holder_line, stored_ledger
    from agentcli.conversation.trust_report import TrustReport, may_arm, untrusted_warning, what_trust_arms

__all__ = [
    "MODES",
    "MODE_TEXT",
    "Conversation",
    "Mode",
    "OpenError",
    "ResumeError",
    "Resumed",
    "RewindDone",
    "RewindError",
    "RewindPreview",
    "StoredRewinder",
    "TrustReport",
    "add_plugins",
    "as_mode",
    "holder_line",
    "join_enabled",
    "main_agent_tools",
    "may_arm",
    "stored_ledger",
    "taken_back",
    "untrusted_warning",
    "what_trust_arms",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.conversation.checkpoints": [
        "MODES", "MODE_TEXT", "Mode", "RewindDone", "RewindError", "RewindPreview", "as_mode", "taken_back",
    ],
    "agentcli.conversation.program_plugins": ["add_plugins", "join_enabled"],
    "agentcli.conversation.root": ["Conversation", "OpenError", "main_agent_tools"],
    "agentcli.conversation.stored_rewind": ["StoredRewinder"],
    "agentcli.conversation.stored_sessions": ["ResumeError", "Resumed", "holder_line", "stored_ledger"],
    "agentcli.conversation.trust_report": ["TrustReport", "may_arm", "untrusted_warning", "what_trust_arms"],
})
