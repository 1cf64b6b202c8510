"""LoadTool: in a lean prompt (a small context window), the rarely needed tools are offered on demand.

The tools whose `on_demand` trait is set (WebFetch, MultiEdit, TaskOutput, TaskCancel, every MCP tool) are
named in LoadTool's description, one line each, instead of being listed with their schemas. A LoadTool call
adds the named tools to the list the next request offers, at its end, so what was sent before stays a prefix
(the provider's or the local server's prompt cache keeps it); a loaded tool stays offered for the session.
The agent's loop owns the list: this tool only asks it (`Offer`). A tool it loads is one the agent already
has (its plan gave it): loading never widens what an agent may do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pydantic import Field

from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult

#: Given tool names: (the ones now offered, the ones this agent has no on-demand tool of).
Offer = Callable[[Sequence[str]], tuple[list[str], list[str]]]

NAME = "LoadTool"
_SUMMARY_CHARS = 110


class LoadToolArgs(ToolArgs):
    """LoadTool's input."""

    names: list[str] = Field(min_length=1, max_length=20,
                             description="Names of the tools to load, from the list in LoadTool's description")


class LoadTool(Tool[LoadToolArgs]):
    """Offers an agent's on-demand tools once it asks for them (built by its loop, one per agent)."""

    name: ClassVar[str] = NAME
    args_model: ClassVar[type[ToolArgs]] = LoadToolArgs

    def __init__(self, offer: Offer, catalog: Sequence[Tool[Any]]) -> None:
        self.offer = offer
        # What the description lists, fixed when the lean prompt was chosen: the tool list stays byte-stable
        self._lines = [f"- {tool.name}: {summary(tool)}" for tool in catalog]
        self._names = [tool.name for tool in catalog]

    def description(self) -> str:
        return (
            "Load tools that are not offered yet; each stays offered from your next step on. Call it before the "
            "first use of one of these:\n" + "\n".join(self._lines)
        )

    def lean_description(self) -> str:
        return self.description()

    def summary(self, args: LoadToolArgs) -> str:
        return ", ".join(args.names)[:120]

    async def run(self, args: LoadToolArgs, ctx: ToolContext) -> ToolResult:
        """Ask the loop to offer the tools; unknown names are an error listing what can be loaded."""
        loaded, unknown = self.offer(args.names)
        if unknown and not loaded:
            raise ToolError(f"No such tool to load: {', '.join(unknown)}. Tools that can be loaded: "
                            f"{', '.join(self._names) or 'none'}")
        text = f"Loaded: {', '.join(loaded)}. Call them as usual from your next step."
        if unknown:
            text += f" Not found: {', '.join(unknown)}."
        return ToolResult(text)


def summary(tool: Tool[Any]) -> str:
    """The first sentence of a tool's short description, on one line."""
    text = " ".join(tool.lean_description().split())
    sentence = text.split(". ", 1)[0].rstrip(".")
    return sentence if len(sentence) <= _SUMMARY_CHARS else sentence[: _SUMMARY_CHARS - 1].rstrip() + "…"
