"""A subagent's git worktree: checking the repository, the starting snapshot, creating and removing it.

The worktree lives outside the workspace, beside agentcli's data folder (`paths.worktrees_dir()/<repo hash>/<task
id>`: the Bash sandbox hides the data folder itself from commands, and the subagent's commands run there), on
the branch `agentcli/<task id>`, checked out at a *snapshot* of the workspace as the person sees it: HEAD plus
uncommitted and untracked (not ignored) files. The snapshot is a commit built with a temporary index
(`git add -A` into a copy of the index, `write-tree`, `commit-tree`): the person's index, HEAD and branches are
never touched. Git runs through its own command line, with nothing the repository configured that would run a
command (fsmonitor, its own filter drivers: `prompts.safe_git_env`; hooks: `core.hooksPath=/dev/null`).

Beside each worktree folder, `<task id>.owner.json` says which process made it (pid and start time), for which
workspace, on which branch and snapshot: a worktree whose process is gone is pruned at the next start
(`worktree_admin`). It is written before the worktree exists and removed after it is gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentcli.paths import ensure_private_dir, worktrees_dir
from agentcli.prompts import git_executable, safe_git_env
from agentcli.store.writes import own_identity

#: The author and committer of agentcli's commits when the person has no git identity.
FALLBACK_IDENTITY = {"GIT_AUTHOR_NAME": "agentcli", "GIT_AUTHOR_EMAIL": "agentcli@localhost",
                     "GIT_COMMITTER_NAME": "agentcli", "GIT_COMMITTER_EMAIL": "agentcli@localhost"}
_GIT_TIMEOUT = 120.0
_UNAVAILABLE = "Worktree isolation is unavailable: "
OWNER_SUFFIX = ".owner.json"


class WorktreeError(Exception):
    """Isolation cannot be set up or a git command failed; the message is one line."""


@dataclass(frozen=True, slots=True)
class Git:
    """`git` for one repository folder, run safely (see the module docstring)."""

    exe: str
    env: Mapping[str, str]

    def run(self, cwd: Path, *args: str, extra_env: Mapping[str, str] | None = None, check: bool = True,
            stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run `git ARGS` in `cwd`; a failure (with `check`) is a `WorktreeError` naming the command."""
        env = {**self.env, **(extra_env or {})}
        try:
            proc = subprocess.run([self.exe, "-c", "core.hooksPath=/dev/null", *args], cwd=cwd, env=env,
                                  input=stdin, capture_output=True, timeout=_GIT_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WorktreeError(f"git {args[0]} failed: {exc}") from None
        if check and proc.returncode != 0:
            why = " ".join(proc.stderr.decode("utf-8", "replace").split())[:300]
            raise WorktreeError(f"git {args[0]} failed: {why or f'exit code {proc.returncode}'}")
        return proc

    def text(self, cwd: Path, *args: str, extra_env: Mapping[str, str] | None = None) -> str:
        """The stripped output of `git ARGS` in `cwd`."""
        return self.run(cwd, *args, extra_env=extra_env).stdout.decode("utf-8", "surrogateescape").strip()

    def identity(self, cwd: Path) -> dict[str, str]:
        """Nothing when git knows who commits here, else agentcli's fallback author and committer."""
        known = self.run(cwd, "var", "GIT_COMMITTER_IDENT", check=False).returncode == 0
        known = known and self.run(cwd, "var", "GIT_AUTHOR_IDENT", check=False).returncode == 0
        return {} if known else dict(FALLBACK_IDENTITY)

    def commit_tree(self, cwd: Path, tree: str, parent: str, message: str) -> str:
        """A commit of `tree` on `parent` (no ref moves)."""
        return self.text(cwd, "commit-tree", tree, "-p", parent, "-m", message, extra_env=self.identity(cwd))


@dataclass(frozen=True, slots=True)
class Worktree:
    """One task's worktree: where it is, its branch, and the snapshot it started from."""

    repo: Path  # the folder it was made from (the workspace, or the parent's worktree), resolved
    path: Path
    branch: str
    snapshot: str  # the commit it started from
    git: Git

    def look(self) -> str:
        """How the person sees what it changed."""
        return f"git diff {self.snapshot[:12]} {self.branch}"


def repository(workspace: Path) -> Git:
    """The git of `workspace`, or a `WorktreeError` with why isolation is unavailable there (one line)."""
    exe = git_executable()
    if exe is None:
        raise WorktreeError(_UNAVAILABLE + "git is not installed (no git on PATH); run the task without isolation")
    env = safe_git_env(exe, workspace)
    if env is None:
        raise WorktreeError(_UNAVAILABLE + f"git cannot read the configuration of {workspace}")
    git = Git(exe, env)
    bare = git.run(workspace, "rev-parse", "--is-bare-repository", check=False)
    if bare.returncode != 0:
        raise WorktreeError(_UNAVAILABLE + f"{workspace} is not a git repository (run `git init` and commit first)")
    top_line = git.run(workspace, "rev-parse", "--show-toplevel", check=False)
    if bare.stdout.strip() == b"true" or top_line.returncode != 0 or not top_line.stdout.strip():
        raise WorktreeError(_UNAVAILABLE + f"{workspace} is a bare repository (no working tree to start from)")
    top = Path(top_line.stdout.decode("utf-8", "surrogateescape").strip()).resolve()
    if top != workspace.resolve():
        raise WorktreeError(_UNAVAILABLE + f"the workspace is not the top of its repository ({top}); "
                                           "start agentcli there")
    if git.run(workspace, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).returncode != 0:
        raise WorktreeError(_UNAVAILABLE + "the repository has no commits yet (commit once first)")
    return git


def worktree_root(workspace: Path) -> Path:
    """Where the worktrees of `workspace`'s tasks go: `worktrees_dir()/<hash of its path>`."""
    digest = hashlib.sha256(str(workspace.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return worktrees_dir() / digest


def snapshot(git: Git, workspace: Path, label: str) -> str:
    """A commit of the workspace as the person sees it (HEAD's when nothing changed); the index stays as it is."""
    head = git.text(workspace, "rev-parse", "HEAD^{commit}")
    index = Path(git.text(workspace, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    with tempfile.TemporaryDirectory(prefix="agentcli-index-") as tmp:
        scratch = Path(tmp) / "index"
        if index.is_file():  # a copy: git reuses what it knows of unchanged files
            shutil.copyfile(index, scratch)
        own = {"GIT_INDEX_FILE": str(scratch)}
        git.run(workspace, "add", "-A", "--", ".", extra_env=own)
        tree = git.text(workspace, "write-tree", extra_env=own)
    if tree == git.text(workspace, "rev-parse", "HEAD^{tree}"):
        return head
    return git.commit_tree(workspace, tree, head, f"agentcli: the workspace as {label} started from it")


def owner_file(path: Path) -> Path:
    """The file beside worktree `path` naming the process that owns it."""
    return path.with_name(path.name + OWNER_SUFFIX)


def write_owner(path: Path, *, workspace: Path, repo: Path, branch: str, snapshot: str) -> None:
    """Say that this process owns worktree `path` (of the session in `workspace`), atomically."""
    pid, started = own_identity()
    owner = {"pid": pid, "started": started, "workspace": str(workspace), "repo": str(repo), "branch": branch,
             "snapshot": snapshot, "created": time.time()}
    target = owner_file(path)
    tmp = target.with_name(f".{target.name}.{pid}")
    tmp.write_text(json.dumps(owner), encoding="utf-8")
    os.replace(tmp, target)


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
    write_owner(path, workspace=(session_workspace or repo).resolve(), repo=repo, branch=branch, snapshot=start)
    try:
        git.run(repo, "worktree", "add", "--quiet", "-b", branch, str(path), start)
    except WorktreeError:
        with contextlib.suppress(OSError):
            owner_file(path).unlink()
        raise
    return Worktree(repo, path.resolve(), branch, start, git)


def remove(tree: Worktree, *, keep_branch: bool) -> None:
    """Remove the worktree, its owner file (and its branch unless `keep_branch`); what git cannot remove is left
    and logged."""
    tree.git.run(tree.repo, "worktree", "remove", "--force", str(tree.path), check=False)
    if tree.path.exists():
        shutil.rmtree(tree.path, ignore_errors=True)
        tree.git.run(tree.repo, "worktree", "prune", check=False)
    if not tree.path.exists():
        with contextlib.suppress(OSError):
            owner_file(tree.path).unlink()
    if not keep_branch:
        tree.git.run(tree.repo, "branch", "-D", "--quiet", tree.branch, check=False)


def commit_all(tree: Worktree, message: str) -> str | None:
    """Commit everything in the worktree on its branch; the branch's new tip, or None when nothing differs from
    the snapshot (the subagent's own commits count)."""
    git, path = tree.git, tree.path
    git.run(path, "add", "-A", "--", ".")
    tree_id = git.text(path, "write-tree")
    if tree_id == git.text(path, "rev-parse", f"{tree.snapshot}^{{tree}}"):
        return None
    head = git.text(path, "rev-parse", "HEAD^{commit}")
    if tree_id != git.text(path, "rev-parse", "HEAD^{tree}"):
        head_new = git.commit_tree(path, tree_id, head, message)
        git.run(path, "update-ref", f"refs/heads/{tree.branch}", head_new, head)
        head = head_new
    return head


def is_inside(path: Path, root: Path) -> bool:
    """Whether `path`, symlinks followed, is `root` or below it."""
    real = Path(os.path.realpath(path))
    return real == root or real.is_relative_to(root)
