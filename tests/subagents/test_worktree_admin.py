"""What isolated tasks leave behind, listed and pruned, on real git repositories (no model, no CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.gitsafe import git_executable
from agentcli.subagents.worktrees import admin as worktree_admin
from agentcli.subagents.worktrees import worktree
from agentcli.subagents.worktrees.admin import leftovers, prune, prune_at_start
from tests.subagents.test_worktree import _no_identity, git, repo

pytestmark = pytest.mark.skipif(git_executable() is None, reason="needs git")
__all__ = ["_no_identity"]  # the autouse fixture, used here too


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _orphan(tree: worktree.Worktree) -> None:
    """Make the worktree's owner a process that is gone (as a kill -9 leaves it)."""
    file = worktree.owner_file(tree.path)
    data = json.loads(file.read_text())
    data.update(pid=_dead_pid(), started=1)
    file.write_text(json.dumps(data))


def test_a_worktree_has_an_owner_file_beside_it_until_it_is_removed(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    tree = worktree.create(ws, "t1")
    owner = worktree_admin.read_owner(worktree.owner_file(tree.path))
    assert owner is not None and owner.alive and owner.workspace == str(ws.resolve())
    assert (owner.branch, owner.snapshot) == ("agentcli/t1", tree.snapshot)
    assert not worktree.owner_file(tree.path).is_relative_to(tree.path)  # beside it, outside the worktree
    (item,) = leftovers(ws)
    assert (item.task_id, item.branch, item.path, item.live) == ("t1", "agentcli/t1", tree.path, True)
    assert prune(ws) == []  # a live worktree is never pruned
    worktree.remove(tree, keep_branch=True)
    assert not worktree.owner_file(tree.path).exists()
    (item,) = leftovers(ws)
    assert (item.task_id, item.branch, item.path, item.live) == ("t1", "agentcli/t1", None, False)
    assert item.since is not None


def test_prune_removes_dead_worktrees_keeping_changes_on_their_branch(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    idle, busy, live = worktree.create(ws, "idle"), worktree.create(ws, "busy"), worktree.create(ws, "live")
    (busy.path / "app.py").write_text("changed\n")
    _orphan(idle)
    _orphan(busy)
    done = prune(ws)
    assert sorted(done) == ["Removed the worktree of task busy (its process is gone): its changes are kept on branch "
                    "agentcli/busy.",
                    "Removed the worktree of task idle (its process is gone): it had no changes (its branch is "
                    "removed too)."]
    assert not idle.path.exists() and not busy.path.exists() and live.path.is_dir()
    assert git(ws, "show", "agentcli/busy:app.py") == "changed"
    assert git(ws, "branch", "--list", "agentcli/*").split() == ["agentcli/busy", "+", "agentcli/live"]
    assert not worktree.owner_file(busy.path).exists() and worktree.owner_file(live.path).exists()
    # --branches: only finished tasks' branches without a live worktree.
    assert prune(ws, branches=True, finished=lambda task_id: False) == []
    assert prune(ws, branches=True, finished=lambda task_id: True) == ["Removed branch agentcli/busy (task busy)."]
    assert [item.task_id for item in leftovers(ws)] == ["live"]


def test_the_next_start_prunes_only_its_own_workspaces_dead_worktrees(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    git(other, "commit", "-q", "--allow-empty", "-m", "start")
    mine, theirs = worktree.create(ws, "mine"), worktree.create(other, "theirs")
    _orphan(mine)
    _orphan(theirs)
    (done,) = prune_at_start(ws)
    assert done.startswith(f"Removed worktree {mine.path} left by process ") and "no changes" in done
    assert not mine.path.exists() and git(ws, "branch", "--list", "agentcli/*") == ""
    assert git(ws, "worktree", "list").count("\n") == 0  # the workspace alone, git's metadata pruned too
    assert theirs.path.is_dir()  # another workspace's: pruned when a session opens there
    assert prune_at_start(ws) == []
    assert prune_at_start(tmp_path / "no-repo-here") == []


def test_prune_at_start_without_any_worktrees_runs_no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_git(workspace: Path) -> object:
        raise AssertionError("git was run")

    monkeypatch.setattr(worktree, "repository", no_git)
    assert prune_at_start(tmp_path) == []
    (tmp_path / "data" / "agentcli-worktrees" / "abc").mkdir(parents=True)
    assert prune_at_start(tmp_path) == []


def test_age_reads_in_one_unit() -> None:
    assert [worktree_admin.age(1000 - s, now=1000) for s in (5, 125, 7200, 200000)] == ["5s", "2m", "2h", "2d"]
    assert worktree_admin.age(None) == "-"
