"""Plugins a driving program names after the session was built (the TypeScript Claude Agent SDK's `initialize`
`plugins`, its stdin form of `--plugin-dir`): read and joined to the session before its first turn, as they would
have been from the command line."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.hooks import add_plugin_hooks
from agentcli.plugins import Plugin, PluginError, read_plugin
from agentcli.subagents import Problem, plugin_agents, skill_tool_class

if TYPE_CHECKING:
    from agentcli.conversation.root import Conversation


def add_plugins(conversation: Conversation, folders: Iterable[str]) -> list[str]:
    """Load the plugin folders not loaded yet; their agents, skills, hooks, MCP and language servers join the session.
    One line per folder or file that could not be loaded."""
    loaded = {plugin.root for plugin in conversation.plugins.plugins}
    problems: list[str] = []
    added: list[Plugin] = []
    for number, folder in enumerate(folders):
        path = Path(folder).expanduser()
        path = path if path.is_absolute() else conversation.workspace / path
        try:
            plugin = read_plugin(path, scope="session", plugin_id=folder)
        except PluginError as exc:
            problems.append(str(exc))
            kind = "manifest-validation-error" if path.exists() else "path-not-found"
            conversation.plugins.fail(f"inline[{number}]", kind, str(exc), path)
            continue
        if plugin.root not in loaded and conversation.plugins.add(plugin):
            added.append(plugin)
            loaded.add(plugin.root)
    skipped: list[Problem] = []
    for agent in plugin_agents(added, tuple(conversation.settings.models.aliases), skipped):
        conversation.registry.types.setdefault(agent.name, agent)
    conversation.skills.add_plugins(added)
    if added and (tool := skill_tool_class(conversation.skills)) is not None:
        conversation.toolbox.replace(tool)  # in its place: its listing now names the plugins' skills
    add_plugin_hooks(conversation.hooks.config, added)
    conversation.servers.mcp.add_plugin_servers(added)
    conversation.runner.kit.lsp.add_plugin_servers(added)
    return problems + [f"{p.path}: {p.reason}" for p in skipped]
