"""Tool traits are the one definition: every set of tool names is read off the classes, and the
Task tools' names, which tools/ knows without their classes, match the classes of the subagent layer."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

from agentcli.subagents import task_tool
from agentcli.subagents.definitions import agent_files
from agentcli.tools import registry
from agentcli.tools.base import Tool
from agentcli.tools.permissions.rules import PermissionRule
from tests import test_layers

PACKAGE = Path(registry.__file__).resolve().parent.parent  # agentcli/


def task_tool_classes() -> list[type[Tool[Any]]]:
    """Every Tool class defined in `agentcli.subagents.task_tool`, in definition order."""
    found = [
        obj
        for _, obj in inspect.getmembers(task_tool, inspect.isclass)
        if issubclass(obj, Tool) and obj.__module__ == task_tool.__name__
    ]
    return sorted(found, key=lambda cls: inspect.getsourcelines(cls)[1])


def test_name_sets_follow_the_traits() -> None:
    assert set(registry.READ_ONLY_TOOLS) == {"LS", "Glob", "Grep", "Read", "TodoWrite", "LSP", "AskUserQuestion"}
    assert registry.EDIT_TOOLS == ("Write", "Edit", "MultiEdit", "NotebookEdit")
    assert set(registry.PATH_TOOLS) == {"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "LS", "LSP"}
    assert set(registry.FILE_SHOWING_TOOLS) == {"Read", "Edit", "MultiEdit", "NotebookEdit", "LSP"}
    assert set(agent_files.WRITE_TOOLS) == {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"}
    assert agent_files.all_tool_names() == (
        *registry.ALL_TOOLS, "Task", "TaskOutput", "TaskCancel", "SendMessage", "ListAgents")
    for name, cls in registry.ALL_TOOLS.items():
        assert cls.name == name
        assert not (cls.read_only and cls.mutating), name
        assert cls.mutating or not cls.edits_files, name  # a tool that writes files needs permission


def test_a_new_trait_value_changes_the_derived_set(monkeypatch: Any) -> None:
    monkeypatch.setattr(registry.ALL_TOOLS["Glob"], "path_target", True)
    assert "Glob" in registry.names_with(lambda cls: cls.path_target)


def test_task_tool_classes_match_the_names_tools_knows() -> None:
    classes = task_tool_classes()
    assert tuple(cls.name for cls in classes) == registry.TASK_TOOL_NAMES
    assert not set(registry.TASK_TOOL_NAMES) & set(registry.ALL_TOOLS)
    for cls in classes:
        # tools/ derives its sets without these classes: none may carry a trait those sets are read from.
        assert not (cls.read_only or cls.mutating or cls.edits_files or cls.path_target or cls.shows_file), cls
        assert cls.own_time_limit and cls.concurrency_safe, cls
        assert registry.canonical_tool_name(cls.name.lower()) == cls.name


def test_message_tool_classes_match_the_names_tools_knows() -> None:
    from agentcli.subagents.messaging import tools as message_tools

    classes = [message_tools.SendMessageTool, message_tools.ListAgentsTool]
    assert tuple(cls.name for cls in classes) == registry.MESSAGE_TOOL_NAMES
    assert all(cls.every_agent and not cls.mutating for cls in classes)
    assert [registry.canonical_tool_name(name.lower()) for name in registry.MESSAGE_TOOL_NAMES] == list(
        registry.MESSAGE_TOOL_NAMES)


def test_permission_rules_use_the_trait_sets() -> None:
    edit_rule = PermissionRule.parse("edit(src/**)")
    assert [name for name in registry.ALL_TOOLS if edit_rule.covers(name)] == list(registry.EDIT_TOOLS)
    read_rule = PermissionRule.parse("Read(secret/**)")
    assert [name for name in registry.ALL_TOOLS if read_rule.denies(name)] == ["Read", "Edit", "MultiEdit",
                                                                                "NotebookEdit", "LSP"]


def _literal_name_sets(path: Path) -> list[tuple[int, list[str]]]:
    """Tuple, list and set literals of two or more tool names in one source file."""
    names = set(registry.KNOWN_TOOL_NAMES)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 2:
            values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(values) == len(node.elts) and all(isinstance(v, str) and v in names for v in values):
                found.append((node.lineno, [str(v) for v in values]))
    return found


# The one definition of the Task tools' names, and opencode's `edit` (a name mapping of that format).
_ALLOWED_LITERALS = {("tools/registry.py", ("Task", "TaskOutput", "TaskCancel")),
                     ("tools/registry.py", ("SendMessage", "ListAgents"))}


def test_no_set_of_tool_names_is_written_out_in_tools_or_agent_files() -> None:
    files = [*sorted((PACKAGE / "tools").rglob("*.py")), PACKAGE / "subagents" / "definitions" / "agent_files.py",
             PACKAGE / "subagents" / "definitions" / "registry.py", PACKAGE / "cli" / "agents.py"]
    written = [
        f"{path.relative_to(PACKAGE)}:{line} {values}"
        for path in files
        for line, values in _literal_name_sets(path)
        if (path.relative_to(PACKAGE).as_posix(), tuple(values)) not in _ALLOWED_LITERALS
    ]
    assert not written, "derive these from the tool traits (agentcli.tools.registry): " + "; ".join(written)


def test_no_import_cycle_inside_tools() -> None:
    edges = test_layers.graph()
    inside = {m: {t for t in targets if t.startswith("agentcli.tools.")}
              for m, targets in edges.items() if m.startswith("agentcli.tools.")}
    assert test_layers.cycles(inside) == []
    upward = [line for line in test_layers.violations(edges) if line.startswith("agentcli.tools.")]
    assert upward == []
