"""Merging a worktree's changes back into the workspace, file by file, with git's three-way merge.

For every file the subagent changed (its branch's tip against the snapshot it started from): *base* is the
snapshot's version, *theirs* the tip's, *ours* the workspace file now. Ours equal to base takes theirs; ours
equal to theirs needs nothing; otherwise `git merge-file` merges them, and overlapping hunks are a conflict.
All or nothing: every file is merged in memory first, under the per-file locks, and only when none conflicts
are they written (each atomically, by rename); a conflict writes nothing, so no half-applied change and no
conflict marker ever lands in the person's files. HEAD and the index are never touched: merged changes are
uncommitted, as if the person had made them. Symlinks and submodules are not merged (a conflict, said so).
Git reads the objects in a private git dir (`gitsafe.Private`): nothing the repository configured runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.diffs import FileDiff, diff_text
from agentcli.gitsafe import Private
from agentcli.subagents.worktrees.worktree import Worktree, WorktreeError
from agentcli.tools import FileLocks

_ABSENT = "000000"
_PLAIN_MODES = ("100644", "100755")
MAX_DIFF_FILES = 50  # files whose diff a task's merge event carries (the rest are counted by name only)
MAX_DIFF_BYTES = 1_000_000  # a side bigger than this is not diffed (shown as changed, no lines)


@dataclass(frozen=True, slots=True)
class Change:
    """One file the subagent changed: its path and its mode and blob before (the snapshot) and after (the tip)."""

    path: str
    base_mode: str
    base_blob: str
    their_mode: str
    their_blob: str


@dataclass(slots=True)
class MergePlan:
    """What merging would write (path → new bytes, None to delete, and the file mode), or the conflicts."""

    paths: list[str] = field(default_factory=list)  # every file the subagent changed
    writes: dict[str, tuple[bytes | None, int | None]] = field(default_factory=dict)
    conflicts: dict[str, str] = field(default_factory=dict)  # path → why


def changes(tree: Worktree, tip: str) -> list[Change]:
    """The files `tip` changes against the snapshot (`git diff-tree --raw`, renames as delete and add)."""
    with tree.git.private() as private:
        raw = private.run("diff-tree", "-r", "--raw", "-z", "--no-renames", "--no-abbrev", tree.snapshot,
                          tip).stdout
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    found = []
    for head, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = head.lstrip(":").split()
        if len(parts) >= 4:
            found.append(Change(path, parts[0], parts[2], parts[1], parts[3]))
    return found


def blobs(private: Private, ids: set[str]) -> dict[str, bytes]:
    """The contents of the blobs `ids`, read by one `git cat-file --batch`."""
    order = sorted(ids)
    if not order:
        return {}
    out = private.run("cat-file", "--batch", stdin="".join(f"{i}\n" for i in order).encode()).stdout
    found: dict[str, bytes] = {}
    at = 0
    for blob in order:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise WorktreeError(f"git cat-file failed: {blob} is not a blob")
        size = int(header[2])
        found[blob] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return found


def change_diffs(tree: Worktree, tip: str) -> list[FileDiff]:
    """What the task changed (its snapshot against `tip`), file by file, for the person to look at (blocking).

    A binary or huge file, a symlink or a submodule shows as changed with no lines."""
    found = changes(tree, tip)[:MAX_DIFF_FILES]
    wanted = {b for c in found for m, b in ((c.base_mode, c.base_blob), (c.their_mode, c.their_blob))
              if m in _PLAIN_MODES}
    with tree.git.private() as private:
        contents = blobs(private, wanted)
    diffs = []
    for change in found:
        before = contents.get(change.base_blob, b"") if change.base_mode in _PLAIN_MODES else None
        after = contents.get(change.their_blob, b"") if change.their_mode in _PLAIN_MODES else None
        sides = [side for side in (before, after) if side is not None]
        created = change.base_mode == _ABSENT
        if any(b"\0" in side[:8192] or len(side) > MAX_DIFF_BYTES for side in sides) or (
                before is None and not created) or (after is None and change.their_mode != _ABSENT):
            diffs.append(FileDiff(path=change.path, added=0, removed=0, created=created))
            continue
        old, new = ((side or b"").decode("utf-8", "replace") for side in (before, after))
        diffs.append(diff_text(change.path, old, new, created=created))
    return diffs


def merge_file(private: Private, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    """`git merge-file` of the three versions: the merged bytes, or None when hunks overlap (or it cannot)."""
    with tempfile.TemporaryDirectory(prefix="agentcli-merge-") as tmp:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            (Path(tmp) / name).write_bytes(data)
            names.append(str(Path(tmp) / name))
        proc = private.run("merge-file", "-p", "--quiet", *names, cwd=Path(tmp), check=False)
    return proc.stdout if proc.returncode == 0 else None


def _current(target: Path, workspace: Path) -> tuple[bytes | None, str]:
    """The workspace file's bytes (None: absent), or why it cannot be merged into."""
    parent = Path(os.path.realpath(target.parent))
    if parent != workspace and not parent.is_relative_to(workspace):
        return None, "its folder leads outside the workspace"
    if target.is_symlink():
        return None, "it is a symlink in the workspace"
    if target.exists() and not target.is_file():
        return None, "it is not a regular file in the workspace"
    return (target.read_bytes() if target.exists() else None), ""


