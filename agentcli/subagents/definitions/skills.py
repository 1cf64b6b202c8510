"""Skills: folders holding a `SKILL.md` (the Agent Skills format Claude Code, Codex, Gemini CLI and opencode read).

    <folder>/pdf-tools/SKILL.md
    ---
    name: pdf-tools                  # lowercase letters, digits, hyphens; at most 64 characters
    description: Fill PDF forms ...  # what it does and when to use it (at most 1024 characters)
    allowed-tools: Read Bash         # optional; informational in agentcli (see below)
    ---
    Instructions ...                 (the body: loaded only when the skill is used)

Folders, highest precedence first (a same-named skill further down is shadowed, and listed as such):

  1. `<workspace>/.claude/skills/*/SKILL.md`    project, Claude Code's folder
  2. `<workspace>/.agents/skills/*/SKILL.md`    project, the cross-tool folder
  3. `~/.claude/skills/*/SKILL.md`              user
  4. `~/.agents/skills/*/SKILL.md`              user
  5. each loaded plugin's `skills/*/SKILL.md`   named `plugin:skill` (`agentcli.plugins`)

Progressive disclosure, as the format intends: only each skill's name and description reach the model (in the
`Skill` tool's description, `skill_tool`), its body when the model calls `Skill(name)`, and the files it bundles
when the model reads them (Read may then read inside that skill's folder, never write there). An agent file's
`skills:` list preloads bodies into that subagent's system prompt.

`disable-model-invocation: true` keeps a skill off the model's list (the person may still invoke it as `/name`,
`slash_commands`); `user-invocable: false` keeps it from being such a command.

Trust: a workspace's skills load like its agent files, trusted or not: they shape prompts, never permissions.
`allowed-tools` therefore grants nothing (Claude Code pre-approves those tools while the skill runs; agentcli
asks as it always does): it is shown by `agentcli skills list` and said with the body. A skill's scripts run
only through Bash and its approvals. A project folder that resolves outside the workspace, and a project skill
folder or `SKILL.md` that is a symlink leaving it, are skipped with a reason (as agent files are).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentcli.subagents.definitions.catalog import (
    FolderGate,
    Place,
    Problem,
    Root,
    folders,
    keep_first,
    skipped,
    user_home,
)
from agentcli.subagents.definitions.front_matter import (
    TOOL_TOKEN,
    AgentFileError,
    flag_value,
    is_scalar,
    read_bounded,
    read_front_matter,
    show_value,
    text_value,
)
from agentcli.text import one_line

if TYPE_CHECKING:
    from agentcli.plugins import Plugin

SkillScope = Literal["user", "project"]

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 1_000_000
MAX_DESCRIPTION_CHARS = 1024  # the format's limit
LISTED_DESCRIPTION_CHARS = 400  # what the model is shown of one description (the listing goes with every request)
MAX_BUNDLED_LISTED = 40  # bundled files named with a loaded body
_SPEC_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_NAME_FORBIDDEN = frozenset("<>`\"'")
KNOWN_SKILL_KEYS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools", "allowed_tools",
     # Claude Code's own additions
     "version", "model", "disable-model-invocation", "user-invocable", "argument-hint", "when_to_use", "context",
     "agent", "hooks"}
)  # fmt: skip

_RAW_KEYS = frozenset({"argument-hint"})  # shown as written (see `quote_raw_values`)


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: its listing (name, description) and where its body and bundled files are."""

    name: str
    description: str
    folder: Path  # resolved
    path: Path  # its SKILL.md
    scope: SkillScope
    allowed_tools: tuple[str, ...] = ()  # as written; informational (module docstring)
    license: str | None = None
    model_invocable: bool = True  # `disable-model-invocation: true`: never listed to the model
    user_invocable: bool = True  # `user-invocable: false`: not a `/name` command of the person's
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (no body)."""
        return {
            "name": self.name, "description": self.description, "scope": self.scope, "path": str(self.path),
            "folder": str(self.folder), "allowed_tools": list(self.allowed_tools), "license": self.license,
            "model_invocable": self.model_invocable, "user_invocable": self.user_invocable,
            "warnings": list(self.warnings),
        }


#: The skills folders with their scope, highest precedence first (module docstring).
SKILL_PLACES: tuple[Place[None], ...] = (
    Place("workspace", ".claude/skills", "project", None),
    Place("workspace", ".agents/skills", "project", None),
    Place("home", ".claude/skills", "user", None),
    Place("home", ".agents/skills", "user", None),
)


def skill_folders(workspace: Path, home: Path) -> list[tuple[Path, SkillScope]]:
    """Every skills folder with its scope, highest precedence first."""
    roots: dict[Root, Path] = {"workspace": workspace, "home": home}
    return [(folder, scope) for folder, scope, _ in folders(SKILL_PLACES, roots)]


def _read_text(path: Path) -> str:
    return read_bounded(path, MAX_SKILL_BYTES)


def _tools(value: Any, warnings: list[str]) -> tuple[str, ...]:
    """`allowed-tools`: the format's space-separated string, Claude Code's comma-separated one, or a list."""
    if value is None:
        return ()
    if isinstance(value, str):
        items = TOOL_TOKEN.findall(value)
    elif isinstance(value, list) and all(is_scalar(v) for v in value):
        items = [str(v).strip() for v in value if str(v).strip()]
    else:
        warnings.append(f"'allowed-tools' ignored: expected a string or a list, got {show_value(value)}")
        return ()
    return tuple(dict.fromkeys(one_line(item) for item in items))


def name_problem(name: str) -> str | None:
    """Why a skill name cannot be used at all (it reaches prompts and terminals), or None."""
    if len(name) > 64:
        return "the name is longer than 64 characters"
    for ch in name:
        if ch in _NAME_FORBIDDEN or ch.isspace() or not ch.isprintable():
            return f"the name contains {ch!r} (use lowercase letters, digits and hyphens)"
    return None


def parse_skill(path: Path, *, scope: SkillScope, folder: Path | None = None) -> Skill:
    """Read one `SKILL.md`. Raises AgentFileError (the one-line reason) when it must be skipped."""
    folder = folder or path.parent
    data, _, warnings = read_front_matter(_read_text(path), raw_keys=_RAW_KEYS)
    name = text_value(data, "name", warnings)
    if not name:
        name = path.parent.name
        warnings.append(f"no 'name' in the front matter: the folder's name '{name}' is used")
    if problem := name_problem(name):
        raise AgentFileError(f"refused skill name: {problem}")
    if _SPEC_NAME.fullmatch(name) is None:
        warnings.append(f"the name '{name}' is not lowercase letters, digits and hyphens (Agent Skills format)")
    if name != path.parent.name:
        warnings.append(f"the name '{name}' differs from its folder's name '{path.parent.name}'")
    description = text_value(data, "description", warnings)
    if not description:
        raise AgentFileError("missing required 'description' in the front matter")
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION_CHARS:
        warnings.append(f"the description is longer than {MAX_DESCRIPTION_CHARS} characters")
    unknown = sorted(k for k in data if k not in KNOWN_SKILL_KEYS)
    if unknown:
        warnings.append(f"unknown front matter keys ignored: {', '.join(unknown)}")
    tools = _tools(data.get("allowed-tools", data.get("allowed_tools")), warnings)
    return Skill(
        name=name, description=description, folder=folder, path=path, scope=scope, allowed_tools=tools,
        license=text_value(data, "license", warnings),
        model_invocable=not flag_value(data, "disable-model-invocation", False, warnings),
        user_invocable=flag_value(data, "user-invocable", True, warnings), warnings=tuple(warnings),
    )


def skill_body(skill: Skill) -> str:
    """The body of a skill's `SKILL.md` as it is now (read when it is used). AgentFileError when it cannot be."""
    _, body, _ = read_front_matter(_read_text(skill.path), raw_keys=_RAW_KEYS)
    return body.strip()


