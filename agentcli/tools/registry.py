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

# The subagent layer's tools: known names even before `register_tool` has added their classes.
TASK_TOOL_NAMES: tuple[str, ...] = ("Task", "TaskOutput", "TaskCancel")

# Other assistants' names for our tools (after lower-casing and dropping `_`, `-`, spaces).
# Claude Code 2.1 calls its Task tool `Agent`.
_ALIASES: dict[str, str] = {
    "list": "LS",
    "listdir": "LS",
    "multiedits": "MultiEdit",
    "todo": "TodoWrite",
    "agent": "Task",
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.strip().lower() if ch not in "_- ")


def register_tool(cls: type[Tool[Any]]) -> None:
    """Add a tool class defined elsewhere (Task, TaskOutput, TaskCancel); idempotent."""
    ALL_TOOLS[cls.name] = cls


def canonical_tool_name(name: str) -> str | None:
    """Our name for `name`, case-insensitively (`read` → `Read`, `multi_edit` → `MultiEdit`), or None.

    Task, TaskOutput and TaskCancel are known names whether or not their classes are registered yet.
    """
    key = _key(name)
    if not key:
        return None
    known_names = (*ALL_TOOLS, *(n for n in TASK_TOOL_NAMES if n not in ALL_TOOLS))
    for known in known_names:
        if _key(known) == key:
            return known
    alias = _ALIASES.get(key)
    return alias if alias in known_names else None


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
        if canonical is None or canonical not in ALL_TOOLS:  # an unregistered Task tool is unknown here
            unknown.append(name)
        else:
            wanted.add(canonical)
    if unknown:
        raise ValueError(f"Unknown tool(s): {', '.join(unknown)}. Known: {', '.join(ALL_TOOLS)}")
    return [cls() for name, cls in ALL_TOOLS.items() if name in wanted]
