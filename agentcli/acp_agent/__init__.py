"""`agentcli acp`: agentcli in an editor over the Agent Client Protocol (JSON-RPC on stdio), on the official
`agent-client-protocol` SDK.

- `server`: the ACP agent (initialize, authenticate, sessions new and loaded, prompts, cancel, modes);
- `session`: one ACP session, an agentcli `Conversation` in the editor's folder, turn by turn;
- `updates`: agentcli's events as `session/update` notifications, a subagent's tied to its Task call;
- `tool_info`: a tool call's kind, title, locations and content (diffs, command output);
- `approver`: permission questions as `session/request_permission`;
- `questions`: AskUserQuestion's questions as `session/request_permission`, one per question;
- `replay`: a stored session's messages as updates (`session/load`);
- `commands`: the slash commands offered (`available_commands_update`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.acp_agent.server import serve
    from agentcli.acp_agent.session import Options

__all__ = [
    "Options",
    "serve",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.acp_agent.server": ["serve"],
    "agentcli.acp_agent.session": ["Options"],
})
