"""Toolbox: the tools the agents of one session tree are built from (injected by the composition root)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentcli.tools import Tool


@dataclass(frozen=True, slots=True)
class Toolbox:
    """Tool classes by name (their traits decide confinement) and fresh instances of them.

    The Task tools are not in it: they are bound to the runner and to one agent (`task_tool.task_tools`).
    """

    classes: Mapping[str, type[Tool[Any]]]

    @classmethod
    def builtin(cls) -> Toolbox:
        """Every built-in tool (`agentcli.tools.registry.ALL_TOOLS`), in a mapping of its own (`add` grows it)."""
        from agentcli.tools import ALL_TOOLS

        return cls(dict(ALL_TOOLS))

    def add(self, tools: Iterable[type[Tool[Any]]]) -> None:
        """Add tool classes that became available during the session (an MCP server's, once it runs)."""
        if not isinstance(self.classes, dict):
            raise TypeError("this toolbox's classes cannot grow")
        for tool in tools:
            self.classes.setdefault(tool.name, tool)

    def replace(self, tool: type[Tool[Any]]) -> None:
        """Put `tool` in the place of the class of its name (at the end when there is none)."""
        if not isinstance(self.classes, dict):
            raise TypeError("this toolbox's classes cannot change")
        self.classes[tool.name] = tool

    def drop(self, name: str) -> None:
        """Take a tool the session cannot run out of the toolbox (WebSearch without a backend)."""
        if not isinstance(self.classes, dict):
            raise TypeError("this toolbox's classes cannot change")
        self.classes.pop(name, None)

    def build(self, names: Iterable[str] | None = None) -> list[Tool[Any]]:
        """Fresh instances of the named tools (all when None), in the toolbox's order; unknown names are skipped."""
        wanted = None if names is None else set(names)
        return [tool() for name, tool in self.classes.items() if wanted is None or name in wanted]


def deferred_line(defer: str | list[str]) -> str:
    """`config show`'s line: which tools `[tools] defer` names in ToolSearch's list instead of sending them."""
    from agentcli.subagents.messaging.tools import ListAgentsTool, SendMessageTool
    from agentcli.subagents.task_tool import TASK_TOOL_CLASSES
    from agentcli.tools import ALL_TOOLS, defer_rule

    deferred = defer_rule(defer)
    classes: list[Any] = [*ALL_TOOLS.values(), *TASK_TOOL_CLASSES.values(), SendMessageTool, ListAgentsTool]
    names = [cls.name for cls in classes if deferred(cls)]  # the rule reads class traits alone
    if defer == "auto":
        names.append("MCP tools")
    elif not isinstance(defer, str):
        names += [name for name in defer if name.endswith("*")]
    return f"[tools] deferred (loaded through ToolSearch): {', '.join(names) or 'none'}"
