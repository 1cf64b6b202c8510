"""What the parent serves a remote subagent while it runs: the person (its permission questions, through this tree's
approver), the person's PreToolUse / PostToolUse hooks, its MCP calls on the parent's servers, the messaging tools
(SendMessage, ListAgents: the switchboard is the parent's) and Skill (the skill catalog is the parent's), and the
letters sent to it (forwarded to the worker)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentcli.hooks import HookVerdict
from agentcli.mcp import McpTool
from agentcli.subagents.remote.job import Asked, HookCall, McpCall, PolicyRules, Question, ToolHere
from agentcli.tools import MESSAGE_TOOL_NAMES, SKILL_TOOL_NAME, AskUserQuestionTool, ToolError, ToolResult

if TYPE_CHECKING:
    from agentcli.events import EventSink
    from agentcli.hooks import HookEngine
    from agentcli.tools import PermissionPolicy, Tool, ToolContext


@dataclass(slots=True)
class ParentSide:
    """One remote task's services at the parent. `tools` are the task's tools built here: its MCP tools are called
    by their servers' names, its messaging tools and Skill run here in `context` (the subagent's)."""

    policy: PermissionPolicy
    hooks: HookEngine | None
    tools: list[Tool[Any]]
    context: ToolContext
    letters: Callable[[], list[str]] | None = None  # the subagent's mailbox, drained
    unread: list[str] = field(default_factory=list)  # forwarded, yet not read on the worker before its turn ended
    _mcp: dict[tuple[str, str], McpTool] = field(init=False)
    _here: dict[str, Tool[Any]] = field(init=False)

    def __post_init__(self) -> None:
        self._mcp = {(t.server, t.remote_name): t for t in self.tools if isinstance(t, McpTool)}
        here = (*MESSAGE_TOOL_NAMES, SKILL_TOOL_NAME, AskUserQuestionTool.name)  # the person is asked here too
        self._here = {t.name: t for t in self.tools if t.name in here}

    def here(self) -> dict[str, str]:
        """The task's tools that run here, with their descriptions (the worker offers stand-ins that call them)."""
        return {name: tool.description() for name, tool in self._here.items()}

    def rules(self) -> PolicyRules:
        return PolicyRules.of(self.policy)

    def inbox(self) -> list[str]:
        """What the subagent has not read: the supervisor runs it again with these once its turn ends."""
        found, self.unread = [*self.unread, *(self.letters() if self.letters is not None else [])], []
        return found

    def new_letters(self) -> list[str]:
        """Letters that came since the last look, for the worker."""
        return self.letters() if self.letters is not None else []

    async def serve(self, asked: Asked, emit: EventSink) -> Any:
        """The reply to what the worker asked (a tool's or an approver's error is a line of text)."""
        if isinstance(asked, Question):
            return await self.policy.relay(dataclasses.replace(asked.request, worktree=True))
        if isinstance(asked, HookCall):
            if self.hooks is None:
                return HookVerdict()
            return await self.hooks.fire(asked.event, asked.data, session_id=asked.session_id, agent=asked.agent,
                                         emit=emit, target=asked.target, tool_call_id=asked.tool_call_id)
        try:
            if isinstance(asked, McpCall):
                if (mcp := self._mcp.get((asked.server, asked.tool))) is None:
                    return f"{asked.server}: {asked.tool} is not one of this task's tools"
                return await mcp.caller.call(asked.server, asked.tool, asked.arguments, asked.agent)
            return await self._run_here(asked)
        except ToolError as exc:
            return str(exc) or type(exc).__name__

    async def _run_here(self, asked: ToolHere) -> ToolResult:
        tool = self._here.get(asked.name)
        if tool is None:
            raise ToolError(f"{asked.name} is not one of this task's tools")
        args = tool.parse(asked.arguments)
        return await tool.run(args, dataclasses.replace(self.context, tool_call_id=asked.tool_call_id))
