"""Output styles (Claude Code's `.claude/output-styles/*.md`): how the main agent talks and works with the person.

A style is a Markdown file: front matter `name`, `description` and `keep-coding-instructions` (false unless set),
then its instructions. It replaces the role part of the main agent's system prompt (`prompts.render_system_prompt`):
the identity line stays, agentcli's coding instructions stay only with `keep-coding-instructions: true`, and the rules
for untrusted data and the workspace facts always stay. Folders, highest precedence first: a trusted project's
`.agentcli/output-styles` and `.claude/output-styles` (an untrusted project's are not read: a style is instructions
to the model), the person's `~/.claude/output-styles` and `$XDG_CONFIG_HOME/agentcli/output-styles`, then the
plugins' (`output-styles/` or the manifest's `outputStyles`, named `plugin:style`), then the built-in ones
(`Default`: none; `Explanatory`, `Learning`). Names are matched case-insensitively; the first wins.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.resources import prompts_dir
from agentcli.subagents.definitions.catalog import FolderGate, Place, Problem, Root, folders, skipped, user_home
from agentcli.subagents.definitions.front_matter import (
    AgentFileError,
    flag_value,
    read_bounded,
    read_front_matter,
    text_value,
)
from agentcli.text import one_line, terminal_safe

if TYPE_CHECKING:
    from agentcli.plugins import Plugin

DEFAULT = "default"
MAX_STYLE_BYTES = 64 * 1024

STYLE_PLACES: tuple[Place[None], ...] = (
    Place("workspace", ".agentcli/output-styles", "project", None),
    Place("workspace", ".claude/output-styles", "project", None),
    Place("home", ".claude/output-styles", "user", None),
    Place("xdg", "agentcli/output-styles", "user", None),
)


@dataclass(frozen=True, slots=True)
class OutputStyle:
    """One style: its instructions replace the role part of the main agent's prompt."""

    name: str
    description: str
    instructions: str
    keep_coding: bool  # agentcli's coding instructions stay in the prompt
    scope: str  # "project", "user", "plugin" or "built-in"
    path: str = ""


@dataclass(slots=True)
class OutputStyles:
    """The styles a session may use, by lower-cased name, and the files skipped."""

    styles: dict[str, OutputStyle] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @classmethod
    def load(cls, workspace: Path, *, trusted: bool, env: Mapping[str, str] | None = None,
             home: Path | None = None, plugins: Iterable[Plugin] = ()) -> OutputStyles:
        """Every style of the folders (a project's only when `trusted`, its files kept inside its folder), then the
        plugins' (`plugin:style`), then the built-in ones."""
        env = os.environ if env is None else env
        home = user_home(env, home)
        xdg = env.get("XDG_CONFIG_HOME", "")
        roots: dict[Root, Path] = {"workspace": workspace, "home": home,
                                   "xdg": Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".config"}
        found = cls()
        places = [p for p in STYLE_PLACES if trusted or p.scope != "project"]
        for folder, scope, _, admitted in FolderGate(workspace, folders(places, roots), "output styles",
                                                     found.problems).each():
            found._read_folder(folder, scope, admitted.confine)
        for plugin in plugins:
            for place in plugin.output_styles:
                found._read_folder(place, "plugin", plugin.root, prefix=f"{plugin.name}:")
        for path in sorted((prompts_dir() / "output_styles").glob("*.md")):
            found._read(path, "built-in")
        return found

    def _read_folder(self, folder: Path, scope: str, confine: Path | None, prefix: str = "") -> None:
        """The `*.md` styles of one folder (or one file); a file that resolves outside `confine` is skipped."""
        try:
            files = [folder] if folder.is_file() else sorted(p for p in folder.glob("*.md") if p.is_file())
        except OSError as exc:
            self.problems.append(Problem(str(folder), f"cannot list the folder: {exc.strerror or exc}"))
            return
        for path in files:
            real = path.resolve()
            if confine is not None and not real.is_relative_to(confine):
                self.problems.append(Problem(str(path), f"a symlink that leaves its folder (to {real}); not read"))
                continue
            self._read(path, scope, prefix)

    def _read(self, path: Path, scope: str, prefix: str = "") -> None:
        try:
            meta, body, _warnings = read_front_matter(read_bounded(path, MAX_STYLE_BYTES), optional=True)
        except AgentFileError as exc:
            self.problems.append(skipped(path, exc))
            return
        warnings: list[str] = []
        name = prefix + one_line(terminal_safe(text_value(meta, "name", warnings) or path.stem), 64)
        if name.lower() == DEFAULT or name.lower() in self.styles:
            return  # "default" is agentcli's own prompt; a name seen before (higher precedence) wins
        if not body.strip():
            self.problems.append(Problem(str(path), "the style has no instructions"))
            return
        description = one_line(terminal_safe(text_value(meta, "description", warnings) or ""), 200)
        keep = flag_value(meta, "keep-coding-instructions", False, warnings)
        self.styles[name.lower()] = OutputStyle(name, description, body.strip(), keep, scope, str(path))

    def get(self, name: str) -> OutputStyle | None:
        """The style named `name` (any case); None for "default", "" or an unknown name."""
        return self.styles.get(name.strip().lower())

    def names(self) -> list[str]:
        """"default", then every style's name."""
        return [DEFAULT, *(style.name for style in self.styles.values())]
