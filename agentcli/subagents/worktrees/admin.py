"""What isolated tasks leave in a repository: listing it, and pruning what no running process owns.

A task's worktree is *live* while the process that made it runs (its owner file, `worktree.owner_file`, names
the pid and start time); a kill -9 leaves it behind. Pruning one commits what it changed on its branch and keeps
the branch (as for a task that did not complete), or removes the branch too when nothing changed. Kept branches
`agentcli/<task id>` stay until `agentcli worktrees prune --branches` removes those of finished tasks.
`prune_at_start` runs when a session opens: a glob of the worktree folder, and git only when something is left.

agentcli's worktrees are those its owner files name, in its own worktree root: a worktree is always the folder
beside its owner file, never a path read from the repository (`.git/worktrees/<n>/gitdir` is the repository's,
or a sandboxed command's, to write), so nothing outside that root is ever removed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentcli.gitsafe import Repo
from agentcli.paths import worktrees_dir
from agentcli.store import process_alive
from agentcli.subagents.worktrees import worktree
from agentcli.subagents.worktrees.worktree import Worktree, WorktreeError

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
    repo: str | None = None  # the folder it was made from
    gitdir: str | None = None  # its git dir, as agentcli made it

    @property
    def alive(self) -> bool:
        return process_alive(self.pid, self.started)


@dataclass(frozen=True, slots=True)
class Leftover:
    """One task's trace in the repository: its kept branch and/or its worktree (and who owns that)."""

    task_id: str
    branch: str | None  # the branch, when it exists
    path: Path | None  # the worktree folder, when agentcli's owner file names it
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
        repo, gitdir = data.get("repo"), data.get("gitdir")
        return Owner(pid=data.get("pid"), started=data.get("started"), workspace=str(data["workspace"]),
                     branch=str(data["branch"]), snapshot=str(data["snapshot"]), created=float(data["created"]),
                     repo=str(repo) if repo else None, gitdir=str(gitdir) if gitdir else None)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def owned(workspace: Path) -> list[tuple[Path, Owner]]:
    """The worktrees agentcli made for sessions in `workspace`: (the folder beside each owner file, its owner)."""
    root = worktrees_dir()
    if not root.is_dir():
        return []
    where = str(workspace.resolve())
    found = []
    for file in sorted(root.glob(f"*/*{worktree.OWNER_SUFFIX}")):
        owner = read_owner(file)
        if owner is not None and owner.workspace == where:
            found.append((file.with_name(file.name.removesuffix(worktree.OWNER_SUFFIX)), owner))
    return found


def _branches(git: Repo) -> dict[str, float]:
    """agentcli's branches: task id → the time of its last commit."""
    out = git.text("for-each-ref", "--format=%(refname:short) %(committerdate:unix)", f"refs/heads/{BRANCH_PREFIX}")
    found: dict[str, float] = {}
    for line in out.splitlines():
        name, _, when = line.rpartition(" ")
        if name.startswith(BRANCH_PREFIX):
            found[name.removeprefix(BRANCH_PREFIX)] = float(when or 0)
    return found


def leftovers(workspace: Path) -> list[Leftover]:
    """Every agentcli branch of `workspace`'s repository and every worktree agentcli made for it, oldest first.
    Raises `WorktreeError`."""
    git = worktree.repository(workspace)
    branches = _branches(git)
    trees = {path.name: (path, owner) for path, owner in owned(workspace)}
    found = []
    for task_id in sorted(set(trees) | set(branches)):
        path, owner = trees.get(task_id, (None, None))
        since = owner.created if owner is not None else branches.get(task_id)
        found.append(Leftover(task_id, BRANCH_PREFIX + task_id if task_id in branches else None, path, owner, since))
    return sorted(found, key=lambda item: (item.since or 0, item.task_id))


def _dispose(git: Repo, workspace: Path, path: Path, owner: Owner) -> str:
    """Remove a dead worktree: its changes committed on its branch (kept), or the branch removed too when nothing
    changed; what became of it, as the end of a sentence."""
    tree = Worktree(Path(owner.repo or workspace), path, owner.branch, owner.snapshot, git,
                    Path(owner.gitdir) if owner.gitdir else None)
    tip = None
    if path.is_dir():
        try:
            tip = worktree.commit_all(tree, f"agentcli: {owner.branch}, left by a process that is gone")
        except WorktreeError as exc:  # keep the branch: whatever it committed is there
            log.warning("worktree %s: %s", path, exc)
            tip = "unknown"
    keep = tip is not None
    worktree.remove(tree, keep_branch=keep)
    with contextlib.suppress(OSError):
        worktree.owner_file(path).unlink()
    if path.exists():
        return f"could not be removed ({path})"
    return f"its changes are kept on branch {owner.branch}" if keep else "it had no changes (its branch is removed too)"


def prune(workspace: Path, *, branches: bool = False, finished: Callable[[str], bool] | None = None) -> list[str]:
    """Remove the worktrees agentcli made for `workspace` whose process is gone and, with `branches`, the kept
    branches of finished tasks (`finished(task_id)`; default: all without a live worktree); a line for each.
    Raises `WorktreeError`."""
    git = worktree.repository(workspace)
    done: list[str] = []
    for item in leftovers(workspace):
        if item.path is not None and item.owner is not None and not item.live:
            how = _dispose(git, workspace, item.path, item.owner)
            done.append(f"Removed the worktree of task {item.task_id} (its process is gone): {how}.")
    git.plumbing("worktree", "prune", check=False)
    if branches:
        for item in leftovers(workspace):
            if item.branch is not None and item.path is None and (finished is None or finished(item.task_id)):
                gone = git.plumbing("branch", "-D", "--quiet", item.branch, check=False)
                if gone.returncode == 0:
                    done.append(f"Removed branch {item.branch} (task {item.task_id}).")
                else:
                    why = " ".join(gone.stderr.decode("utf-8", "replace").split())[:200]
                    done.append(f"Kept branch {item.branch}: git would not remove it ({why}).")
    return done


def prune_at_start(workspace: Path) -> list[str]:
    """When a session opens: prune the worktrees that sessions in `workspace` left behind when their process died
    (nothing to do, the usual case, costs one glob); a line for each, failures logged."""
    dead = [(path, owner) for path, owner in owned(workspace) if not owner.alive]
    if not dead:
        return []
    try:
        git = worktree.repository(workspace)
    except WorktreeError as exc:
        log.warning("cannot prune worktrees left in %s: %s", workspace, exc)
        return []
    done = []
    for path, owner in dead:
        try:
            how = _dispose(git, workspace, path, owner)
        except WorktreeError as exc:
            log.warning("cannot prune worktree %s: %s", path, exc)
            continue
        done.append(f"Removed worktree {path} left by process {owner.pid}: {how}.")
        log.info("%s", done[-1])
    git.plumbing("worktree", "prune", check=False)
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
