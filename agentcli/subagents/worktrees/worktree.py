"""A subagent's git worktree: checking the repository, the starting snapshot, creating and removing it.

The worktree lives outside the workspace, beside agentcli's data folder (`paths.worktrees_dir()/<repo hash>/<task
id>`: the Bash sandbox hides the data folder itself from commands, and the subagent's commands run there), on
the branch `agentcli/<task id>`, checked out at a *snapshot* of the workspace as the person sees it: HEAD plus
uncommitted and untracked (not ignored) files. The snapshot is a commit built with a temporary index (a copy of
the person's, for what git knows of unchanged files): the person's index, HEAD and branches are never touched.

Git runs through `gitsafe`, so nothing the repository (or a task, in its worktree) configured ever runs: against
the repository only refs and worktree bookkeeping (the worktree is added with `--no-checkout`); the snapshot, the
checkout and the commit of what the task changed run in a private git dir over the repository's objects, with
the work tree and the index named by absolute path. A worktree's `.git` file is in the task's reach: agentcli
never follows it, and commits nothing of a worktree whose `.git` no longer points where agentcli made it.

Beside each worktree folder, `<task id>.owner.json` says which process made it (pid and start time), for which
workspace, on which branch and snapshot, with which git dir: a worktree whose process is gone is pruned at the
next start (`worktree_admin`). It is written before the worktree exists and removed after it is gone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agentcli.gitsafe import (
    GitError,
    NoRepository,
    Private,
    Repo,
    copy_index,
    git_executable,
    identity,
    read_regular,
)
from agentcli.paths import ensure_private_dir, worktrees_dir
from agentcli.store import own_identity

__all__ = ["FALLBACK_IDENTITY", "OWNER_SUFFIX", "Worktree", "WorktreeError", "commit_all", "create",
           "git_executable", "owner_file", "remove", "repository", "snapshot", "worktree_root", "write_owner"]

#: The author and committer of agentcli's commits when the person has no git identity.
FALLBACK_IDENTITY = {"GIT_AUTHOR_NAME": "agentcli", "GIT_AUTHOR_EMAIL": "agentcli@localhost",
                     "GIT_COMMITTER_NAME": "agentcli", "GIT_COMMITTER_EMAIL": "agentcli@localhost"}
_UNAVAILABLE = "Worktree isolation is unavailable: "
_CHANGED_GIT = ("its worktree's .git was changed (it no longer points to the repository agentcli made it in), "
                "so nothing of it was committed")
OWNER_SUFFIX = ".owner.json"

#: Isolation cannot be set up or a git command failed; the message is one line (any `gitsafe` failure is one).
WorktreeError = GitError


@dataclass(frozen=True, slots=True)
class Worktree:
    """One task's worktree: where it is, its branch, the snapshot it started from and its git dir."""

    repo: Path  # the folder it was made from (the workspace, or the parent's worktree), resolved
    path: Path
    branch: str
    snapshot: str  # the commit it started from
    git: Repo  # the repository of `repo`
    admin: Path | None = None  # the worktree's git dir as agentcli made it (`<common>/worktrees/<name>`)

    def look(self) -> str:
        """How the person sees what it changed."""
        return f"git diff {self.snapshot[:12]} {self.branch}"