def plan_merge(tree: Worktree, found: list[Change], workspace: Path) -> MergePlan:
    """Merge every changed file in memory (blocking; the caller holds their locks)."""
    with tree.git.private() as private:
        return _plan(private, found, workspace)


def _plan(private: Private, found: list[Change], workspace: Path) -> MergePlan:
    plan = MergePlan(paths=sorted(c.path for c in found))
    wanted = {c.base_blob for c in found if c.base_mode != _ABSENT} | {c.their_blob for c in found
                                                                      if c.their_mode != _ABSENT}
    contents = blobs(private, wanted)
    for change in found:
        rel = change.path
        if any(m not in (*_PLAIN_MODES, _ABSENT) for m in (change.base_mode, change.their_mode)):
            plan.conflicts[rel] = "a symlink or submodule (not merged automatically)"
            continue
        base = contents[change.base_blob] if change.base_mode != _ABSENT else None
        theirs = contents[change.their_blob] if change.their_mode != _ABSENT else None
        ours, problem = _current(workspace / rel, workspace)
        if problem:
            plan.conflicts[rel] = problem
            continue
        mode = None if theirs is None else (0o755 if change.their_mode == "100755" else 0o644)
        if change.base_mode == change.their_mode and ours is not None:
            mode = None  # the subagent did not change the mode: the workspace file keeps its own
        if ours == theirs and mode is None:
            continue  # already so
        if ours == base:
            plan.writes[rel] = (theirs, mode)
        elif ours is None or base is None or theirs is None:
            plan.conflicts[rel] = "changed in the workspace meanwhile (added or deleted on one side)"
        else:
            merged = merge_file(private, ours, base, theirs)
            if merged is None:
                plan.conflicts[rel] = "overlapping changes in the workspace meanwhile"
            else:
                plan.writes[rel] = (merged, mode)
    return plan


def _write(target: Path, data: bytes, mode: int | None) -> None:
    """Replace `target` with `data` atomically (a rename), keeping its mode unless `mode` is given."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = target.stat().st_mode & 0o7777 if target.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".agentcli", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def apply(plan: MergePlan, workspace: Path) -> list[str]:
    """Write a conflict-free plan into the workspace; the paths written."""
    for rel, (data, mode) in sorted(plan.writes.items()):
        target = workspace / rel
        if data is None:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
        else:
            _write(target, data, mode)
    return sorted(plan.writes)


async def merge_into(tree: Worktree, tip: str, workspace: Path, locks: FileLocks) -> MergePlan:
    """Merge the branch tip into `workspace` under the per-file locks: all of it, or (conflicts) nothing."""
    found = await asyncio.to_thread(changes, tree, tip)
    root = workspace.resolve()
    async with contextlib.AsyncExitStack() as held:
        for target in sorted({(root / c.path).resolve() for c in found}):  # one order: no deadlock
            await held.enter_async_context(locks.lock(target))
        plan = await asyncio.to_thread(plan_merge, tree, found, root)
        if not plan.conflicts:
            await asyncio.to_thread(apply, plan, root)
    return plan
