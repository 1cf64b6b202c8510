"""Every tool by name, the name sets derived from the tools' traits, and case-insensitive name mapping.

The traits on the tool classes (`tools.base.Tool`) are the one definition of what each tool is; the
sets below are read off them, never written out. The Task tools (Task, TaskOutput, TaskCancel) live
in the subagent layer above: this module knows only their names, `TASK_TOOL_NAMES`.

Agent files from Claude Code (`Read, Write, Bash`) and opencode (`read`, `list`, `todowrite`)
name tools differently; `canonical_tool_name` maps them onto ours.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from agentcli.tools.ask_user import AskUserQuestionTool
from agentcli.tools.base import Tool
from agentcli.tools.files.lsp import LSPTool
from agentcli.tools.files.notebook_edit import NotebookEditTool
from agentcli.tools.files.read import LSTool, ReadTool
from agentcli.tools.files.write import EditTool, MultiEditTool, WriteTool
from agentcli.tools.search.tools import GlobTool, GrepTool
from agentcli.tools.shell.bash import BashTool
from agentcli.tools.todo import TodoWriteTool
from agentcli.tools.web.fetch import WebFetchTool
from agentcli.tools.web.search import WebSearchTool

ALL_TOOLS: dict[str, type[Tool[Any]]] = {
    cls.name: cls
    for cls in (
        ReadTool, WriteTool, EditTool, MultiEditTool, LSTool, GlobTool, GrepTool, BashTool, TodoWriteTool, WebFetchTool,
        NotebookEditTool,
        WebSearchTool,
        LSPTool,
        AskUserQuestionTool,
    )
}

# The subagent layer's tools (agentcli.subagents.task_tool), which need the runner this layer must not
# import: the one list of their names (a test checks it against their classes).
TASK_TOOL_NAMES: tuple[str, ...] = ("Task", "TaskOutput", "TaskCancel")

# The subagent layer's messaging tools (agentcli.subagents.messaging.tools), bound to the agent that sends: an agent
# type without a tool list has them, one with a list only when it names them (a test checks them against the classes).
MESSAGE_TOOL_NAMES: tuple[str, ...] = ("SendMessage", "ListAgents")

# The subagent layer's Skill tool (agentcli.subagents.definitions.skill_tool): offered only when the session has skills.
SKILL_TOOL_NAME = "Skill"

#: Every tool an agent could be given, in the order tools are listed: ours, then the Task and messaging tools.
KNOWN_TOOL_NAMES: tuple[str, ...] = (*ALL_TOOLS, *TASK_TOOL_NAMES, *MESSAGE_TOOL_NAMES)


def names_with(trait: Callable[[type[Tool[Any]]], bool]) -> tuple[str, ...]:
    """The names of the tools (of `ALL_TOOLS`, in its order) whose class has `trait`."""
    return tuple(name for name, cls in ALL_TOOLS.items() if trait(cls))


#: Tools that only read the workspace: what the read-only agent types (explore, plan, summary) get.
READ_ONLY_TOOLS: tuple[str, ...] = names_with(lambda cls: cls.read_only)
#: Tools that write files: `Edit(...)` rules cover them all, and write_paths confines them.
EDIT_TOOLS: tuple[str, ...] = names_with(lambda cls: cls.edits_files)
#: Tools whose permission target is a workspace path, matched by rules as a path glob.
PATH_TOOLS: tuple[str, ...] = names_with(lambda cls: cls.path_target)
#: Tools whose result shows a file's text: a `Read(...)` deny rule stops them too.
FILE_SHOWING_TOOLS: tuple[str, ...] = names_with(lambda cls: cls.shows_file)

# Other assistants' names for our tools (after lower-casing and dropping `_`, `-`, spaces).
# Claude Code 2.1 calls its Task tool `Agent`.
_ALIASES: dict[str, str] = {
    "list": "LS",
    "listdir": "LS",
    "multiedits": "MultiEdit",
    "todo": "TodoWrite",
    "agent": "Task",
    "taskstop": "TaskCancel",  # Claude Code's names for reading and stopping background commands
    "killshell": "TaskCancel",
    "killbash": "TaskCancel",
    "bashoutput": "TaskOutput",
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.strip().lower() if ch not in "_- ")


def canonical_tool_name(name: str) -> str | None:
    """Our name for `name`, case-insensitively (`read` → `Read`, `multi_edit` → `MultiEdit`), or None.

    Task, TaskOutput, TaskCancel, SendMessage and ListAgents are known names (`KNOWN_TOOL_NAMES`), though
    `build_tools` cannot build them.
    """
    key = _key(name)
    if not key:
        return None
    for known in KNOWN_TOOL_NAMES:
        if _key(known) == key:
            return known
    alias = _ALIASES.get(key)
    return alias if alias in KNOWN_TOOL_NAMES else None


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
        if canonical is None or canonical not in ALL_TOOLS:  # the Task tools are built by the subagent layer
            unknown.append(name)
        else:
            wanted.add(canonical)
    if unknown:
        raise ValueError(f"Unknown tool(s): {', '.join(unknown)}. Known: {', '.join(ALL_TOOLS)}")
    return [cls() for name, cls in ALL_TOOLS.items() if name in wanted]
