"""Agent types a program defines (`--agents` JSON, or `initialize`'s `agents`), in Claude Code's shape
`{name: {description, prompt, tools?, disallowedTools?, model?, maxTurns?}}`: read like a Claude Code agent file
of the person's (the program is theirs), they join the session's types and win over a type of the same name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentcli.subagents import AgentFileError, AgentRegistry, AgentType, agent_from_front_matter


def define_agents(registry: AgentRegistry, definitions: object, *, source: str, aliases: Iterable[str]
                  ) -> list[str]:
    """Add the definitions to `registry`; one line per definition that was skipped (and why), or warned about."""
    if not isinstance(definitions, dict):
        return [f"{source}: agents must be an object of name -> definition"]
    notes: list[str] = []
    for name, raw in definitions.items():
        if not isinstance(raw, dict):
            notes.append(f"{source}: agent {name!r} is not an object; skipped")
            continue
        data: dict[str, Any] = {k: v for k, v in raw.items() if k != "prompt" and v is not None}
        data["name"] = name
        try:
            agent = agent_from_front_matter(data, str(raw.get("prompt") or ""), stem=str(name), scope="user",
                                            file_format="claude", aliases=tuple(aliases), source=source)
        except AgentFileError as exc:
            notes.append(f"{source}: agent {name!r} skipped: {exc}")
            continue
        notes += [f"{source}: agent {name!r}: {w}" for w in agent.warnings]
        define(registry, agent)
    return notes


def define(registry: AgentRegistry, agent: AgentType) -> None:
    """One program-defined type: it replaces a type of the same name (which is listed as shadowed)."""
    if (old := registry.types.get(agent.name)) is not None:
        registry.shadowed.append(old)
    registry.types[agent.name] = agent
