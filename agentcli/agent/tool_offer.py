"""What an agent's requests offer: its tools' specs, less the deferred tools ToolSearch names and adds on demand.

The deferred tools (`[tools] defer`) are named in ToolSearch's description instead of listed. A window below
`lean_below` tokens gets the lean prompt, decided once before the agent's first request (`choose`): short
descriptions (`Tool.lean_description`, `lean_input_schema`), and the tools whose `on_demand` trait is set deferred
too. A tool loaded later, and a tool added later (an MCP server's), joins the end of the list, so every request's
list starts with the one sent before it (the provider's or the local server's prompt cache keeps it). A fork's given
specs stay as given.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentcli.llm import ToolSpec
from agentcli.tools import Tool, tool_specs


@dataclass(frozen=True, slots=True)
class Offered:
    """What an agent's requests offer, as sent: the tool list, and the deferred tools' names with the lines that
    name them at the end of the system prompt's stable part (`note`). A fork is given its parent's, unchanged."""

    specs: tuple[ToolSpec, ...]
    note: str = ""
    deferred: tuple[str, ...] = ()


class ToolOffer:
    """One agent's offered tools; `tools` is its loop's map of runnable tools (ToolSearch joins it)."""

    def __init__(self, tools: dict[str, Tool[Any]], given: Offered | None, lean_below: int,
                 defer: Callable[[Tool[Any]], bool] | None = None) -> None:
        self.tools = tools
        self.lean_below = lean_below  # 0: never lean
        self.lean: bool | None = None if given is None else False  # None: not chosen yet
        self.on_change: Callable[[], None] = lambda: None  # the list changed (the loop re-weighs its fixed prompt)
        # `[tools] defer`: the tools named in the note instead of listed, loaded through ToolSearch
        self.defer = (lambda tool: False) if defer is None else defer
        self._deferred: dict[str, Tool[Any]] = {}  # deferred tools not offered yet
        self.note = ""  # the deferred tools' lines, fixed once sent: the system prompt stays byte-stable
        if given is None:
            self.specs = self._offered(lean=False)
        else:  # a fork: its parent's list and note; the parent's deferred tools it has load through its ToolSearch
            self.specs, self.note = list(given.specs), given.note
            self._deferred = {name: tools[name] for name in given.deferred if name in tools}
            self._searcher()

    def _offered(self, *, lean: bool) -> list[ToolSpec]:
        """The specs of the tools not deferred (in a lean prompt the `on_demand` ones are deferred too), with
        ToolSearch when there are deferred ones (named in `note`)."""
        from agentcli.tools import ToolSearchTool, deferred_note

        def deferred(tool: Tool[Any]) -> bool:
            return (lean and tool.on_demand) or self.defer(tool)

        self.tools.pop(ToolSearchTool.name, None)
        offered = [tool for tool in self.tools.values() if not deferred(tool)]
        self._deferred = {tool.name: tool for tool in self.tools.values() if deferred(tool)}
        self.note = deferred_note(list(self._deferred.values()))
        if (searcher := self._searcher()) is not None:
            offered.append(searcher)
        return tool_specs(offered, lean=lean)

    def _searcher(self) -> Tool[Any] | None:
        """ToolSearch over the deferred tools (joined to `tools`), or None when none is deferred."""
        from agentcli.tools import ToolSearchTool

        if not self._deferred:
            return None
        searcher = ToolSearchTool(self.load, list(self._deferred.values()))
        self.tools[searcher.name] = searcher
        return searcher

    @property
    def offered(self) -> Offered:
        """What the next request offers (what a fork of this agent is given)."""
        return Offered(tuple(self.specs), self.note, tuple(self._deferred))

    def choose(self, window: int) -> None:
        """Before the first request: the lean prompt when `window` (0: unknown) is below `lean_below`. Once."""
        if self.lean is not None:
            return
        self.lean = bool(self.lean_below and window and window < self.lean_below)
        if self.lean:
            self.specs = self._offered(lean=True)
            self.on_change()

    def add(self, tools: Iterable[Tool[Any]]) -> None:
        """More tools (an MCP server's, once it runs); known names are kept. Before the first request the list is
        made again (deferred ones named in ToolSearch); after it they join the end of the list, offered: the list
        sent before stays a prefix, and ToolSearch's description, sent before, could not name them."""
        new = [tool for tool in tools if tool.name not in self.tools]
        for tool in new:
            self.tools[tool.name] = tool
        if self.lean is None:
            self.specs = self._offered(lean=False)
        else:
            self.specs += _unbroken(tool_specs(new, lean=self.lean))
        self.on_change()

    def load(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """ToolSearch: offer these deferred tools from the next request on, at the end of the list; (the ones now
        offered, the names of no deferred tool of this agent)."""
        loaded: list[str] = []
        unknown: list[str] = []
        offered = {spec.name for spec in self.specs}
        for name in dict.fromkeys(names):
            tool = self._deferred.pop(name, None)
            if tool is not None:
                self.specs += _unbroken(tool_specs([tool], lean=bool(self.lean)))
                loaded.append(name)
            elif name in offered:
                loaded.append(name)  # already offered: nothing to do
            else:
                unknown.append(name)
        if loaded:
            self.on_change()
        return loaded, unknown


def _unbroken(specs: list[ToolSpec]) -> list[ToolSpec]:
    """Specs added at the end of a sent list: no cache breakpoint of their own (the head's stays where it was)."""
    return [dataclasses.replace(spec, cache_break=False) for spec in specs]


_SPEC_CHARS: dict[tuple[str, str, int], tuple[object, int]] = {}  # (name, description, id(schema)) -> (schema, len)


def specs_chars(specs: Sequence[ToolSpec]) -> int:
    """The length of the tools' JSON (`[[name, description, schema], ...]`), each tool's measured once: every
    subagent's loop has the same few tools, and serialising their schemas again cost a fan-out dearly."""
    total = 2 + 2 * max(len(specs) - 1, 0)  # the brackets and the ", " between entries
    for spec in specs:
        key = (spec.name, spec.description, id(spec.input_schema))
        entry = _SPEC_CHARS.get(key)
        if entry is None or entry[0] is not spec.input_schema:  # the schema is held: its id is never reused
            entry = (spec.input_schema, len(json.dumps([spec.name, spec.description, spec.input_schema],
                                                       ensure_ascii=False)))
            if len(_SPEC_CHARS) < 1024:
                _SPEC_CHARS[key] = entry
        total += entry[1]
    return total

