"""What a rewind will do, file by file, before it does it; and doing it.

A rewind makes the workspace's files what a checkpoint holds. Each prompt (and each rewind) leaves two trees: the
files before it and after it. What changed between one prompt's "after" and the next one's "before" (or between the
last "after" and now) was changed while no agent ran: by the person. A rewind that would overwrite or remove such
a file says so (`FileChange.by_person`) and leaves it unless told to overwrite it. A file the checkpoint left out
(over the size cap then, a nested repository) is never touched; one that grew past the cap since is put back (its
big version is not kept: that file's rewind cannot be redone).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agentcli.checkpoints.restore import put_back
from agentcli.checkpoints.shadow import Change, ShadowRepo, Skipped, Snapshot
from agentcli.diffs import FileDiff, diff_text

Action = Literal["restore", "recreate", "delete"]
_ACTIONS: dict[str, Action] = {"modified": "restore", "added": "recreate", "deleted": "delete"}
_GITLINK = "160000"


@dataclass(frozen=True, slots=True)
class Span:
    """The files before and after one prompt or rewind (`after` None: it never finished)."""

    before: str
    after: str | None


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file a rewind changes: put back as it was, made again, or removed; whether the person changed it."""

    path: str
    action: Action
    by_person: bool = False


@dataclass(slots=True)
class RewindPlan:
    """Every file a rewind to `target` changes, and what it leaves alone."""

    target: str
    present: Snapshot
    files: list[FileChange] = field(default_factory=list)
    left_out: list[Skipped] = field(default_factory=list)

    @property
    def by_person(self) -> list[FileChange]:
        """The files the person changed since the checkpoint that the rewind would change again."""
        return [f for f in self.files if f.by_person]


def plan_rewind(repo: ShadowRepo, spans: list[Span], present: Snapshot,
                target_skipped: tuple[Skipped, ...] = ()) -> RewindPlan:
    """The rewind to `spans[0].before` from `present`; `spans` are that checkpoint's prompt and every prompt or
    rewind after it, in order."""
    target = spans[0].before
    person = _person_paths(repo, spans, present.tree)
    untouchable = {s.path for s in target_skipped}  # its content then is unknown: it stays as it is
    big_now = {s.path for s in present.skipped}  # grown past the cap since: put back (no change hides in size)
    plan = RewindPlan(target, present)
    for change in repo.changes(present.tree, target):
        if _GITLINK in (change.old_mode, change.new_mode) or change.path in untouchable:
            continue
        action = "restore" if change.path in big_now else _ACTIONS[change.kind]
        plan.files.append(FileChange(change.path, action, change.path in person))
    changed = {f.path for f in plan.files}
    plan.left_out = list({s.path: s for s in (*target_skipped, *present.skipped) if s.path not in changed}.values())
    return plan


def _person_paths(repo: ShadowRepo, spans: list[Span], present: str) -> set[str]:
    """Paths that changed while no agent ran: between one span's end and the next one's start, and since the
    last one ended."""
    found: set[str] = set()
    ends = [span.after for span in spans]
    starts = [span.before for span in spans[1:]] + [present]
    for end, start in zip(ends, starts, strict=True):
        if end is not None and end != start:
            found.update(c.path for c in repo.changes(end, start))
    return found


def apply_plan(repo: ShadowRepo, plan: RewindPlan, *, overwrite: bool | set[str] = False) -> tuple[
        list[FileChange], list[str]]:
    """Carry the plan out; a file the person changed only when `overwrite` is True or names it. (The files changed,
    the problems: the files kept and the ones that could not be changed, one line each.)"""
    chosen: list[FileChange] = []
    kept: list[str] = []
    for change in plan.files:
        if change.by_person and not (overwrite is True or (isinstance(overwrite, set) and change.path in overwrite)):
            kept.append(f"{change.path}: kept (changed outside an agent's turn since the checkpoint)")
        else:
            chosen.append(change)
    write = [c.path for c in chosen if c.action != "delete"]
    delete = [c.path for c in chosen if c.action == "delete"]
    failed = put_back(repo, plan.target, write, delete)
    return chosen, kept + failed


def changed_paths(changes: list[Change]) -> list[str]:
    """The paths of a list of changes, in order."""
    return [c.path for c in changes]


def file_diff(repo: ShadowRepo, plan: RewindPlan, change: FileChange) -> FileDiff:
    """What the rewind does to one file, as a diff from its present text to the checkpoint's (a binary file:
    counts only)."""
    now = repo.blob(plan.present.tree, change.path) if change.action != "recreate" else b""
    then = repo.blob(plan.target, change.path) if change.action != "delete" else b""
    old, new = now or b"", then or b""
    if b"\0" in old[:8192] or b"\0" in new[:8192]:
        return FileDiff(path=change.path, added=0, removed=0, created=change.action == "recreate")
    return diff_text(change.path, old.decode("utf-8", "replace"), new.decode("utf-8", "replace"),
                     created=change.action == "recreate", max_lines=None)
