"""What an agent's requests offer: its tools' specs, and in a lean prompt the on-demand tools LoadTool adds.

A window below `lean_below` tokens gets the lean prompt, decided once before the agent's first request
(`choose`): short descriptions (`Tool.lean_description`, `lean_input_schema`), and the tools whose `on_demand`
trait is set named in LoadTool's description instead of listed. A tool loaded later, and a tool added later
(an MCP server's), joins the end of the list, so every request's list starts with the one sent before it (the
provider's or the local server's prompt cache keeps it). A fork's given specs stay as given.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from agentcli.llm import ToolSpec
from agentcli.tools import Tool, tool_specs


class ToolOffer:
    """One agent's offered tools; `tools` is its loop's map of runnable tools (LoadTool joins it)."""

    def __init__(self, tools: dict[str, Tool[Any]], specs: Sequence[ToolSpec] | None, lean_below: int) -> None:
        self.tools = tools
        self.specs = tool_specs(tools.values()) if specs is None else list(specs)
        self.lean_below = lean_below  # 0: never lean
        self.lean: bool | None = None if specs is None else False  # None: not chosen yet
        self.on_change: Callable[[], None] = lambda: None  # the list changed (the loop re-weighs its fixed prompt)
        self._on_demand: dict[str, Tool[Any]] = {}  # on-demand tools not offered yet

    def choose(self, window: int) -> None:
        """Before the first request: the lean prompt when `window` (0: unknown) is below `lean_below`. Once."""
        if self.lean is not None:
            return
        self.lean = bool(self.lean_below and window and window < self.lean_below)
        if not self.lean:
            return
        from agentcli.tools import LoadTool

        offered = [tool for tool in self.tools.values() if not tool.on_demand]
        self._on_demand = {tool.name: tool for tool in self.tools.values() if tool.on_demand}
        if self._on_demand:
            loader = LoadTool(self.load, list(self._on_demand.values()))
            self.tools[loader.name] = loader
            offered.append(loader)
        self.specs = tool_specs(offered, lean=True)
        self.on_change()

    def add(self, tools: Iterable[Tool[Any]]) -> None:
        """More tools (an MCP server's, once it runs); known names are kept. In a lean prompt they join the end of
        the list (on-demand ones wait for LoadTool)."""
        new = [tool for tool in tools if tool.name not in self.tools]
        for tool in new:
            self.tools[tool.name] = tool
        if self.lean:
            self._on_demand.update((t.name, t) for t in new if t.on_demand)
            self.specs += _unbroken(tool_specs([t for t in new if not t.on_demand], lean=True))
        else:
            self.specs = tool_specs(self.tools.values())
        self.on_change()

    def load(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """LoadTool: offer these on-demand tools from the next request on, at the end of the list; (the ones now
        offered, the names of no on-demand tool of this agent)."""
        loaded: list[str] = []
        unknown: list[str] = []
        offered = {spec.name for spec in self.specs}
        for name in dict.fromkeys(names):
            tool = self._on_demand.pop(name, None)
            if tool is not None:
                self.specs += _unbroken(tool_specs([tool], lean=True))
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

