"""What isolated tasks leave in a repository: listing it, and pruning what no running process owns.

A task's worktree is *live* while the process that made it runs (its owner file, `worktree.owner_file`, names
the pid and start time); a kill -9 leaves it behind. Pruning one commits what it changed on its branch and keeps
the branch (as for a task that did not complete), or removes the branch too when nothing changed. Kept branches
`agentcli/<task id>` stay until `agentcli worktrees prune --branches` removes those of finished tasks.
`prune_at_start` runs when a session opens: a glob of the worktree folder, and git only when something is left.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentcli.paths import worktrees_dir
from agentcli.store.writes import process_alive
from agentcli.subagents import worktree
from agentcli.subagents.worktree import Git, Worktree, WorktreeError

log = logging.getLogger(__name__)

BRANCH_PREFIX = "agentcli/"


@dataclass(frozen=True, slots=True)
class Owner:
    """An owner file: the process that made a worktree, for which session workspace, from which snapshot."""

    pid: int | None
    started: int | None
    workspace: str
    branch: str
    snapshot: str
    created: float

    @property
    def alive(self) -> bool:
        return process_alive(self.pid, self.started)


@dataclass(frozen=True, slots=True)
class Leftover:
    """One task's trace in the repository: its kept branch and/or its worktree (and who owns that)."""

    task_id: str
    branch: str | None  # the branch, when it exists
    path: Path | None  # the worktree folder, when git knows it
    owner: Owner | None
    since: float | None  # when the worktree was made, else the branch's last commit (seconds since the epoch)

    @property
    def live(self) -> bool:
        """Whether a running process owns its worktree."""
        return self.path is not None and self.owner is not None and self.owner.alive


def read_owner(file: Path) -> Owner | None:
    """The owner file's contents, or None when it is missing or unreadable."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        return Owner(pid=data.get("pid"), started=data.get("started"), workspace=str(data["workspace"]),
                     branch=str(data["branch"]), snapshot=str(data["snapshot"]), created=float(data["created"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _worktrees(git: Git, workspace: Path) -> dict[str, Path]:
    """agentcli's worktrees of the repository (`git worktree list`): task id → folder."""
    out = git.run(workspace, "worktree", "list", "--porcelain", "-z").stdout.decode("utf-8", "surrogateescape")
    found: dict[str, Path] = {}
    path: Path | None = None
    for line in out.split("\0"):
        if line.startswith("worktree "):
            path = Path(line.removeprefix("worktree "))
        elif line.startswith(f"branch refs/heads/{BRANCH_PREFIX}") and path is not None:
            found[line.removeprefix(f"branch refs/heads/{BRANCH_PREFIX}")] = path
    return found


def _branches(git: Git, workspace: Path) -> dict[str, float]:
    """agentcli's branches: task id → the time of its last commit."""
    out = git.text(workspace, "for-each-ref", "--format=%(refname:short) %(committerdate:unix)",
                   f"refs/heads/{BRANCH_PREFIX}")
    found: dict[str, float] = {}
    for line in out.splitlines():
        name, _, when = line.rpartition(" ")
        if name.startswith(BRANCH_PREFIX):
            found[name.removeprefix(BRANCH_PREFIX)] = float(when or 0)
    return found


def leftovers(workspace: Path) -> list[Leftover]:
    """Every agentcli branch and worktree of `workspace`'s repository, oldest first. Raises `WorktreeError`."""
    git = worktree.repository(workspace)
    trees, branches = _worktrees(git, workspace), _branches(git, workspace)
    found = []
    for task_id in sorted(set(trees) | set(branches)):
        path = trees.get(task_id)
        owner = read_owner(worktree.owner_file(path)) if path is not None else None
        since = owner.created if owner is not None else branches.get(task_id)
        found.append(Leftover(task_id, BRANCH_PREFIX + task_id if task_id in branches else None, path, owner, since))
    return sorted(found, key=lambda item: (item.since or 0, item.task_id))


def _dispose(git: Git, workspace: Path, path: Path, branch: str, snapshot: str | None) -> str:
    """Remove a dead worktree: its changes committed on its branch (kept), or the branch removed too when nothing
    changed; what became of it, as the end of a sentence."""
    tip = None
    if snapshot is not None and path.is_dir():
        tree = Worktree(workspace, path, branch, snapshot, git)
        try:
            tip = worktree.commit_all(tree, f"agentcli: {branch}, left by a process that is gone")
        except WorktreeError as exc:  # keep the branch: whatever it committed is there
            log.warning("worktree %s: %s", path, exc)
            tip = "unknown"
    keep = snapshot is None or tip is not None
    worktree.remove(Worktree(workspace, path, branch, snapshot or "", git), keep_branch=keep)
    with contextlib.suppress(OSError):
        worktree.owner_file(path).unlink()
    if path.exists():
        return f"could not be removed ({path})"
    return f"its changes are kept on branch {branch}" if keep else "it had no changes (its branch is removed too)"


def prune(workspace: Path, *, branches: bool = False, finished: Callable[[str], bool] | None = None) -> list[str]:
    """Remove the worktrees of `workspace`'s repository whose process is gone and, with `branches`, the kept
    branches of finished tasks (`finished(task_id)`; default: all without a live worktree); a line for each.
    Raises `WorktreeError`."""
    git = worktree.repository(workspace)
    done: list[str] = []
    for item in leftovers(workspace):
        if item.path is not None and not item.live:
            branch = item.branch or BRANCH_PREFIX + item.task_id
            snapshot = item.owner.snapshot if item.owner is not None else None
            how = _dispose(git, workspace, item.path, branch, snapshot)
            done.append(f"Removed the worktree of task {item.task_id} (its process is gone): {how}.")
    git.run(workspace, "worktree", "prune", check=False)
    if branches:
        for item in leftovers(workspace):
            if item.branch is not None and item.path is None and (finished is None or finished(item.task_id)):
                git.run(workspace, "branch", "-D", "--quiet", item.branch)
                done.append(f"Removed branch {item.branch} (task {item.task_id}).")
    return done


def prune_at_start(workspace: Path) -> list[str]:
    """When a session opens: prune the worktrees that sessions in `workspace` left behind when their process died
    (nothing to do, the usual case, costs one glob); a line for each, failures logged."""
    root = worktrees_dir()
    if not root.is_dir():
        return []
    where = str(workspace.resolve())
    dead = [(file, owner) for file in root.glob(f"*/*{worktree.OWNER_SUFFIX}")
            if (owner := read_owner(file)) is not None and owner.workspace == where and not owner.alive]
    if not dead:
        return []
    try:
        git = worktree.repository(workspace)
    except WorktreeError as exc:
        log.warning("cannot prune worktrees left in %s: %s", workspace, exc)
        return []
    done = []
    for file, owner in dead:
        path = file.with_name(file.name.removesuffix(worktree.OWNER_SUFFIX))
        try:
            how = _dispose(git, workspace, path, owner.branch, owner.snapshot)
        except WorktreeError as exc:
            log.warning("cannot prune worktree %s: %s", path, exc)
            continue
        done.append(f"Removed worktree {path} left by process {owner.pid}: {how}.")
        log.info("%s", done[-1])
    git.run(workspace, "worktree", "prune", check=False)
    return done


def age(since: float | None, now: float | None = None) -> str:
    """How long ago `since` was, in one short unit ("-" when unknown)."""
    if since is None:
        return "-"
    seconds = max(0.0, (now if now is not None else time.time()) - since)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"
