"""SendMessage and ListAgents: thin tools of every agent that may delegate or has a parent, bound to that agent."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from agentcli.subagents.messaging.switchboard import Switchboard
from agentcli.subagents.task_tool import ParentLink
from agentcli.tools import Tool, ToolArgs, ToolContext, ToolResult


class SendMessageArgs(ToolArgs):
    """SendMessage's input."""

    to: str = Field(description='A task_id (from Task or ListAgents), or "parent"')
    message: str = Field(description="What to tell it: read at its next turn boundary")
    run_in_background: bool = Field(
        False, description="When the agent has finished: continue it in the background instead of waiting"
    )


class SendMessageTool(Tool[SendMessageArgs]):
    """Message another agent of this session: one below you, a sibling, or your parent."""

    name: ClassVar[str] = "SendMessage"
    args_model: ClassVar[type[ToolArgs]] = SendMessageArgs
    own_time_limit: ClassVar[bool] = True  # a finished recipient runs again under its own limits
    concurrency_safe: ClassVar[bool] = True
    every_agent: ClassVar[bool] = True  # listed with the read-only tools: a read-only subagent has it too
    on_demand: ClassVar[bool] = True  # rarely needed: deferred, named in ToolSearch's list ([tools] defer)

    def __init__(self, board: Switchboard, sender: ParentLink) -> None:
        self.board = board
        self.sender = sender

    def summary(self, args: SendMessageArgs) -> str:
        return f"to {args.to}: {args.message}"

    async def run(self, args: SendMessageArgs, ctx: ToolContext) -> ToolResult:
        return await self.board.send(self.sender, args.to, args.message, args.run_in_background, ctx.tool_call_id)


class ListAgentsArgs(ToolArgs):
    """ListAgents takes no input."""


class ListAgentsTool(Tool[ListAgentsArgs]):
    """The agents you can message: id, type, status, depth, parent, elapsed time, last activity."""

    name: ClassVar[str] = "ListAgents"
    args_model: ClassVar[type[ToolArgs]] = ListAgentsArgs
    concurrency_safe: ClassVar[bool] = True
    every_agent: ClassVar[bool] = True
    on_demand: ClassVar[bool] = True

    def __init__(self, board: Switchboard, sender: ParentLink) -> None:
        self.board = board
        self.sender = sender

    def summary(self, args: ListAgentsArgs) -> str:
        return ""

    async def run(self, args: ListAgentsArgs, ctx: ToolContext) -> ToolResult:
        return self.board.list_agents(self.sender)


def message_tools(board: Switchboard, sender: ParentLink) -> list[Tool[Any]]:
    """SendMessage and ListAgents bound to one agent."""
    return [SendMessageTool(board, sender), ListAgentsTool(board, sender)]
