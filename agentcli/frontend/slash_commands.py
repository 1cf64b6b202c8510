"""Custom slash commands: Markdown prompt files in Claude Code's format, typed as `/name arguments`.

Folders, the project's first (a command of the same name in the person's folder is shadowed):

  1. `<workspace>/.claude/commands/**/*.md`    project
  2. `~/.claude/commands/**/*.md`              user
  3. each loaded plugin's `commands/**/*.md`   namespaced by the plugin: `/plugin:name` (or `/name` when unique);
     `${CLAUDE_PLUGIN_ROOT}` in its body is the plugin's folder

A file's name is the command (`review.md` → `/review`); subfolders are namespaces, as in Claude Code: the
command is still `/component` (the namespace is shown beside its description, `(project:frontend)`), and
`/frontend:component` names it exactly, which is how a stem found in two namespaces is told apart (the bare
name is then ambiguous and says so). The front matter is optional: `description` (else the body's first line),
`argument-hint`, `allowed-tools` and `model`. In the body, `$ARGUMENTS` is everything typed after the name and
`$1`, `$2`… its words (shell-quoted words stay whole); arguments given to a body without placeholders are added
as a last `ARGUMENTS:` line. `!`command`` runs a shell command whose output takes its place, and `@path`
attaches a file: both are done by the front end (`ui.command_files`), through the Bash tool's approval and the
Read tool's checks. A built-in command of the TUI keeps its name: a file that would take it is reported, unused.
A skill (`subagents.skills`) is also `/its-name`, after the built-ins and the files, as in Claude Code: its
`SKILL.md` body is the expansion, and the main agent may then read the files in its folder.

`allowed-tools` grants nothing (Claude Code pre-approves those tools for the command; agentcli asks as it always
does); `model` is used for that one turn when the model resolves (else a one-line note and the current model).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentcli.subagents import (
    TOOL_TOKEN,
    AgentFileError,
    FolderGate,
    Place,
    Problem,
    Root,
    Skill,
    folders,
    keep_first,
    read_bounded,
    read_front_matter,
    skipped,
    text_value,
    user_home,
)
from agentcli.text import one_line

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.plugins import Plugin

CommandScope = Literal["project", "user"]

MAX_COMMAND_BYTES = 256 * 1024
MAX_DEPTH = 4  # namespace levels read below a commands folder
MAX_FILES = 500  # files read per folder
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_SHELL = re.compile(r"!`([^`\n]+)`")
_POSITIONAL = re.compile(r"\$(\d+)")
KNOWN_COMMAND_KEYS = frozenset({"description", "argument-hint", "allowed-tools", "model", "disable-model-invocation",
                                "name"})

_RAW_KEYS = frozenset({"argument-hint"})  # shown as written (see `quote_raw_values`)


@dataclass(frozen=True, slots=True)
class CustomCommand:
    """One command file: its names, its front matter and where it is."""

    name: str  # the file's stem: `/name`
    namespace: str  # subfolders joined by ':' ("" at the top)
    description: str
    path: Path
    scope: CommandScope
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None
    warnings: tuple[str, ...] = ()
    skill_folder: Path | None = None  # a skill invoked as `/name`: its folder, which the main agent may then read
    plugin_root: Path | None = None  # a plugin's command: `${CLAUDE_PLUGIN_ROOT}` in its body is this folder

    @property
    def qualified(self) -> str:
        """`frontend:component`, or the name itself at the top of its folder."""
        return f"{self.namespace}:{self.name}" if self.namespace else self.name

    @property
    def where(self) -> str:
        """`project`, `user`, `project:frontend` (its namespace), `user skill`."""
        if self.skill_folder is not None:
            return f"{self.scope} skill"
        return f"{self.scope}:{self.namespace}" if self.namespace else self.scope

    @property
    def label(self) -> str:
        """What completion and `/help` show: the description, the argument hint, `(project:frontend)`."""
        hint = f" {self.argument_hint}" if self.argument_hint else ""
        return f"{self.description}{hint} ({self.where})"

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {"name": self.name, "qualified": self.qualified, "description": self.description,
                "argument_hint": self.argument_hint, "allowed_tools": list(self.allowed_tools), "model": self.model,
                "scope": self.scope, "path": str(self.path), "warnings": list(self.warnings)}


@dataclass(frozen=True, slots=True)
class Expansion:
    """A command's text with its arguments in place: `parts` alternate text and shell commands (odd indexes)."""

    parts: tuple[str, ...]

    @property
    def shell_commands(self) -> list[str]:
        """The `!`command`` snippets, in order."""
        return list(self.parts[1::2])

    def text(self, outputs: Iterable[str] | None = None) -> str:
        """The text with each shell command replaced by its output (or left as written when `outputs` is None)."""
        done = list(outputs) if outputs is not None else [f"!`{c}`" for c in self.shell_commands]
        pieces = [part if i % 2 == 0 else done[i // 2] for i, part in enumerate(self.parts)]
        return "".join(pieces).strip()


def _read(path: Path) -> str:
    return read_bounded(path, MAX_COMMAND_BYTES)


def _parts(text: str) -> tuple[dict[str, Any], str, list[str]]:
    """(front matter, body, warnings); a file without front matter is all body."""
    return read_front_matter(text, raw_keys=_RAW_KEYS, optional=True)


def parse_command(path: Path, *, scope: CommandScope, namespace: str = "") -> CustomCommand:
    """Read one command file. Raises AgentFileError (the one-line reason) when it must be skipped."""
    name = path.stem
    if _NAME.fullmatch(name) is None:
        raise AgentFileError("the file name cannot be a command name (letters, digits, '.', '_', '-'; at most 64)")
    data, body, warnings = _parts(_read(path))
    if not body.strip():
        raise AgentFileError("the command has no text after its front matter")
    description = text_value(data, "description", warnings)
    if not description:
        first = next((line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip()), "")
        description = first[:100]
    unknown = sorted(k for k in data if k not in KNOWN_COMMAND_KEYS)
    if unknown:
        warnings.append(f"unknown front matter keys ignored: {', '.join(unknown)}")
    tools_raw = data.get("allowed-tools")
    tools: tuple[str, ...] = ()
    if isinstance(tools_raw, str):
        tools = tuple(TOOL_TOKEN.findall(tools_raw))
    elif isinstance(tools_raw, list):
        tools = tuple(one_line(t) for t in tools_raw if isinstance(t, str | int | float))
    return CustomCommand(
        name=name, namespace=namespace, description=one_line(description), path=path, scope=scope,
        argument_hint=one_line(text_value(data, "argument-hint", warnings) or ""), allowed_tools=tools,
        model=text_value(data, "model", warnings), warnings=tuple(warnings),
    )


def expand(command: CustomCommand, arguments: str) -> Expansion:
    """The command's body (read now: edits apply at once) with `$ARGUMENTS` and `$1`… in place. AgentFileError."""
    _, body, _ = _parts(_read(command.path))
    if command.plugin_root is not None:
        body = body.replace("${CLAUDE_PLUGIN_ROOT}", str(command.plugin_root))
    arguments = arguments.strip()
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words
        words = arguments.split()
    used = False

    def fill(text: str) -> str:
        nonlocal used
        if "$ARGUMENTS" in text:
            used = True
            text = text.replace("$ARGUMENTS", arguments)

        def positional(match: re.Match[str]) -> str:
            nonlocal used
            used = True
            index = int(match.group(1))
            return words[index - 1] if 1 <= index <= len(words) else ""

        return _POSITIONAL.sub(positional, text)

    pieces = _SHELL.split(body.strip())
    parts = [fill(piece) for piece in pieces]
    if arguments and not used:
        parts[-1] += f"\n\nARGUMENTS: {arguments}"
    return Expansion(tuple(parts))


def model_spec(spec: str, settings: Settings) -> str:
    """A command's `model:` as `resolve_model` takes it: main, light, an alias or provider:model as written; a bare
    model id (`claude-opus-4-1`, as Claude Code's commands write it) is the main provider's, as in agent files."""
    spec = spec.strip()
    models = settings.models
    if spec in ("main", "light") or spec in models.aliases or ":" in spec:
        return spec
    return f"{models.main.provider}:{spec}"


#: The commands folders with their scope, highest precedence first (module docstring).
COMMAND_PLACES: tuple[Place[None], ...] = (
    Place("workspace", ".claude/commands", "project", None),
    Place("home", ".claude/commands", "user", None),
)


def command_folders(workspace: Path, home: Path) -> list[tuple[Path, CommandScope]]:
    """The commands folders, highest precedence first."""
    roots: dict[Root, Path] = {"workspace": workspace, "home": home}
    return [(folder, scope) for folder, scope, _ in folders(COMMAND_PLACES, roots)]


@dataclass
class CommandSet:
    """The custom commands of a workspace and its user, the files skipped, shadowed or clashing."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)  # by qualified name
    problems: list[Problem] = field(default_factory=list)
    shadowed: list[CustomCommand] = field(default_factory=list)
    reserved: frozenset[str] = frozenset()  # the built-in commands' names (lower case): they keep them

    @classmethod
    def load(
        cls, workspace: Path, *, reserved: Iterable[str] = (), env: Mapping[str, str] | None = None,
        home: Path | None = None, skills: Iterable[Skill] = (), plugins: Iterable[Plugin] = (),
    ) -> CommandSet:
        """Every command file of `command_folders`; a name in `reserved` (the TUI's built-ins) is reported, unused.
        Then the plugins' commands (`/plugin:name`), then `skills` the person may invoke (`user-invocable`) as
        `/name`, where no built-in or file has the name."""
        home = user_home(os.environ if env is None else env, home)
        builtins = frozenset(name.lower() for name in reserved)
        found = cls(reserved=builtins)
        roots: dict[Root, Path] = {"workspace": workspace, "home": home}
        gate = FolderGate(workspace, folders(COMMAND_PLACES, roots), "commands", found.problems)
        for folder, scope, _, admitted in gate.each():
            for path, namespace in _files(folder):
                found._add(path, scope, namespace, admitted.confine, builtins)
        for plugin in plugins:
            for place in plugin.commands:
                for path, namespace in _files(place) if place.is_dir() else [(place, "")]:
                    space = ":".join(filter(None, (plugin.name, namespace)))
                    found._add(path, "user", space, plugin.root, builtins, plugin_root=plugin.root)
        for skill in skills:
            if skill.user_invocable and skill.name.lower() not in builtins and found.find(skill.name) is None:
                found.commands[skill.name] = CustomCommand(
                    name=skill.name, namespace="", description=skill.description, path=skill.path,
                    scope=skill.scope, allowed_tools=skill.allowed_tools, skill_folder=skill.folder,
                )
        return found

    def _add(self, path: Path, scope: CommandScope, namespace: str, confine: Path | None,
             builtins: frozenset[str], plugin_root: Path | None = None) -> None:
        try:
            if confine is not None and not path.resolve(strict=True).is_relative_to(confine):
                raise AgentFileError("a symlink that leaves the commands folder; not followed")
            command = replace(parse_command(path, scope=scope, namespace=namespace), plugin_root=plugin_root)
        except (AgentFileError, OSError, RuntimeError) as exc:
            self.problems.append(skipped(path, exc))
            return
        if command.name.lower() in builtins and not command.namespace:
            self.problems.append(Problem(str(path), f"/{command.name} is a built-in command, which keeps "
                                                    "its name; this file is not used"))
            return
        keep_first(self.commands, self.shadowed, command.qualified, command)

    def find(self, name: str) -> CustomCommand | list[CustomCommand] | None:
        """The command `name` names (qualified, else by its stem), a list when the stem is ambiguous, or None."""
        exact = self.commands.get(name)
        if exact is not None or name.lower() in self.reserved:
            return exact
        matches = [c for c in self.commands.values() if c.name == name]
        if not matches:
            return None
        top = [c for c in matches if not c.namespace]
        if top:
            return top[0]
        return matches[0] if len(matches) == 1 else matches

    def completions(self) -> dict[str, str]:
        """Names to offer after `/` with their labels (the stem where it is unambiguous, else the qualified name)."""
        offered: dict[str, str] = {}
        for command in self.commands.values():
            found = self.find(command.name)
            key = command.name if found is command else command.qualified
            offered.setdefault(key, command.label)
        return offered


def _files(folder: Path) -> list[tuple[Path, str]]:
    """`*.md` files below `folder` (hidden names left out, at most MAX_DEPTH levels), with their namespaces."""
    found: list[tuple[Path, str]] = []
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        depth = len(rel.parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < MAX_DEPTH else []
        namespace = ":".join(rel.parts)
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith(".") and len(found) < MAX_FILES:
                found.append((Path(root) / name, namespace))
    return found
