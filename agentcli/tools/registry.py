"""Every tool by name, the read-only / mutating sets, and case-insensitive name mapping.

Agent files from Claude Code (`Read, Write, Bash`) and opencode (`read`, `list`, `todowrite`)
name tools differently; `canonical_tool_name` maps them onto ours.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentcli.tools.base import Tool
from agentcli.tools.files import EditTool, GlobTool, GrepTool, LSTool, MultiEditTool, ReadTool, WriteTool
from agentcli.tools.shell import BashTool
from agentcli.tools.todo import TodoWriteTool

ALL_TOOLS: dict[str, type[Tool[Any]]] = {
    "Read": ReadTool,
    "Write": WriteTool,
    "Edit": EditTool,
    "MultiEdit": MultiEditTool,
    "LS": LSTool,
    "Glob": GlobTool,
    "Grep": GrepTool,
    "Bash": BashTool,
    "TodoWrite": TodoWriteTool,
    # Task, TaskOutput and TaskCancel (agentcli.subagents.task_tool) are added with
    # `register_tool` by the subagent layer: they need the runner, which this module must not import.
}

READ_ONLY_TOOLS: tuple[str, ...] = ("LS", "Glob", "Grep", "Read", "TodoWrite")
MUTATING_TOOLS: tuple[str, ...] = tuple(name for name, cls in ALL_TOOLS.items() if cls.mutating)

# Other assistants' names for our tools (after lower-casing and dropping `_`, `-`, spaces).
_ALIASES: dict[str, str] = {"list": "LS", "listdir": "LS", "multiedits": "MultiEdit", "todo": "TodoWrite"}


def _key(name: str) -> str:
    return "".join(ch for ch in name.strip().lower() if ch not in "_- ")


def register_tool(cls: type[Tool[Any]]) -> None:
    """Add a tool class defined elsewhere (Task, TaskOutput, TaskCancel); idempotent."""
    ALL_TOOLS[cls.name] = cls


def canonical_tool_name(name: str) -> str | None:
    """Our name for `name`, case-insensitively (`read` → `Read`, `multi_edit` → `MultiEdit`), or None."""
    key = _key(name)
    if not key:
        return None
    for known in ALL_TOOLS:
        if _key(known) == key:
            return known
    alias = _ALIASES.get(key)
    return alias if alias in ALL_TOOLS else None


def build_tools(names: Iterable[str] | None = None) -> list[Tool[Any]]:
    """Fresh instances of the named tools (all when None), in `ALL_TOOLS` order, without duplicates.

    Raises ValueError naming every unknown tool.
    """
    if names is None:
        return [cls() for cls in ALL_TOOLS.values()]
    wanted: set[str] = set()
    unknown: list[str] = []
    for name in names:
        canonical = canonical_tool_name(name)
        if canonical is None:
            unknown.append(name)
        else:
            wanted.add(canonical)
    if unknown:
        raise ValueError(f"Unknown tool(s): {', '.join(unknown)}. Known: {', '.join(ALL_TOOLS)}")
    return [cls() for name, cls in ALL_TOOLS.items() if name in wanted]
