"""What a read-only subagent looked at, as fingerprints of the files and folders behind it.

A `Target` is one look: a Read of a file, an LS of a folder, or a Glob / Grep over a tree (a folder
and everything under it, or one file). `fingerprint` digests what the target names now: every entry's
type, size, mtime, ctime, inode and device, a folder's names, the path each symlink points to. It digests
what a target names wherever it lies: the file tools also read the person's additional directories and the
folders of loaded skills, by path or through a symlink in the workspace.

Taken with `since_ns` (the wall-clock time the tool call started), it also proves that what it digests
is what the tool saw: every entry's ctime must be older than the call, minus the filesystem's timestamp
granularity (`window_ns`). A write always sets the ctime to the current time and nothing can set it
back, so an entry that passes was not changed between the call and now, and a folder that passes had
no entry added, removed or renamed. Anything newer raises `Unprovable`: that run is not reused. Taken
later without `since_ns`, a digest equal to the stored one means nothing changed since then either
(any change would have moved a ctime).

A tree is every entry under its folder except the folders the search tools never enter
(`tools.walk.SKIP_DIRS`): ignored files count too (more misses, never a stale hit), up to
`MAX_TREE_ENTRIES`; beyond that it is `Unprovable`. The ignore files that can change what Glob and
Grep see from above the folder (`.gitignore`, `.ignore`, `.rgignore` and `.git/info/exclude` in every
folder above it, and git's global `$XDG_CONFIG_HOME/git/ignore`) are part of its digest; one of them that
is missing is not proven to have been missing at the call (the folders above a workspace change all the
time), only compared later. A missing file or tree root is proven missing by its folder's ctime.
Blocking (stat calls): run it in a worker thread.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.tools import SKIP_DIRS

Kind = Literal["file", "listing", "tree"]
MAX_TREE_ENTRIES = 20_000
FINE_WINDOW_NS = 50_000_000  # ctimes with sub-second parts: the kernel's coarse clock lags by a tick at most
COARSE_WINDOW_NS = 2_000_000_000  # whole-second ctimes (FAT, HFS+, ext3): a change in the same 2 s looks alike
IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")


class Unprovable(Exception):
    """What a target names cannot be shown to be what its tool call saw (or is too large to check)."""


@dataclass(frozen=True, slots=True)
class Target:
    """One look of a tool call: `raw` is the path as the call gave it ("" for the tool's default)."""

    kind: Kind
    raw: str
    started_ns: int  # time.time_ns() when the call started

    @property
    def label(self) -> str:
        """`Read src/a.py`, `LS .`, `search .` for messages."""
        verb = {"file": "Read", "listing": "LS", "tree": "search"}[self.kind]
        return f"{verb} {self.raw or '.'}"


def window_ns(st: os.stat_result) -> int:
    """How far behind a change's real time its ctime may lie on the filesystem holding `st`."""
    return COARSE_WINDOW_NS if st.st_ctime_ns % 1_000_000_000 == 0 else FINE_WINDOW_NS


def resolve(workspace: Path, raw: str) -> Path | None:
    """`raw` as the file tools resolve it (relative to the workspace, symlinks followed), wherever it lands: in the
    workspace, in one of the person's additional directories or a skill's folder (the tools read those too), or
    elsewhere (the tools refuse it; digesting it anyway costs a miss at most). None when it cannot be resolved."""
    text = raw.strip() or "."
    if "\x00" in text:
        return None
    candidate = Path(os.path.expanduser(text))
    if not candidate.is_absolute():
        candidate = workspace.resolve() / candidate
    try:
        return candidate.resolve(strict=False)
    except (OSError, RuntimeError, ValueError):
        return None


def covers(target: Target, workspace: Path, written: Path) -> bool:
    """Whether a write of `written` (resolved) can change what `target` names."""
    path = resolve(workspace, target.raw)
    if path is None:
        return False
    if target.kind == "file":
        return written == path
    if target.kind == "listing":
        return written == path or written.parent == path
    return written.is_relative_to(path) or (written.name in IGNORE_FILES and path.is_relative_to(written.parent))


class _Digest:
    """Lines of what was seen, hashed; with `since`, the proof that none of it changed since then."""

    def __init__(self, since_ns: int | None) -> None:
        self.hash = hashlib.blake2b(digest_size=20)
        self.since = since_ns
        self.entries = 0

    def add(self, label: str, fact: str) -> None:
        self.hash.update(f"{label}\x00{fact}\n".encode("utf-8", "surrogateescape"))

    def prove(self, label: str, st: os.stat_result) -> None:
        if self.since is not None and st.st_ctime_ns >= self.since - window_ns(st):
            raise Unprovable(f"{label} changed while it was looked at, or just before")

    def stat(self, label: str, path: Path, *, follow: bool = True, absent: bool = True) -> os.stat_result | None:
        """Digest the entry at `path` (None: there is none; with `absent`, its absence is proven with `since`)."""
        try:
            st = os.stat(path, follow_symlinks=follow)
        except (FileNotFoundError, NotADirectoryError):
            self.add(label, "missing")
            if absent:
                self.prove_absent(label, path)
            return None
        except OSError as exc:
            self.add(label, f"unreadable {exc.errno}")
            return None
        self.seen(label, st)
        return st

    def seen(self, label: str, st: os.stat_result) -> None:
        """Digest (and with `since`, prove) one entry's status."""
        self.prove(label, st)
        kind = stat.S_IFMT(st.st_mode)
        self.add(label, f"{kind}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_dev}")

    def prove_absent(self, label: str, path: Path) -> None:
        """A missing entry was missing at the call too: its nearest existing folder had no entry added or removed."""
        if self.since is None:
            return
        for folder in path.parents:
            try:
                st = os.stat(folder)
            except OSError:
                continue
            self.prove(f"{label} (its folder)", st)
            return

    def count(self) -> None:
        self.entries += 1
        if self.entries > MAX_TREE_ENTRIES:
            raise Unprovable(f"more than {MAX_TREE_ENTRIES} entries to check")

    def hexdigest(self) -> str:
        return self.hash.hexdigest()


def fingerprint(workspace: Path, target: Target, *, since_ns: int | None = None) -> str:
    """The digest of what `target` names now; with `since_ns`, raises `Unprovable` unless it is provably
    what the call that started then saw."""
    digest = _Digest(since_ns)
    path = resolve(workspace, target.raw)
    if path is None:
        digest.add("path", "unresolvable")  # the tool refused it: no file was read
        return digest.hexdigest()
    digest.add("path", str(path))
    _links(digest, workspace, target.raw)
    if target.kind == "file":
        digest.stat(".", path)
    elif target.kind == "listing":
        _listing(digest, path)
    else:
        _tree(digest, path)
    return digest.hexdigest()


def _links(digest: _Digest, workspace: Path, raw: str) -> None:
    """The symlinks on the way to `raw`, in the workspace or out of it (a retargeted link changes what it names
    without touching the target)."""
    root = workspace.resolve()
    candidate = Path(os.path.expanduser(raw.strip() or "."))
    if not candidate.is_absolute():
        candidate = root / candidate
    for step in (candidate, *candidate.parents):
        if step == root or step == step.parent:
            break  # the workspace is given resolved: no link above it; `/` is none
        if step.is_symlink():
            digest.stat(f"link {step}", step, follow=False)
            digest.add(f"link {step}", os.readlink(step))


def _listing(digest: _Digest, path: Path) -> None:
    st = digest.stat(".", path)
    if st is None or not stat.S_ISDIR(st.st_mode):
        return
    try:
        with os.scandir(path) as it:
            names = sorted((e.name, _is_dir(e)) for e in it)
    except OSError as exc:
        digest.add(".", f"unlistable {exc.errno}")
        return
    for name, is_dir in names:
        digest.count()
        digest.add(name, "dir" if is_dir else "entry")


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _tree(digest: _Digest, root: Path) -> None:
    # Ignore files above the tree: one that exists is proven unchanged; one that is missing is not proven to
    # have been missing at the call (the folders above a workspace, a home folder, change all the time).
    for folder in (root, *root.parents):
        for name in IGNORE_FILES:
            if folder != root:  # the root's own are walked below
                digest.stat(f"{folder}/{name}", folder / name, absent=False)
        digest.stat(f"{folder}/.git/info/exclude", folder / ".git" / "info" / "exclude", absent=False)
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    digest.stat("git global ignore", Path(config) / "git" / "ignore", absent=False)
    st = digest.stat(".", root)
    if st is None or not stat.S_ISDIR(st.st_mode):
        return
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            digest.add(prefix or ".", f"unlistable {exc.errno}")
            continue
        for entry in reversed(entries):  # popped in name order
            digest.count()
            rel = prefix + entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:  # gone since the listing: its folder's ctime tells
                digest.add(rel, "unreadable")
                continue
            if stat.S_ISDIR(st.st_mode) and entry.name in SKIP_DIRS:
                digest.add(rel, "skipped")  # never searched
                continue
            digest.seen(rel, st)
            if stat.S_ISDIR(st.st_mode):
                stack.append((Path(entry.path), rel + "/"))
            elif stat.S_ISLNK(st.st_mode):
                path = Path(entry.path)
                try:
                    digest.add(rel, "-> " + os.readlink(path))
                except OSError:
                    digest.add(rel, "-> ?")
                digest.stat(rel + " (target)", path)
