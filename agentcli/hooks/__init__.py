"""Hooks in Claude Code's format: commands the person configures to run at points of a session.

`settings` reads them (the agentcli config's `[hooks]`, `~/.claude/settings.json`, and a trusted
project's `.claude/settings.json` / `.claude/settings.local.json`), `process` runs one command
(JSON on stdin, a time limit, its process group killed), and `engine` turns what the commands
said into decisions the loop, the runner and the conversation act on, reporting each run as a
`HookRunEvent`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.hooks.engine import HookEngine, Hooks, HookVerdict
    from agentcli.hooks.process import run_command
    from agentcli.hooks.settings import (
        HOOK_EVENTS,
        HookCommand,
        HookConfig,
        add_hooks,
        add_plugin_hooks,
        load_hooks,
        project_hooks,
    )

__all__ = [
    "HOOK_EVENTS",
    "HookCommand",
    "HookConfig",
    "HookEngine",
    "HookVerdict",
    "Hooks",
    "add_hooks",
    "add_plugin_hooks",
    "load_hooks",
    "project_hooks",
    "run_command",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.hooks.engine": ["HookEngine", "HookVerdict", "Hooks"],
    "agentcli.hooks.process": ["run_command"],
    "agentcli.hooks.settings": ["HOOK_EVENTS", "HookCommand", "HookConfig", "add_hooks", "add_plugin_hooks",
                                "load_hooks", "project_hooks"],
})
