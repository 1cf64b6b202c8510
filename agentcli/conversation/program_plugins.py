"""Plugins that join a session after it was built: those a driving program names (the TypeScript Claude Agent SDK's
`initialize` `plugins`, its stdin form of `--plugin-dir`), read and joined before its first turn as they would have
been from the command line; and those the person installs or enables in the TUI (`/plugin`), joined at once.

A plugin joining a running session brings its commands, hooks, agents, skills, MCP servers (started with the next
turn) and language servers. The main agent's request keeps its shape (its cache stays served): the Task and Skill
listings name the new agents and skills from the next session (`/clear`), and until then the model is told of them
with the next prompt.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.hooks import add_plugin_hooks
from agentcli.plugins import Plugin, PluginError, read_plugin, session_plugins
from agentcli.subagents import Problem, plugin_agents, skill_tool_class

if TYPE_CHECKING:
    from agentcli.conversation.root import Conversation


def add_plugins(conversation: Conversation, folders: Iterable[str]) -> list[str]:
    """Load the plugin folders not loaded yet; their agents, skills, hooks, MCP and language servers join the session.
    One line per folder or file that could not be loaded."""
    loaded = {plugin.root for plugin in conversation.plugins.plugins}
    problems: list[str] = []
    found: list[Plugin] = []
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
        if plugin.root not in loaded:
            found.append(plugin)
            loaded.add(plugin.root)
    return problems + join_plugins(conversation, found)[1]


def join_plugins(conversation: Conversation, plugins: Iterable[Plugin]) -> tuple[list[Plugin], list[str]]:
    """Join plugins read already to the session (one of a name loaded already is not): those joined, and one line
    per part that could not be."""
    added = [plugin for plugin in plugins if conversation.plugins.add(plugin)]
    skipped: list[Problem] = []
    for agent in plugin_agents(added, tuple(conversation.settings.models.aliases), skipped):
        conversation.registry.types.setdefault(agent.name, agent)
    conversation.skills.add_plugins(added)
    if added and (tool := skill_tool_class(conversation.skills)) is not None:
        conversation.toolbox.replace(tool)  # in its place: its listing now names the plugins' skills
    add_plugin_hooks(conversation.hooks.config, added)
    conversation.servers.mcp.add_plugin_servers(added)
    conversation.runner.kit.lsp.add_plugin_servers(added)
    return added, [f"{p.path}: {p.reason}" for p in skipped]


def join_enabled(conversation: Conversation, plugin_id: str) -> tuple[Plugin | None, list[str]]:
    """After the person installed or turned on `plugin_id`: it joins the session when this workspace's sessions now
    load it (trust and every settings file as when the session opened). The plugin joined (None: it is not loaded
    here) and what could not be loaded of it. Once the main agent is built, the model is told of its agents and
    skills with the next prompt."""
    from agentcli.tools import SKILL_TOOL_NAME

    fresh = session_plugins(conversation.workspace, enabled=conversation.settings.plugins.enabled)
    told = len(conversation.plugins.problems)
    skills = SKILL_TOOL_NAME in conversation.toolbox.classes and conversation.person_settings.offers(SKILL_TOOL_NAME)
    joined, skipped = join_plugins(conversation, [p for p in fresh.plugins if p.plugin_id == plugin_id])
    problems = [line for line in fresh.problems if plugin_id in line and line not in conversation.plugins.problems]
    problems += [*conversation.plugins.problems[told:], *skipped]
    if joined and conversation.started and (note := _news(conversation, joined, skills=skills)):
        conversation.prompt_hooks.for_model.append(note)
    return (joined[0] if joined else None), list(dict.fromkeys(problems))


def _news(conversation: Conversation, joined: list[Plugin], *, skills: bool) -> str:
    """What the model is told of plugins that joined mid-session: their agent types and skills, by name."""
    prefixes = tuple(f"{plugin.name}:" for plugin in joined)
    agents = sorted(name for name in conversation.registry.types if name.startswith(prefixes))
    names = sorted(s.name for s in conversation.skills.for_model() if s.name.startswith(prefixes)) if skills else []
    if not agents and not names:
        return ""
    parts = [f"subagent types for Task's subagent_type: {', '.join(agents)}" if agents else "",
             f"skills to load with Skill: {', '.join(names)}" if names else ""]
    plugins = ", ".join(plugin.name for plugin in joined)
    return f"The person turned on the plugin(s) {plugins} in this session. Now available: " + "; ".join(
        part for part in parts if part) + "."
