"""Subagent types: the built-in ones plus those defined in agent files, and lookup by name.

Folders, highest precedence first (a same-named definition higher up replaces a lower one, which
is kept in `AgentRegistry.shadowed`):

project (the workspace):
  1. `<ws>/.agentcli/agents/*.md`       agentcli format
  2. `<ws>/.claude/agents/*.md`         Claude Code format
  3. `<ws>/.opencode/agents/*.md`, then `<ws>/.opencode/agent/*.md`   opencode format
  4. the `agent` entries of `<ws>/opencode.json` (or `opencode.jsonc`)   opencode format
  5. `<ws>/.codex/agents/**/*.toml`     Codex format
  6. `<ws>/.gemini/agents/*.md`         Gemini CLI format (files starting with `_` skipped)
  7. `<ws>/.qwen/agents/*.md`           Qwen Code format
user:
  8. `$XDG_CONFIG_HOME/agentcli/agents/*.md` (default `~/.config/agentcli/agents`)
  9. `~/.claude/agents/*.md`
  10. `$XDG_CONFIG_HOME/opencode/agents/*.md`, then `.../opencode/agent/*.md`, then the `agent` entries of
      `$XDG_CONFIG_HOME/opencode/opencode.json`
  11. `$CODEX_HOME/agents/**/*.toml` (default `~/.codex/agents`), `~/.gemini/agents/*.md`, `~/.qwen/agents/*.md`
built-in: general, explore, plan, summary.
plugins (`agentcli.plugins`): each loaded plugin's `agents/*.md` (Claude Code format), named `plugin:agent`.

Other tools' formats are read by `agentcli.subagents.definitions.foreign_agents`.

Within one folder, files are read in name order and the first definition of a name wins. A folder
reached twice (the workspace is the home directory) is read once. A project folder that resolves
outside the workspace, and a project agent file that is a symlink leaving its folder, are skipped
with a reason (a cloned repository cannot make agentcli read `~/.ssh/...` or `/etc/passwd`).

A type whose own tools cannot write is read-only even with the Task tool: the runner confines every
subagent below it to read-only tools (see `SubagentRunner`), so every type it can reach is read-only.
The file formats and their parsing live in `agentcli.subagents.definitions.agent_files`.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agentcli.prompts import load_prompt
from agentcli.subagents.definitions.agent_files import (
    DEFAULT_ALIASES,
    AgentType,
    FileFormat,
    Scope,
    parse_agent_file,
)
from agentcli.subagents.definitions.catalog import (
    FolderGate,
    FolderScope,
    Place,
    Problem,
    Root,
    folders,
    keep_first,
    resolved,
    user_home,
)
from agentcli.subagents.definitions.foreign_agents import (
    opencode_config_agents,
    parse_codex_agent,
    parse_markdown_agent,
)
from agentcli.subagents.definitions.front_matter import AgentFileError
from agentcli.tools import MESSAGE_TOOL_NAMES, READ_ONLY_TOOLS

if TYPE_CHECKING:
    from agentcli.plugins import Plugin

__all__ = ["AgentRegistry", "AgentType", "Fallback", "Problem", "agent_folders", "builtin_types"]

Fallback = Literal["error", "normalize", "best_match"]

# Names other assistants' models use for our built-ins (after normalisation): Claude Code's
# `general-purpose` and its `Explore`/`Plan` (the latter two already normalise to ours).
_BUILTIN_ALIASES = {"generalpurpose": "general"}

_STOPWORDS = frozenset(
    {
        "a", "an", "and", "agent", "agents", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
        "of", "on", "or", "subagent", "that", "the", "this", "to", "use", "when", "with", "you", "your", "task",
        "tasks",
    }
)  # fmt: skip
_WORD = re.compile(r"[a-z0-9]+")
_NAME_RATIO = 0.8  # difflib ratio of the query to a type's name that counts as a match
_TOKEN_SHARE = 0.5  # share of the query's words found in a type's name + description


#: The read-only built-in types' tools: the read-only tools and the messaging tools every agent of a tree may have.
READ_ONLY_AGENT: tuple[str, ...] = (*READ_ONLY_TOOLS, *MESSAGE_TOOL_NAMES)


def builtin_types() -> list[AgentType]:
    """general, explore, plan and summary, with their bundled role prompts."""

    def prompt(name: str) -> str:
        return load_prompt(f"subagents/{name}.md").strip()

    return [
        AgentType(
            name="general",
            description="General-purpose agent for multi-step work: research, edits and commands.",
            prompt=prompt("general"),
            tools=None,
            model="inherit",
        ),
        AgentType(
            name="explore",
            description=(
                "Fast read-only agent for finding code: searches files by name and content, reads them and "
                "reports where things are as path:line. Use it to answer where or how something is "
                "implemented without filling your own context."
            ),
            prompt=prompt("explore"),
            tools=READ_ONLY_AGENT,
            model="light",
        ),
        AgentType(
            name="plan",
            description=(
                "Read-only planning agent: investigates the code and returns a step-by-step implementation "
                "plan naming the files and functions to change. Use it before a non-trivial change."
            ),
            prompt=prompt("plan"),
            tools=READ_ONLY_AGENT,
            model="main",
        ),
        AgentType(
            name="summary",
            description=(
                "Read-only agent that condenses files, logs or long command output into a short summary "
                "of what matters. Use it to digest large material cheaply."
            ),
            prompt=prompt("summary"),
            tools=READ_ONLY_AGENT,
            model="light",
        ),
    ]


def _xdg_config(env: Mapping[str, str], home: Path) -> Path:
    value = env.get("XDG_CONFIG_HOME", "")
    return Path(value) if value and Path(value).is_absolute() else home / ".config"


#: The agent-file folders with their scope and format, highest precedence first (module docstring).
AGENT_PLACES: tuple[Place[FileFormat], ...] = (
    Place("workspace", ".agentcli/agents", "project", "agentcli"),
    Place("workspace", ".claude/agents", "project", "claude"),
    Place("workspace", ".opencode/agents", "project", "opencode"),
    Place("workspace", ".opencode/agent", "project", "opencode"),
    Place("workspace", ".codex/agents", "project", "codex"),
    Place("workspace", ".gemini/agents", "project", "gemini"),
    Place("workspace", ".qwen/agents", "project", "qwen"),
    Place("xdg", "agentcli/agents", "user", "agentcli"),
    Place("home", ".claude/agents", "user", "claude"),
    Place("xdg", "opencode/agents", "user", "opencode"),
    Place("xdg", "opencode/agent", "user", "opencode"),
    Place("codex_home", "agents", "user", "codex"),
    Place("home", ".gemini/agents", "user", "gemini"),
    Place("home", ".qwen/agents", "user", "qwen"),
)


def agent_folders(workspace: Path, env: Mapping[str, str], home: Path) -> list[tuple[Path, FolderScope, FileFormat]]:
    """Every agent-file folder with its scope and format, highest precedence first."""
    codex_home = Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else home / ".codex"
    roots: dict[Root, Path] = {"workspace": workspace, "home": home, "xdg": _xdg_config(env, home),
                               "codex_home": codex_home}
    return folders(AGENT_PLACES, roots)


def opencode_configs(workspace: Path, env: Mapping[str, str], home: Path) -> dict[Path, tuple[Scope, Path]]:
    """opencode's config files whose `agent` entries are subagents, keyed by the agent folder they follow
    (their place in the precedence), with their scope."""
    xdg = _xdg_config(env, home)
    configs: dict[Path, tuple[Scope, Path]] = {}
    for folder, scope, base in ((workspace / ".opencode" / "agent", "project", workspace),
                                (xdg / "opencode" / "agent", "user", xdg / "opencode")):
        for name in ("opencode.json", "opencode.jsonc"):
            if (base / name).is_file():
                configs[folder] = ("project" if scope == "project" else "user", base / name)
                break
    return configs


def _files(folder: Path, file_format: FileFormat) -> list[Path]:
    """The agent files of one folder, in name order (Codex's folders recursively, as Codex reads them)."""
    if file_format == "codex":
        return sorted(p for p in folder.rglob("*.toml") if not p.name.startswith(".") and p.is_file())
    files = sorted(p for p in folder.glob("*.md") if not p.name.startswith(".") and p.is_file())
    if file_format == "gemini":
        files = [p for p in files if not p.name.startswith("_")]
    return files


def _read_folder(
    gate: FolderGate[FileFormat],
    folder: Path,
    scope: FolderScope,
    file_format: FileFormat,
    aliases: tuple[str, ...] | None,
    problems: list[Problem],
) -> list[AgentType]:
    """The agents of one folder (each folder once; a project's only inside the workspace); skipped files noted."""
    try:
        admitted = gate.admit(folder, scope, folder.resolve())
        if admitted is None:
            return []
        files = _files(folder, file_format)
    except (OSError, RuntimeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        problems.append(Problem(str(folder), f"cannot list the folder: {why}"))
        return []
    agents: list[AgentType] = []
    for path in files:
        try:
            if admitted.confine is not None:
                _inside(path, admitted.confine)
            agents.append(_parse(path, scope, file_format, aliases))
        except AgentFileError as exc:
            problems.append(Problem(str(path), str(exc)))
    return agents


def _read_opencode_config(
    config: Path, scope: Scope, aliases: tuple[str, ...] | None, real_workspace: Path, problems: list[Problem]
) -> list[AgentType]:
    """The agents of an opencode config file; a project's must be inside the workspace, and so must the prompt
    files it names."""
    root = real_workspace if scope == "project" else None
    if root is not None:
        real = resolved(config)
        if real is None or not real.is_relative_to(root):
            problems.append(Problem(str(config), f"a symlink that leaves the workspace (to {real}); not followed"))
            return []
    names = DEFAULT_ALIASES if aliases is None else aliases
    agents, skipped = opencode_config_agents(config, scope=scope, aliases=names, root=root)
    problems += [Problem(source, reason) for source, reason in skipped]
    return agents


def _parse(path: Path, scope: Scope, file_format: FileFormat, aliases: tuple[str, ...] | None) -> AgentType:
    names = DEFAULT_ALIASES if aliases is None else aliases
    if file_format == "codex":
        return parse_codex_agent(path, scope=scope, aliases=names)
    if file_format in ("gemini", "qwen"):
        return parse_markdown_agent(path, scope=scope, file_format=file_format, aliases=names)
    return parse_agent_file(path, scope=scope, file_format=file_format, aliases=aliases)


def _inside(path: Path, real_folder: Path) -> None:
    """Refuse an agent file that is a symlink leaving its (resolved) folder."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise AgentFileError(f"cannot resolve the file: {getattr(exc, 'strerror', None) or exc}") from exc
    if not target.is_relative_to(real_folder):
        raise AgentFileError(f"a symlink that leaves the agent folder (to {target}); not followed")


def plugin_agents(plugins: Iterable[Plugin], aliases: tuple[str, ...] | None,
                  problems: list[Problem]) -> list[AgentType]:
    """The agents of plugins (Claude Code's format), each named `plugin:name`; a file leaving its plugin is skipped."""
    agents: list[AgentType] = []
    for plugin in plugins:
        for place in plugin.agents:
            files = _files(place, "claude") if place.is_dir() else [place]
            for path in files:
                try:
                    _inside(path, plugin.root)
                    agent = _parse(path, "user", "claude", aliases)
                except AgentFileError as exc:
                    problems.append(Problem(str(path), str(exc)))
                    continue
                agents.append(replace(agent, name=f"{plugin.name}:{agent.name}"))
    return agents


def _normal(name: str) -> str:
    return "".join(ch for ch in name.strip().lower() if ch not in "_- ")


def _stem(word: str) -> str:
    for suffix in ("ing", "ers", "er", "es", "ed", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2]:
        word = word[:-1]  # planning → plann → plan
    return word


def _words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


class AgentRegistry:
    """The effective subagent types of a workspace, the files skipped and the definitions shadowed."""

    def __init__(
        self,
        types: Iterable[AgentType],
        problems: Iterable[Problem] = (),
        shadowed: Iterable[AgentType] = (),
    ) -> None:
        self.types: dict[str, AgentType] = {t.name: t for t in types}
        self.problems: list[Problem] = list(problems)
        self.shadowed: list[AgentType] = list(shadowed)

    @classmethod
    def builtins(cls) -> AgentRegistry:
        """Only the built-in types."""
        return cls(builtin_types())

    @classmethod
    def load(
        cls,
        workspace: Path,
        *,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        aliases: Mapping[str, str] | None = None,
        plugins: Iterable[Plugin] = (),
    ) -> AgentRegistry:
        """Built-ins plus every agent file of the workspace and the user (see the module docstring), then the
        plugins' agents, named `plugin:agent`."""
        env = os.environ if env is None else env
        home = user_home(env, home)
        alias_names = tuple(aliases) if aliases is not None else None
        found: dict[str, AgentType] = {}
        problems: list[Problem] = []
        shadowed: list[AgentType] = []
        gate = FolderGate(workspace, agent_folders(workspace, env, home), "agent", problems)
        configs = opencode_configs(workspace, env, home)
        for folder, scope, file_format in gate.folders:
            agents = _read_folder(gate, folder, scope, file_format, alias_names, problems)
            if folder in configs:  # opencode.json's agents come right after opencode's agent folders
                config_scope, config = configs[folder]
                agents += _read_opencode_config(config, config_scope, alias_names, gate.real_workspace, problems)
            for agent in agents:
                keep_first(found, shadowed, agent.name, agent)
        for agent in plugin_agents(plugins, alias_names, problems):
            keep_first(found, shadowed, agent.name, agent)
        types: list[AgentType] = []
        for builtin in builtin_types():
            if builtin.name in found:
                shadowed.append(builtin)
                types.append(found.pop(builtin.name))
            else:
                types.append(builtin)
        types += [found[name] for name in sorted(found)]
        return cls(types, problems, shadowed)

    def names(self) -> list[str]:
        """The effective type names, built-ins first."""
        return list(self.types)

    def get(self, name: str) -> AgentType | None:
        """The type of exactly this name."""
        return self.types.get(name)

    def normalize(self, name: str) -> AgentType | None:
        """Case/space/underscore/hyphen-insensitive lookup: `Explore` → explore, `code_reviewer` → code-reviewer."""
        exact = self.types.get(name)
        if exact is not None:
            return exact
        key = _normal(name)
        if not key:
            return None
        for agent in self.types.values():
            if _normal(agent.name) == key:
                return agent
        alias = _BUILTIN_ALIASES.get(key)
        return self.types.get(alias) if alias else None

    def best_match(self, query: str) -> AgentType | None:
        """The type whose name or description fits `query` best; None when nothing fits well or two tie."""
        wanted = _words(query)
        key = _normal(query)
        if not wanted and not key:
            return None
        scored: list[tuple[float, float, AgentType]] = []
        for agent in self.types.values():
            ratio = difflib.SequenceMatcher(None, key, _normal(agent.name)).ratio() if key else 0.0
            share = len(wanted & _words(f"{agent.name} {agent.description}")) / len(wanted) if wanted else 0.0
            score = max(ratio if ratio >= _NAME_RATIO else 0.0, share if share >= _TOKEN_SHARE else 0.0)
            if score > 0:
                scored.append((score, ratio + share, agent))
        if not scored:
            return None
        scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
        if len(scored) > 1 and scored[0][:2] == scored[1][:2]:
            return None
        return scored[0][2]

    def resolve(self, name: str, fallback: Fallback) -> AgentType | None:
        """Exact name, then (unless `error`) the normalised name, then (for `best_match`) the best match."""
        agent = self.types.get(name)
        if agent is None and fallback != "error":
            agent = self.normalize(name)
        if agent is None and fallback == "best_match":
            agent = self.best_match(name)
        return agent

    def with_warnings(self) -> list[AgentType]:
        """Loaded definitions (effective or shadowed) that carry warnings."""
        return [t for t in (*self.types.values(), *self.shadowed) if t.warnings]
