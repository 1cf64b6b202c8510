"""The file walk of Glob and of Grep's fallback: the files ripgrep would search, in path order.

Skips SKIP_DIRS, honours every `.gitignore` from the workspace down (nested ones apply below
their folder, a deeper file can re-include), never follows a symlinked folder, and never
yields a symlinked file that points outside the workspace. A folder named explicitly as the
search root is searched even when an ignore file above it excludes it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})
PROGRESS_EVERY = 200  # files between progress reports


class Stopped(Exception):
    """The caller asked the walk to stop (cancelled or past its deadline)."""


def _load(folder: Path) -> pathspec.GitIgnoreSpec | None:
    path = folder / ".gitignore"
    try:
        if not path.is_file():
            return None
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            lines = fh.read(1 << 20).splitlines()  # an ignore file past 1 MiB is cut, never a freeze
    except OSError:
        return None
    import pathspec  # only when a walk meets an ignore file (start-up speed)

    return pathspec.GitIgnoreSpec.from_lines(lines)


@dataclass
class Walk:
    """Files under `root` (a file or folder inside the resolved `workspace`)."""

    workspace: Path
    root: Path
    stop: threading.Event = field(default_factory=threading.Event)
    tick: Callable[[], None] = lambda: None
    max_file_bytes: int | None = None
    progress_every: int = PROGRESS_EVERY
    _specs: list[tuple[str, pathspec.GitIgnoreSpec]] = field(default_factory=list)

    def __post_init__(self) -> None:
        root_rel = self._rel(self.root)
        folder = self.root if self.root.is_dir() else self.root.parent
        chain = [folder, *folder.parents]
        for parent in reversed(chain):
            if parent != self.workspace and not parent.is_relative_to(self.workspace):
                continue
            spec = _load(parent)
            base = self._rel(parent)
            if spec is None:
                continue
            # A folder the person names explicitly is searched even when it is ignored.
            if root_rel != "." and spec.check_file(_under(base, root_rel) + "/").include:
                continue
            self._specs.append((base, spec))

    def _rel(self, path: Path) -> str:
        text = path.relative_to(self.workspace).as_posix()
        return text if text else "."

    def _ignored(self, specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
        for base, spec in reversed(specs):  # the deepest ignore file with an opinion decides
            decision = spec.check_file(_under(base, rel) + ("/" if is_dir else "")).include
            if decision is not None:
                return decision
        return False

    def files(self) -> Iterator[tuple[Path, str]]:
        """(absolute path, workspace-relative path) of every file, in ripgrep's `--sort path` order."""
        if not self.root.is_dir():
            if self.root.is_file() and self._small(self.root):
                yield self.root, self._rel(self.root)
            return
        seen = 0
        stack = [iter(self._children(self.root, self._rel(self.root), self._specs, own=False))]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
                continue
            entry, rel, specs = item
            if self.stop.is_set():
                raise Stopped
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_link = not is_dir and entry.is_symlink()
            except OSError:
                continue
            if is_dir:
                if entry.name not in SKIP_DIRS and not self._ignored(specs, rel, is_dir=True):
                    stack.append(iter(self._children(Path(entry.path), rel, specs, own=True)))
                continue
            if self._ignored(specs, rel, is_dir=False):
                continue
            path = Path(entry.path)
            if is_link and (not _inside(path, self.workspace) or not path.is_file()):
                continue  # never read through a link that leaves the workspace; never follow a folder link
            if not is_link and not entry.is_file(follow_symlinks=False):
                continue
            if not self._small(path):
                continue
            seen += 1
            if seen % self.progress_every == 0:
                self.tick()
            yield path, rel

    def _children(
        self, folder: Path, rel: str, specs: list[tuple[str, pathspec.GitIgnoreSpec]], *, own: bool
    ) -> list[tuple[os.DirEntry[str], str, list[tuple[str, pathspec.GitIgnoreSpec]]]]:
        """The sorted entries of one folder, with the ignore files that apply to them."""
        if own and (spec := _load(folder)) is not None:
            specs = [*specs, (rel, spec)]
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return []
        prefix = "" if rel == "." else rel + "/"
        return [(entry, prefix + entry.name, specs) for entry in entries]

    def _small(self, path: Path) -> bool:
        if self.max_file_bytes is None:
            return True
        try:
            return path.stat().st_size <= self.max_file_bytes
        except OSError:
            return False


def _under(base: str, rel: str) -> str:
    """`rel` (workspace-relative) as seen from the folder `base` holding an ignore file."""
    if base == ".":
        return rel
    return rel[len(base) + 1 :] if rel.startswith(base + "/") else rel


def _inside(path: Path, workspace: Path) -> bool:
    try:
        return path.resolve().is_relative_to(workspace)
    except (OSError, RuntimeError):
        return False