def repository(workspace: Path) -> Repo:
    """The git of `workspace`, or a `WorktreeError` with why isolation is unavailable there (one line)."""
    if git_executable() is None:
        raise WorktreeError(_UNAVAILABLE + "git is not installed (no git on PATH); run the task without isolation")
    try:
        git = Repo.discover(workspace)
    except NoRepository:
        raise WorktreeError(_UNAVAILABLE + f"{workspace} is not a git repository (run `git init` and commit "
                                           "first)") from None
    except GitError:
        raise WorktreeError(_UNAVAILABLE + f"git cannot read the repository of {workspace}") from None
    if git.top is None:
        raise WorktreeError(_UNAVAILABLE + f"{workspace} is a bare repository (no working tree to start from)")
    if git.top.resolve() != workspace.resolve():
        raise WorktreeError(_UNAVAILABLE + f"the workspace is not the top of its repository ({git.top}); "
                                           "start agentcli there")
    if git.plumbing("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).returncode != 0:
        raise WorktreeError(_UNAVAILABLE + "the repository has no commits yet (commit once first)")
    return git


def worktree_root(workspace: Path) -> Path:
    """Where the worktrees of `workspace`'s tasks go: `worktrees_dir()/<hash of its path>`."""
    digest = hashlib.sha256(str(workspace.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return worktrees_dir() / digest


def _add_all(private: Private, work_tree: Path, index: Path, copied: bool) -> str:
    """`git add -A` of `work_tree` into `index` (a copy of its own, when `copied`), then the tree it makes."""
    try:
        private.run("add", "-A", "--", ".", work_tree=work_tree, index=index)
    except GitError:
        if not copied:
            raise
        index.unlink(missing_ok=True)  # an index this git dir cannot read (a split index): start from none
        private.run("add", "-A", "--", ".", work_tree=work_tree, index=index)
    return private.text("write-tree", index=index)


def _commit_tree(git: Repo, private: Private, tree: str, parent: str, message: str) -> str:
    """A commit of `tree` on `parent` by the person (agentcli when git does not know them); no ref moves."""
    who = identity(git) or FALLBACK_IDENTITY
    return private.text("commit-tree", tree, "-p", parent, "-m", message, extra_env=who)


def snapshot(git: Repo, workspace: Path, label: str) -> str:
    """A commit of the workspace as the person sees it (HEAD's when nothing changed); the index stays as it is."""
    head = git.text("rev-parse", "--verify", "HEAD^{commit}")
    with git.private(excludes=True) as private:
        index = private.git_dir / "index"
        tree = _add_all(private, workspace, index, copy_index(git.git_dir / "index", index))
        if tree == private.text("rev-parse", f"{head}^{{tree}}"):
            return head
        return _commit_tree(git, private, tree, head, f"agentcli: the workspace as {label} started from it")


def owner_file(path: Path) -> Path:
    """The file beside worktree `path` naming the process that owns it."""
    return path.with_name(path.name + OWNER_SUFFIX)


def write_owner(path: Path, *, workspace: Path, repo: Path, branch: str, snapshot: str,
                gitdir: Path | None = None) -> None:
    """Say that this process owns worktree `path` (of the session in `workspace`), atomically."""
    pid, started = own_identity()
    owner = {"pid": pid, "started": started, "workspace": str(workspace), "repo": str(repo), "branch": branch,
             "snapshot": snapshot, "created": time.time(), "gitdir": str(gitdir) if gitdir else None}
    target = owner_file(path)
    tmp = target.with_name(f".{target.name}.{pid}")
    tmp.write_text(json.dumps(owner), encoding="utf-8")
    os.replace(tmp, target)


def _points_to(file: Path, base: Path) -> Path | None:
    """Where a `gitdir: X` file (or a worktree's `gitdir` file, a bare path) points, made absolute; None if it
    is not a small regular file."""
    raw = read_regular(file, 4096)
    if raw is None:
        return None
    text = raw.decode("utf-8", "surrogateescape").strip().removeprefix("gitdir:").strip()
    return Path(os.path.normpath(base / text)) if text else None


def git_dir_of(git: Repo, path: Path) -> Path:
    """The git dir of agentcli's worktree `path`, checked both ways: its `.git` file names a folder of the
    repository's `worktrees/`, and that folder names `path/.git` back. Raises `WorktreeError`."""
    admin = _points_to(path / ".git", path)
    worktrees = Path(os.path.realpath(git.common_dir / "worktrees"))
    if admin is None or Path(os.path.realpath(admin.parent)) != worktrees:
        raise WorktreeError(_CHANGED_GIT)
    back = _points_to(admin / "gitdir", admin)
    if back is None or os.path.realpath(back) != os.path.realpath(path / ".git"):
        raise WorktreeError(_CHANGED_GIT)
    return admin


def checked_git_dir(tree: Worktree) -> Path:
    """The worktree's git dir, after checking that its `.git` still points where agentcli made it."""
    admin = git_dir_of(tree.git, tree.path)
    if tree.admin is not None and os.path.realpath(admin) != os.path.realpath(tree.admin):
        raise WorktreeError(_CHANGED_GIT)
    return admin


_ADMIN_LOCKS: dict[Path, threading.Lock] = {}
_ADMIN_GUARD = threading.Lock()


def _admin_lock(git: Repo) -> threading.Lock:
    """One lock per repository for `git worktree add` and `remove`: git reads every worktree's admin folder while it
    adds one, and fails on one another add is still writing (many parallel writers)."""
    with _ADMIN_GUARD:
        return _ADMIN_LOCKS.setdefault(git.common_dir, threading.Lock())


def create(workspace: Path, task_id: str, session_workspace: Path | None = None) -> Worktree:
    """The worktree of one task, at a snapshot of `workspace` (blocking: call it in a thread); its owner file
    names this process and `session_workspace` (default: `workspace`), where the next start looks for it."""
    git = repository(workspace)
    repo = workspace.resolve()
    root = ensure_private_dir(worktree_root(repo))
    path = root / task_id
    if path.resolve().is_relative_to(repo):
        raise WorktreeError(_UNAVAILABLE + f"agentcli's worktree folder ({root}) is inside the workspace")
    start = snapshot(git, repo, task_id)
    branch = f"agentcli/{task_id}"
    session = (session_workspace or repo).resolve()
    write_owner(path, workspace=session, repo=repo, branch=branch, snapshot=start)
    try:
        with _admin_lock(git):
            git.plumbing("worktree", "add", "--quiet", "--no-checkout", "-b", branch, str(path), start)
    except GitError:
        with contextlib.suppress(OSError):
            owner_file(path).unlink()
        raise
    tree = Worktree(repo, path.resolve(), branch, start, git)
    try:
        admin = git_dir_of(git, tree.path)
        tree = dataclasses.replace(tree, admin=admin)
        with git.private() as private:  # the checkout: the repository's filters and hooks are not there
            private.run("read-tree", "--reset", "-u", start, work_tree=tree.path, index=admin / "index")
        write_owner(path, workspace=session, repo=repo, branch=branch, snapshot=start, gitdir=admin)
    except BaseException:
        remove(tree, keep_branch=False)
        raise
    return tree


def _own_folder(path: Path) -> bool:
    """Whether `path` is a folder of agentcli's worktree root (never a symlink, never elsewhere)."""
    root = Path(os.path.realpath(worktrees_dir()))
    return not path.is_symlink() and Path(os.path.realpath(path.parent)).is_relative_to(root)


def remove(tree: Worktree, *, keep_branch: bool) -> None:
    """Remove the worktree, its owner file (and its branch unless `keep_branch`); what git cannot remove is left
    and logged. Only a folder under agentcli's worktree root is ever removed."""
    git = tree.git
    if not _own_folder(tree.path):
        raise WorktreeError(f"{tree.path} is not one of agentcli's worktrees; not removed")
    with _admin_lock(git):
        git.plumbing("worktree", "remove", "--force", str(tree.path), check=False)
    if tree.path.exists():
        shutil.rmtree(tree.path, ignore_errors=True)
        git.plumbing("worktree", "prune", check=False)
    if not tree.path.exists():
        with contextlib.suppress(OSError):
            owner_file(tree.path).unlink()
    if not keep_branch:
        git.plumbing("branch", "-D", "--quiet", tree.branch, check=False)


def commit_all(tree: Worktree, message: str) -> str | None:
    """Commit everything in the worktree on its branch; the branch's new tip, or None when nothing differs from
    the snapshot (the subagent's own commits count). Raises `WorktreeError`, committing nothing, when the
    worktree's `.git` no longer points where agentcli made it."""
    git, path = tree.git, tree.path
    admin = checked_git_dir(tree)
    tip = git.text("rev-parse", "--verify", f"refs/heads/{tree.branch}^{{commit}}")
    with git.private(excludes=True) as private:
        index = private.git_dir / "index"
        tree_id = _add_all(private, path, index, copy_index(admin / "index", index))
        if tree_id == private.text("rev-parse", f"{tree.snapshot}^{{tree}}"):
            return None
        if tree_id == private.text("rev-parse", f"{tip}^{{tree}}"):
            return tip
        new = _commit_tree(git, private, tree_id, tip, message)
    git.plumbing("update-ref", f"refs/heads/{tree.branch}", new, tip)
    return new


def is_inside(path: Path, root: Path) -> bool:
    """Whether `path`, symlinks followed, is `root` or below it."""
    real = Path(os.path.realpath(path))
    return real == root or real.is_relative_to(root)
