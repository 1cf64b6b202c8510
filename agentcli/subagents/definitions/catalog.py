"""What the catalogs of definition files (agent files, skills, custom slash commands) share: their folders in
precedence order as data (`Place`), each folder read once and a project's only inside the workspace
(`FolderGate`), a name's first definition winning (`keep_first`), and the files skipped (`Problem`).
Their front matter is read by `front_matter.read_front_matter`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Literal, NamedTuple, TypeVar

from agentcli.subagents.definitions.front_matter import AgentFileError

FolderScope = Literal["project", "user"]
Root = Literal["workspace", "home", "xdg", "codex_home"]  # what a place's path is below
K = TypeVar("K")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Problem:
    """A definition file (or folder) that was skipped or cannot be used, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Place(Generic[K]):
    """One folder of a catalog: a path below a root, its scope, and what the catalog reads there (`kind`)."""

    root: Root
    path: str  # '/'-separated, below the root
    scope: FolderScope
    kind: K


class Admitted(NamedTuple):
    """A folder to read: resolved, and the folder its files must stay inside (None: the person's own)."""

    real: Path
    confine: Path | None


def folders(places: Iterable[Place[K]], roots: Mapping[Root, Path]) -> list[tuple[Path, FolderScope, K]]:
    """The places as folders with their scope and kind, in the order given (highest precedence first)."""
    return [(roots[p.root].joinpath(*p.path.split("/")), p.scope, p.kind) for p in places]


def resolved(path: Path) -> Path | None:
    """The path resolved, or None when it cannot be (a symlink loop, an unreadable folder)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def user_home(env: Mapping[str, str], home: Path | None) -> Path:
    """`home` when given, else $HOME, else the account's home folder."""
    if home is not None:
        return home
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def skipped(path: Path, exc: AgentFileError | OSError | RuntimeError) -> Problem:
    """Why a file was skipped: an AgentFileError's reason, else `cannot read: …`."""
    if isinstance(exc, AgentFileError):
        return Problem(str(path), str(exc))
    return Problem(str(path), f"cannot read: {getattr(exc, 'strerror', None) or exc}")


def keep_first(found: dict[str, T], shadowed: list[T], key: str, item: T) -> None:
    """`item` under `key`, unless a definition read before (higher precedence) has it: then it is shadowed."""
    if key in found:
        shadowed.append(item)
    else:
        found[key] = item


class FolderGate(Generic[K]):
    """A catalog's folders (highest precedence first), each admitted once (the workspace may be the home folder)
    and a project's only when it resolves inside the workspace; a refused one is noted in `problems`."""

    def __init__(
        self, workspace: Path, folder_list: Iterable[tuple[Path, FolderScope, K]], noun: str, problems: list[Problem]
    ) -> None:
        self.folders = list(folder_list)
        self.real_workspace = workspace.resolve()
        self._user = {resolved(folder) for folder, scope, _ in self.folders if scope == "user"}
        self._seen: set[Path] = set()
        self._noun = noun  # "the {noun} folder resolves outside the workspace"
        self._problems = problems

    def admit(self, folder: Path, scope: FolderScope, real: Path | None) -> Admitted | None:
        """Whether to read `folder`, which resolved to `real` (None: it cannot be resolved, and is not read)."""
        if real is None or real in self._seen or not folder.is_dir():
            return None
        self._seen.add(real)
        untrusted = scope == "project" and real not in self._user  # the workspace may be the home folder
        if untrusted and not real.is_relative_to(self.real_workspace):
            self._problems.append(
                Problem(str(folder), f"the {self._noun} folder resolves outside the workspace ({real}); not read")
            )
            return None
        return Admitted(real, real if untrusted else None)

    def each(self) -> Iterator[tuple[Path, FolderScope, K, Admitted]]:
        """The folders to read, in order (one that cannot be resolved is passed over)."""
        for folder, scope, kind in self.folders:
            admitted = self.admit(folder, scope, resolved(folder))
            if admitted is not None:
                yield folder, scope, kind, admitted
