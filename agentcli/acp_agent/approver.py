"""Permission questions as ACP `session/request_permission`: every call the policy would ask the person about
(`tools.permissions`) is asked in the editor, with four options mapped onto agentcli's approvals:

- allow once → `allow_once`; allow always → `allow_always` (the policy remembers it for the session, as the TUI's
  "always": every file edit, a Bash command's prefix, a tool by name; a guarded file is still asked every time);
- reject once → `deny`; reject always → `deny` plus a deny rule for this session (`Tool(target)`: the same command,
  the same file for every file-editing tool, or the tool by name), which no mode or allow rule reopens.

The question names the asking agent (a subagent's label, `_meta` with its Task call) and shows what the call will
change (the policy's preview diff). A cancelled prompt answers `cancelled`: the call is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate

from agentcli.acp_agent import tool_info
from agentcli.acp_agent.updates import EventMapper, Outbox, subagent_meta
from agentcli.tools import PATH_TOOLS, Answer, PermissionPolicy, PermissionRequest, PermissionRule

log = logging.getLogger(__name__)
Ask = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
]


class AcpApprover:
    """The `Approver` of one ACP session."""

    def __init__(self, ask: Ask, outbox: Outbox, mapper: EventMapper, workspace: Path) -> None:
        self.ask = ask
        self.outbox = outbox
        self.mapper = mapper
        self.workspace = workspace
        self.policy: PermissionPolicy | None = None  # set once the conversation exists

    async def __call__(self, request: PermissionRequest) -> Answer:
        await self.outbox.flush()  # the call's `tool_call` reaches the editor before the question about it
        try:
            response = await self.ask(self.tool_call(request), self.options(request))
        except Exception as exc:
            log.warning("permission request failed: %s", exc)
            return Answer("deny", message=f"Permission denied: asking the person in the editor failed ({exc}).")
        outcome = response.outcome
        choice = getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None
        if choice in ("allow_once", "allow_always"):
            return Answer(choice)
        if choice == "reject_always":
            self._deny_always(request)
            return Answer("deny", message=f"Permission denied: the person rejected this {request.tool} call and every "
                          "one like it for this session. Do not retry it; continue another way or ask them.")
        if choice is None:
            return Answer("deny", message="Permission denied: the prompt was cancelled before the person answered.")
        return Answer("deny")

    def options(self, request: PermissionRequest) -> list[PermissionOption]:
        """The four options; "always allow" says what it would allow from then on."""
        if not request.always_scope:
            return OPTIONS
        scoped = OPTIONS[1].model_copy(update={"field_meta": {"agentcli": {"scope": request.always_scope}}})
        return [OPTIONS[0], scoped, *OPTIONS[2:]]

    def tool_call(self, request: PermissionRequest) -> ToolCallUpdate:
        """The call asked about: its title (with the asking subagent's label), the preview of what it changes."""
        sub = self.mapper.subagents.get(request.session_id)
        content: list[tool_info.Content] = []
        if request.diff is not None:
            content = tool_info.file_diff(request.diff, self.workspace)
        elif request.preview_note:
            content = [tool_info.text(request.preview_note)]
        meta: dict[str, Any] = subagent_meta(sub) if sub is not None else {}
        if request.always_scope:
            meta.setdefault("agentcli", {})["alwaysScope"] = request.always_scope
        title = tool_info.title_of(request.tool, request.tool_input, request.summary, request.agent)
        if request.worktree:  # its paths are the workspace's, in the task's git worktree (merged back later)
            meta.setdefault("agentcli", {})["worktree"] = True
            title = f"[worktree] {title}"
        return ToolCallUpdate(
            tool_call_id=request.tool_call_id,
            title=title,
            kind=tool_info.kind_of(request.tool), status="pending", content=content or None,
            locations=tool_info.locations_of(request.tool, request.tool_input, self.workspace) or None,
            raw_input=request.tool_input, field_meta=meta or None,
        )

    def _deny_always(self, request: PermissionRequest) -> None:
        if self.policy is None:
            return
        pattern = request.target or None
        if request.tool not in PATH_TOOLS and request.tool != "Bash":
            pattern = None  # any other tool: by name
        text = f"{request.tool}({pattern})" if pattern else request.tool
        self.policy.deny.append(PermissionRule(request.tool, pattern, text))
