"""One listing order for every agent's tools, read off the traits, so a subagent's list is a prefix of the
main agent's and the provider's prompt cache serves it."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from agentcli.subagents.task_tool import TASK_TOOL_CLASSES
from agentcli.subagents.toolbox import Toolbox
from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolResult, in_listing_order, listing_rank, tool_specs
from agentcli.tools.registry import ALL_TOOLS, READ_ONLY_TOOLS


class _Args(ToolArgs):
    pass


class _Future(Tool[_Args]):
    """A tool of the delegation tree that only some agents have, like Task."""

    name: ClassVar[str] = "Future"
    args_model: ClassVar[type[ToolArgs]] = _Args

    def description(self) -> str:
        return "a future tool"

    async def run(self, args: _Args, ctx: ToolContext) -> ToolResult:
        return ToolResult("")


class _Everywhere(_Future):
    """A tool every agent of the tree has, a read-only one too (as SendMessage and ListAgents)."""

    name: ClassVar[str] = "Everywhere"
    every_agent: ClassVar[bool] = True


class _Outside(_Future):
    """An MCP server's tool that says it only reads: still listed after agentcli's own."""

    name: ClassVar[str] = "mcp__srv__look"
    read_only: ClassVar[bool] = True
    mutating: ClassVar[bool] = True
    external: ClassVar[bool] = True


def _every() -> list[type[Tool[Any]]]:
    return [*ALL_TOOLS.values(), *TASK_TOOL_CLASSES.values(), _Future, _Everywhere, _Outside]


def test_groups_come_from_the_traits_in_a_fixed_order() -> None:
    ordered = in_listing_order(_every())
    ranks = [listing_rank(cls) for cls in ordered]
    assert ranks == sorted(ranks)
    names = [cls.name for cls in ordered]
    head = len(READ_ONLY_TOOLS)
    assert set(names[:head]) == set(READ_ONLY_TOOLS) and names[head] == "Everywhere"
    mutating = [cls.name for cls in ALL_TOOLS.values() if cls.mutating]
    assert names[head + 1: head + 1 + len(mutating)] == mutating
    assert names[-1] == "mcp__srv__look" and names.index("Task") < names.index("Future")


def test_each_group_keeps_the_order_it_was_given_in() -> None:
    shuffled = _every()
    random.Random(7).shuffle(shuffled)
    ordered = in_listing_order(shuffled)
    for rank in range(5):
        assert [c for c in ordered if listing_rank(c) == rank] == [c for c in shuffled if listing_rank(c) == rank]


def test_a_read_only_subset_is_a_prefix_and_the_break_ends_it() -> None:
    box = Toolbox.builtin()  # the main agent and every subagent build their tools from one toolbox, in its order
    main = tool_specs([*box.build(), _Future(), _Everywhere()])
    read_only = tool_specs([*box.build(reversed(READ_ONLY_TOOLS)), _Everywhere()])
    assert main[: len(read_only)] == read_only  # equal specs: names, descriptions, schemas and the break
    assert [spec.name for spec in main if spec.cache_break] == [read_only[-1].name] == ["Everywhere"]
    assert not any(spec.cache_break for spec in tool_specs([ALL_TOOLS["Bash"]()]))  # no read-only tool: no break
