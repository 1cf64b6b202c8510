"""The shadow repository of one workspace: snapshots of its files as git trees, outside the workspace.

One bare git dir per workspace under agentcli's data folder (`checkpoints/<key>/`), owned by agentcli: its
config, its `info/attributes` (every conversion off, so a file comes back byte for byte) and its `info/exclude`
(the workspace repository's, copied) are written here; git runs through `gitsafe.Shadow` (no config but this
one, nothing that starts a program). The workspace's repository, index, HEAD, hooks and config are never read
or written; its `.gitignore` files are honoured. The shadow's own index remembers every file's stat data, so a
snapshot of an unchanged tree hashes nothing: `ls-files --others` and `diff-files` list what changed, that list
goes to `update-index`, `write-tree` names the tree. A file over the size cap or a nested repository is left
out (and said so). Snapshots are kept alive by refs named after the session that took them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.figures import size_text
from agentcli.gitsafe import GitError, NoRepository, Repo, Shadow, read_regular
from agentcli.paths import data_dir, ensure_private_dir

_CONFIG = """[core]
\trepositoryformatversion = 0
\tbare = true
\tautocrlf = false
\tsafecrlf = false
\tsymlinks = true
\tfilemode = true
\tignorecase = false
\tprecomposeunicode = false
\tquotepath = false
\tlogAllRefUpdates = false
[gc]
\tauto = 0
[advice]
\taddEmbeddedRepo = false
"""
#: Every attribute that converts a file between the work tree and git switched off, above any `.gitattributes`.
_ATTRIBUTES = "* -text !eol -filter -ident !diff !merge !working-tree-encoding\n"
_EXCLUDE_LIMIT = 1 << 20
ChangeKind = Literal["added", "modified", "deleted"]
_KINDS: dict[str, ChangeKind] = {"A": "added", "M": "modified", "T": "modified", "D": "deleted"}


class CheckpointError(Exception):
    """A snapshot or a restore failed; `str()` is one line."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A path a snapshot left out, and why (over the size cap, a nested repository, too many files)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One state of the workspace's files: a git tree in the shadow repository, and what it left out."""

    tree: str
    skipped: tuple[Skipped, ...] = ()


@dataclass(frozen=True, slots=True)
class Change:
    """A path that differs between two snapshots (`kind` read from the older to the newer)."""

    path: str
    kind: ChangeKind
    old_mode: str = ""
    new_mode: str = ""


def workspace_key(workspace: Path) -> str:
    """The shadow repository's folder name for a workspace: a digest of its resolved path."""
    return hashlib.sha256(os.fsencode(workspace.resolve())).hexdigest()[:24]


def checkpoints_root(env: dict[str, str] | None = None) -> Path:
    """Where every workspace's shadow repository lives: `$XDG_DATA_HOME/agentcli/checkpoints`."""
    return data_dir(env) / "checkpoints"


