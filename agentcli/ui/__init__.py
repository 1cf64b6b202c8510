"""The interactive Textual TUI (`agentcli` with no command); imported lazily, never by the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.ui.app import AgentApp
    from agentcli.ui.commands import COMMANDS
    from agentcli.ui.launch import run_tui

__all__ = [
    "COMMANDS",
    "AgentApp",
    "run_tui",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.ui.app": ["AgentApp"],
    "agentcli.ui.commands": ["COMMANDS"],
    "agentcli.ui.launch": ["run_tui"],
})
