"""Toolbox: the tools the agents of one session tree are built from (injected by the composition root)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentcli.tools.base import Tool


@dataclass(frozen=True, slots=True)
class Toolbox:
    """Tool classes by name (their traits decide confinement) and fresh instances of them.

    The Task tools are not in it: they are bound to the runner and to one agent (`task_tool.task_tools`).
    """

    classes: Mapping[str, type[Tool[Any]]]

    @classmethod
    def builtin(cls) -> Toolbox:
        """Every built-in tool (`agentcli.tools.registry.ALL_TOOLS`)."""
        from agentcli.tools.registry import ALL_TOOLS

        return cls(ALL_TOOLS)

    def build(self, names: Iterable[str] | None = None) -> list[Tool[Any]]:
        """Fresh instances of the named tools (all when None), in the toolbox's order; unknown names are skipped."""
        wanted = None if names is None else set(names)
        return [tool() for name, tool in self.classes.items() if wanted is None or name in wanted]