class ShadowRepo:
    """Snapshots of one workspace's files in a git dir agentcli owns."""

    def __init__(self, workspace: Path, root: Path | None = None, *, max_file_bytes: int = 5 << 20,
                 max_files: int = 100_000) -> None:
        self.workspace = workspace.resolve()
        self.folder = (root or checkpoints_root()) / workspace_key(self.workspace)
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self._runner: Shadow | None = None

    @property
    def git_dir(self) -> Path:
        return self.folder / "git"

    @property
    def index(self) -> Path:
        return self.folder / "index"

    def _shadow(self) -> Shadow:
        if self._runner is None:
            try:
                self._runner = Shadow.at(self.git_dir)
            except GitError as exc:
                raise CheckpointError(str(exc)) from None
            self._init()
        return self._runner

    def _init(self) -> None:
        """Make the git dir (once), and copy the workspace repository's ignore rules into it (each time)."""
        ensure_private_dir(self.folder.parent)  # the workspaces' files: the person's alone
        ensure_private_dir(self.folder)
        git = self.git_dir
        if not (git / "HEAD").is_file():
            for sub in ("objects", "refs", "info"):
                (git / sub).mkdir(parents=True, exist_ok=True)
            (git / "config").write_text(_CONFIG)
            (git / "info" / "attributes").write_text(_ATTRIBUTES)
            (git / "HEAD").write_text("ref: refs/heads/agentcli-shadow\n")
            (self.folder / "workspace").write_text(str(self.workspace) + "\n")
        (git / "info" / "exclude").write_bytes(self._person_excludes())

    def _person_excludes(self) -> bytes:
        """The ignore rules of the workspace's repository beyond its `.gitignore` files (`info/exclude`,
        `core.excludesFile`), read as data; nothing when the workspace is not in a repository."""
        try:
            repo = Repo.discover(self.workspace)
        except (NoRepository, GitError):
            return b""
        found = [read_regular(repo.common_dir / "info" / "exclude", _EXCLUDE_LIMIT) or b""]
        if (person := repo.excludes_file()) is not None:
            found.append(read_regular(Path(person), _EXCLUDE_LIMIT) or b"")
        return b"\n".join(found)

    @contextlib.contextmanager
    def locked(self) -> Iterator[Shadow]:
        """The shadow repository, held against another agentcli process working on the same workspace."""
        git = self._shadow()
        with open(self.folder / "lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield git
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _git(self, git: Shadow, *args: str, stdin: bytes | None = None, index: Path | None = None) -> bytes:
        try:
            return git.run(*args, work_tree=self.workspace, index=index or self.index, stdin=stdin).stdout
        except GitError as exc:
            raise CheckpointError(f"checkpoint of {self.workspace}: {exc}") from None

    def snapshot(self) -> Snapshot:
        """The workspace's files now, as a tree (only what changed since the last snapshot is read)."""
        with self.locked() as git:
            paths = self._listed(git)
            if len(paths) > self.max_files:
                raise CheckpointError(f"{len(paths)} files changed in {self.workspace}, more than [checkpoints] "
                                      f"max_files ({self.max_files}): no checkpoint taken")
            keep, drop, skipped = self._sort(paths)
            if drop:
                self._git(git, "update-index", "-z", "--force-remove", "--stdin", stdin=nul_list(drop))
            if keep:
                self._git(git, "update-index", "-z", "--add", "--remove", "--replace", "--stdin", stdin=nul_list(keep))
            tree = self._git(git, "write-tree").decode().strip()
            return Snapshot(tree, tuple(skipped))

    def _listed(self, git: Shadow) -> list[str]:
        """The paths a snapshot takes again: untracked ones (a nested repository as `dir/`), and the index's whose
        stat data moved (changed, gone, or only touched), the two lists made at once.

        `diff-files` compares stat data only (its lstats spread over threads) and hashes nothing, where
        `ls-files --modified` would hash a touched file's bytes at every snapshot (it never writes the index, and
        update-index is not given a file whose bytes are the same): a branch switched and back would cost every
        later prompt a read of every file it rewrote. Taken again once, a touched file's stat data is current.
        When that makes more paths than `max_files`, the stat data is refreshed first (hashing the touched files
        once) so that the cap counts changed files only."""
        with ThreadPoolExecutor(1) as pool:
            others = pool.submit(self._git, git, "ls-files", "-z", "--others", "--exclude-standard")
            moved = _nul_split(self._git(git, "diff-files", "-z", "--name-only", "--no-renames"))
            found = _nul_split(others.result())
        if len(found) + len(moved) > self.max_files and moved:
            git.run("update-index", "-q", "--refresh", work_tree=self.workspace, index=self.index, check=False)
            moved = _nul_split(self._git(git, "diff-files", "-z", "--name-only", "--no-renames"))
        return sorted(found | moved)

    def _sort(self, paths: list[str]) -> tuple[list[str], list[str], list[Skipped]]:
        """(paths to take, paths to drop from the index, what is left out and why)."""
        keep: list[str] = []
        drop: list[str] = []
        skipped: list[Skipped] = []
        for path in paths:
            if path.endswith("/"):
                skipped.append(Skipped(path, "a nested repository"))
                continue
            try:
                info = os.lstat(self.workspace / path)
            except OSError:
                keep.append(path)  # gone: update-index --remove drops it
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > self.max_file_bytes:
                skipped.append(Skipped(path, f"over the size cap ({size_text(info.st_size)} > "
                                             f"{size_text(self.max_file_bytes)})"))
                drop.append(path)
            else:
                keep.append(path)
        return keep, drop, skipped

    def changes(self, old: str, new: str) -> list[Change]:
        """What differs between two snapshots, path by path (no rename detection)."""
        with self.locked() as git:
            out = self._git(git, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new)
        return parse_diff_tree(out)

    def blob(self, tree: str, path: str) -> bytes | None:
        """A file's bytes in a snapshot, None when it has none there (or it is not a file)."""
        with self.locked() as git:
            proc = git.run("cat-file", "blob", f"{tree}:{path}", check=False)
        return proc.stdout if proc.returncode == 0 else None

    def keep(self, ref: str, tree: str) -> None:
        """Hold a snapshot alive under `refs/checkpoints/<ref>`."""
        with self.locked() as git:
            self._git(git, "update-ref", f"refs/checkpoints/{ref}", tree)

    def refs(self, prefix: str) -> list[str]:
        """The refs under `refs/checkpoints/<prefix>`."""
        with self.locked() as git:
            out = self._git(git, "for-each-ref", "--format=%(refname)", f"refs/checkpoints/{prefix}")
        return out.decode().split()

    def disk_use(self, prefix: str) -> int:
        """Bytes of the objects only the snapshots under `prefix` hold (what dropping them frees)."""
        if not self.git_dir.is_dir():
            return 0
        mine = self.refs(prefix)
        if not mine:
            return 0
        with self.locked() as git:
            others = [r for r in self._git(git, "for-each-ref", "--format=%(refname)", "refs/checkpoints/")
                      .decode().split() if r not in set(mine)]
            out = self._git(git, "rev-list", "--objects", "--disk-usage", *mine, "--not", *others)
        return int(out.decode().strip() or 0)

    def forget(self, prefix: str) -> int:
        """Drop the snapshots under `prefix` and the objects nothing else holds; how many refs went."""
        if not self.git_dir.is_dir():
            return 0
        mine = self.refs(prefix)
        with self.locked() as git:
            if mine:
                self._git(git, "update-ref", "--stdin", stdin="".join(f"delete {r}\n" for r in mine).encode())
            self._git(git, "prune", "--expire=now")
        return len(mine)


def parse_diff_tree(out: bytes) -> list[Change]:
    """`git diff-tree -r -z` output as changes."""
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: list[Change] = []
    for head, path in zip(fields[::2], fields[1::2], strict=False):
        parts = head.lstrip(":").split()
        if len(parts) < 5 or not path:
            continue
        kind = _KINDS.get(parts[4][:1])
        if kind is not None:
            found.append(Change(path, kind, parts[0], parts[1]))
    return found


def _nul_split(out: bytes) -> set[str]:
    return {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}


def nul_list(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)
