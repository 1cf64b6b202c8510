"""ToolSearch: the deferred tools, named in one line each, whose definitions are sent only once asked for.

Tools most turns never use (`[tools] defer`; by default those whose `on_demand` trait is set: MultiEdit, WebFetch,
WebSearch, NotebookEdit, LSP, AskUserQuestion, TaskOutput, TaskCancel, SendMessage, ListAgents, every MCP tool; in a
lean prompt always those) are named one line each at the end of the system prompt's stable part (`deferred_note`)
instead of being listed with their schemas. ToolSearch's own description names none, so it is the same for every
agent and sits in the head of the tool list a read-only subagent shares with the main agent. A call selects them by
name (`select:A,B`, Claude Code's shape) or by keywords; the loop adds the found tools to the list the next request
offers, at its end, so what was sent before stays a prefix (the provider's or the local server's prompt cache keeps
it); a loaded tool stays offered for the session. The agent's loop owns the list: this tool only asks it (`Offer`).
A tool it loads is one the agent already has (its plan gave it): loading never widens what an agent may do, and a
deferred tool called by name before it is loaded runs all the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pydantic import Field

from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult

#: Given tool names: (the ones now offered, the ones this agent has no deferred tool of).
Offer = Callable[[Sequence[str]], tuple[list[str], list[str]]]

NAME = "ToolSearch"
_SUMMARY_CHARS = 90


class ToolSearchArgs(ToolArgs):
    """ToolSearch's input."""

    query: str = Field(min_length=1, max_length=500, description=(
        '"select:Name1,Name2" loads those tools by name; otherwise keywords matched against the listed tools'))
    max_results: int = Field(5, ge=1, le=20, description="The most tools a keyword search loads")


class ToolSearchTool(Tool[ToolSearchArgs]):
    """Offers an agent's deferred tools once it asks for them (built by its loop, one per agent)."""

    name: ClassVar[str] = NAME
    args_model: ClassVar[type[ToolArgs]] = ToolSearchArgs
    read_only: ClassVar[bool] = True  # listed in the head every agent shares (its description names no tool)
    concurrency_safe: ClassVar[bool] = True

    def __init__(self, offer: Offer, catalog: Sequence[Tool[Any]]) -> None:
        self.offer = offer
        self._names = [tool.name for tool in catalog]
        self._words = {tool.name: _words(f"{tool.name} {tool.lean_description()}") for tool in catalog}

    def description(self) -> str:
        return ("Load deferred tools (the system prompt lists them) before the first use of one: select:Name,Name "
                "by name, or keywords. Their definitions are offered from your next step on, and stay.")

    def lean_description(self) -> str:
        return self.description()

    def summary(self, args: ToolSearchArgs) -> str:
        return args.query[:120]

    async def run(self, args: ToolSearchArgs, ctx: ToolContext) -> ToolResult:
        """Ask the loop to offer the selected or best-matching tools; nothing found is an error listing them."""
        query = args.query.strip()
        if query.lower().startswith("select:"):
            wanted = [name.strip() for name in query[len("select:"):].split(",") if name.strip()]
            by_lower = {name.lower(): name for name in self._names}
            wanted = [by_lower.get(name.lower(), name) for name in wanted]
        else:
            wanted = self._search(query, args.max_results)
        loaded, unknown = self.offer(wanted) if wanted else ([], [])
        if not loaded:
            missing = f"No deferred tool matches {', '.join(unknown) if unknown else repr(query)}"
            raise ToolError(f"{missing}. Deferred tools: {', '.join(self._names) or 'none'}")
        text = f"Loaded: {', '.join(loaded)}. Call them as usual from your next step."
        if unknown:
            text += f" Not found: {', '.join(unknown)}."
        return ToolResult(text)

    def _search(self, query: str, limit: int) -> list[str]:
        """The deferred tools whose name or description share the most words with `query` (the name counts 3×)."""
        terms = _words(query)
        scored: list[tuple[int, int, str]] = []
        for index, name in enumerate(self._names):
            score = sum(3 if term in name.lower() else 1 if term in self._words[name] else 0 for term in terms)
            if score:
                scored.append((-score, index, name))
        return [name for _, _, name in sorted(scored)[:limit]]


def deferred_note(tools: Sequence[Tool[Any]]) -> str:
    """The system prompt's lines naming the deferred tools (empty when there are none)."""
    if not tools:
        return ""
    lines = "\n".join(f"- {tool.name}: {summary(tool)}" for tool in tools)
    return f"\n\n# Deferred tools\nLoad one with ToolSearch before its first use:\n{lines}"


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) > 1}


def summary(tool: Tool[Any]) -> str:
    """The first sentence of a tool's short description, on one line."""
    text = " ".join(tool.lean_description().split())
    sentence = text.split(". ", 1)[0].rstrip(".")
    return sentence if len(sentence) <= _SUMMARY_CHARS else sentence[: _SUMMARY_CHARS - 1].rstrip() + "…"


def defer_rule(defer: str | Sequence[str]) -> Callable[[Tool[Any]], bool]:
    """`[tools] defer` as a test of a tool: "auto" the `on_demand` ones, "none" none, else the names (a name ending
    in `*` covers the names it starts)."""
    if defer == "auto":
        return lambda tool: tool.on_demand
    if isinstance(defer, str):
        return lambda tool: False
    exact = {name for name in defer if not name.endswith("*")}
    prefixes = tuple(name[:-1] for name in defer if name.endswith("*"))
    return lambda tool: tool.name in exact or (bool(prefixes) and tool.name.startswith(prefixes))
