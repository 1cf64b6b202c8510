"""What a plugin arms, in lines for the person to agree to: every hook command it would run, every MCP server
it would start or reach and every language server it would start, as written (`${CLAUDE_PLUGIN_ROOT}` is its
folder); and what else it brings (commands, agents and skills are text for the model, whose tool calls are asked
about as they run)."""

from __future__ import annotations

from pathlib import Path

from agentcli.plugins.manifest import Plugin
from agentcli.text import one_line, terminal_safe


def armed(plugin: Plugin) -> list[str]:
    """One line per hook command, MCP server and language server, terminal-safe."""
    lines: list[str] = []
    for event, groups in plugin.hooks.items():
        for group in groups if isinstance(groups, list) else []:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            matcher = group.get("matcher") if isinstance(group, dict) else None
            for hook in hooks if isinstance(hooks, list) else []:
                command = hook.get("command") if isinstance(hook, dict) else None
                if isinstance(command, str):
                    on = f" ({one_line(str(matcher), 40)})" if matcher not in (None, "", "*") else ""
                    lines.append(f"hook {one_line(event, 40)}{on}: {one_line(command, 300)}")
    for name, server in plugin.servers.items():
        if not isinstance(server, dict):
            continue
        if isinstance(server.get("url"), str):
            target = server["url"]
        else:
            args = server.get("args")
            parts = [server.get("command", ""), *(args if isinstance(args, list) else [])]
            target = " ".join(str(part) for part in parts)
        lines.append(f"MCP server {plugin.server_name(str(name))}: {one_line(target, 300)}{_given(server)}")
    for name, server in plugin.language_servers.items():  # shapes checked when read
        command = " ".join([server["command"], *server.get("args", [])])
        lines.append(f"language server {plugin.server_name(str(name))}: {one_line(command, 300)}{_given(server)}")
    return [terminal_safe(line) for line in lines]


def armed_marked(plugin: Plugin, before: list[str] | None) -> list[str]:
    """`armed(plugin)`, each line the copy it replaces did not arm (`before`) marked `(new) `; unmarked without
    `before`."""
    return [f"{'(new) ' if before is not None and line not in before else ''}{line}" for line in armed(plugin)]


def _given(server: dict[str, object]) -> str:
    """` (env: A=…, B=…; headers: X)`: the variables and headers a server is given, by name and value (a value such
    as NODE_OPTIONS changes what the command runs); empty when none."""
    parts = []
    for key in ("env", "headers"):
        given = server.get(key)
        if isinstance(given, dict) and given:
            parts.append(f"{key}: " + ", ".join(f"{one_line(str(k), 40)}={one_line(str(v), 80)}"
                                                for k, v in given.items()))
    return f" ({'; '.join(parts)})" if parts else ""


def _count(places: tuple[Path, ...], pattern: str) -> int:
    return sum(len(list(place.rglob(pattern))) if place.is_dir() else 1 for place in places)


def brings(plugin: Plugin) -> str:
    """`2 commands, 1 agent, 1 skill` (what it brings besides hooks and servers)."""
    counts = (("command", _count(plugin.commands, "*.md")), ("agent", _count(plugin.agents, "*.md")),
              ("skill", _count(plugin.skills, "SKILL.md")))
    return ", ".join(f"{n} {noun}{'s' if n != 1 else ''}" for noun, n in counts)