def bundled_files(skill: Skill, limit: int = MAX_BUNDLED_LISTED) -> tuple[list[str], int]:
    """The files a skill bundles besides its `SKILL.md` (relative, sorted, hidden ones left out; at most `limit`),
    and how many more there are. Symlinks are not followed out of the folder."""
    found: list[str] = []
    more = 0
    for root, dirs, files in os.walk(skill.folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or (Path(root) == skill.folder and name == SKILL_FILE):
                continue
            if len(found) < limit:
                found.append((Path(root) / name).relative_to(skill.folder).as_posix())
            else:
                more += 1
        if more > 1000:
            break
    return found, more


@dataclass
class SkillCatalog:
    """The skills of a workspace and its user: the effective ones by name, the files skipped, those shadowed."""

    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    shadowed: list[Skill] = field(default_factory=list)

    @classmethod
    def load(cls, workspace: Path, *, env: Mapping[str, str] | None = None, home: Path | None = None,
             plugins: Iterable[Plugin] = ()) -> SkillCatalog:
        """Every skill of the folders of `skill_folders`, in precedence order (module docstring), then the plugins'
        skills, named `plugin:skill` and kept inside their plugin."""
        home = user_home(os.environ if env is None else env, home)
        catalog = cls()
        roots: dict[Root, Path] = {"workspace": workspace, "home": home}
        gate = FolderGate(workspace, folders(SKILL_PLACES, roots), "skills", catalog.problems)
        for folder, scope, _, admitted in gate.each():
            try:
                entries = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
            except OSError as exc:
                catalog.problems.append(Problem(str(folder), f"cannot list the folder: {exc.strerror or exc}"))
                continue
            for entry in entries:
                catalog._add(entry, scope, admitted.confine)
        catalog.add_plugins(plugins)
        return catalog

    def add_plugins(self, plugins: Iterable[Plugin]) -> None:
        """The plugins' skills, named `plugin:skill`, each kept inside its plugin."""
        for plugin in plugins:
            for place in plugin.skills:
                try:
                    entries = [place] if (place / SKILL_FILE).is_file() else sorted(
                        p for p in place.iterdir() if not p.name.startswith("."))
                except OSError as exc:
                    self.problems.append(Problem(str(place), f"cannot list the folder: {exc.strerror or exc}"))
                    continue
                for entry in entries:
                    self._add(entry, "user", plugin.root, prefix=f"{plugin.name}:")

    def _add(self, entry: Path, scope: SkillScope, confine: Path | None, prefix: str = "") -> None:
        """Read `entry/SKILL.md` (a folder without one is not a skill and is passed over silently)."""
        path = entry / SKILL_FILE
        try:
            if not entry.is_dir() or not path.is_file():
                return
            folder = entry.resolve(strict=True)
            target = path.resolve(strict=True)
            if confine is not None and not (folder.is_relative_to(confine) and target.is_relative_to(folder)):
                raise AgentFileError(f"a symlink that leaves the skills folder (to {target}); not followed")
            skill = parse_skill(path, scope=scope, folder=folder)
            skill = replace(skill, name=prefix + skill.name) if prefix else skill
        except (AgentFileError, OSError, RuntimeError) as exc:
            self.problems.append(skipped(path, exc))
            return
        keep_first(self.skills, self.shadowed, skill.name, skill)

    def get(self, name: str) -> Skill | None:
        """The skill of exactly this name, else of this name case-insensitively."""
        found = self.skills.get(name.strip())
        if found is None:
            lowered = name.strip().lower()
            found = next((s for s in self.skills.values() if s.name.lower() == lowered), None)
        return found

    def names(self) -> list[str]:
        """The effective skills' names, in listing order (precedence, then folder order)."""
        return list(self.skills)

    def for_model(self) -> list[Skill]:
        """The skills listed to the model (all but those with `disable-model-invocation: true`)."""
        return [skill for skill in self.skills.values() if skill.model_invocable]

    def with_warnings(self) -> list[Skill]:
        """Skills (effective or shadowed) whose files carry warnings."""
        return [s for s in (*self.skills.values(), *self.shadowed) if s.warnings]

    def report_lines(self) -> list[str]:
        """One line per skipped file (for the session's notices)."""
        return [f"skill {p.path} skipped: {p.reason}" for p in self.problems]


def listing(skills: Iterable[Skill]) -> str:
    """The lines the model is shown: `- name: description` (cut to LISTED_DESCRIPTION_CHARS), one per skill."""
    lines = []
    for skill in skills:
        text = skill.description
        if len(text) > LISTED_DESCRIPTION_CHARS:
            text = text[: LISTED_DESCRIPTION_CHARS - 1].rstrip() + "…"
        lines.append(f"- {skill.name}: {text}")
    return "\n".join(lines)


def loaded_text(skill: Skill, body: str, args: str = "") -> str:
    """What loading a skill gives the model: where it lives, its body, the files it bundles (read with Read)."""
    if args.strip():
        body = body.replace("$ARGUMENTS", args.strip()) if "$ARGUMENTS" in body else f"{body}\n\nARGUMENTS: {args}"
    files, more = bundled_files(skill)
    lines = [f'<skill name="{skill.name}" folder="{skill.folder}">', body, "</skill>"]
    if files:
        lines.append(f"Files this skill bundles, under {skill.folder} (read them with Read when its instructions "
                     "call for them; the folder is read-only):")
        lines += [f"  {name}" for name in files]
        if more:
            lines.append(f"  … and {more} more")
    else:
        lines.append(f"Its folder is {skill.folder}.")
    if skill.allowed_tools:
        lines.append(f"(The skill names these tools: {', '.join(skill.allowed_tools)}. They are not pre-approved: "
                     "each call is checked as usual.)")
    return "\n".join(lines)
