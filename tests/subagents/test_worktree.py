"""Worktrees of isolated tasks and their merge back, on real git repositories (no model, no CLI)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentcli.subagents.definitions.agent_files import parse_agent_file
from agentcli.subagents.plan import Refusal
from agentcli.subagents.worktrees import worktree
from agentcli.subagents.worktrees.merge_back import change_diffs, merge_into
from agentcli.subagents.worktrees.worktree import WorktreeError
from agentcli.tools.base import FileLocks
from tests.subagents.test_plan import TODAY, args, main_session, planned, planner

pytestmark = pytest.mark.skipif(worktree.git_executable() is None, reason="needs git")


@pytest.fixture(autouse=True)
def _no_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No git identity of the person's, and agentcli's data folder in tmp."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "app.py").write_text("def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    (ws / ".gitignore").write_text("*.log\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    return ws


def test_refusals_are_one_line(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    ws = repo(tmp_path)
    (ws / "sub").mkdir()
    cases = {plain: "is not a git repository", empty: "has no commits yet", bare: "bare repository",
             ws / "sub": "not the top of its repository"}
    for where, why in cases.items():
        with pytest.raises(WorktreeError) as caught:
            worktree.repository(where)
        message = str(caught.value)
        assert message.startswith("Worktree isolation is unavailable: ") and why in message
        assert "\n" not in message


def test_worktree_starts_from_what_the_person_sees_and_touches_nothing(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    (ws / "app.py").write_text("def a():\n    return 10\n\n\ndef b():\n    return 2\n")  # uncommitted
    (ws / "new.py").write_text("x = 1\n")  # untracked
    (ws / "debug.log").write_text("ignored\n")
    git(ws, "add", "new.py")  # staged: the person's index must stay exactly so
    status, head = git(ws, "status", "--porcelain"), git(ws, "rev-parse", "HEAD")
    tree = worktree.create(ws, "tsk_one")
    assert tree.path.is_relative_to(tmp_path / "data" / "agentcli-worktrees")
    assert (tree.path / "app.py").read_text() == (ws / "app.py").read_text()
    assert (tree.path / "new.py").read_text() == "x = 1\n"
    assert not (tree.path / "debug.log").exists()
    assert git(tree.path, "rev-parse", "--abbrev-ref", "HEAD") == "agentcli/tsk_one"
    assert (git(ws, "status", "--porcelain"), git(ws, "rev-parse", "HEAD")) == (status, head)
    assert git(ws, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    worktree.remove(tree, keep_branch=False)
    assert not tree.path.exists()
    assert "agentcli/tsk_one" not in git(ws, "branch", "--list")


def _edit(tree: worktree.Worktree, old: str, new: str) -> str:
    path = tree.path / "app.py"
    path.write_text(path.read_text().replace(old, new))
    tip = worktree.commit_all(tree, "work")
    assert tip is not None
    return tip


def test_non_overlapping_changes_merge_and_overlapping_ones_apply_nothing(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    locks = FileLocks()
    first, second, third = (worktree.create(ws, f"tsk_{n}") for n in (1, 2, 3))
    tip1 = _edit(first, "return 1", "return 'one'")
    (first.path / "added.txt").write_text("new\n")
    tip1 = worktree.commit_all(first, "more") or tip1
    tip2 = _edit(second, "return 2", "return 'two'")
    tip3 = _edit(third, "return 1", "return 'uno'")
    assert not asyncio.run(merge_into(first, tip1, ws, locks)).conflicts
    assert not asyncio.run(merge_into(second, tip2, ws, locks)).conflicts
    text = (ws / "app.py").read_text()
    assert "return 'one'" in text and "return 'two'" in text and (ws / "added.txt").read_text() == "new\n"
    plan = asyncio.run(merge_into(third, tip3, ws, locks))
    assert list(plan.conflicts) == ["app.py"]
    assert (ws / "app.py").read_text() == text  # nothing applied, no markers
    log = git(ws, "log", "--format=%an <%ae>", "-1", "agentcli/tsk_3")
    assert log == "agentcli <agentcli@localhost>"  # no identity: the fallback author
    assert git(ws, "rev-parse", "--abbrev-ref", "HEAD") == "main"


def test_the_changes_shown_to_the_person_are_the_tasks_own_file_by_file(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    (ws / "gone.txt").write_text("bye\n")
    tree = worktree.create(ws, "tsk_show")
    (tree.path / "app.py").write_text((tree.path / "app.py").read_text().replace("return 2", "return 'two'"))
    (tree.path / "data.bin").write_bytes(b"\0\1\2")
    (tree.path / "new.py").write_text("x = 1\n")
    (tree.path / "gone.txt").unlink()
    tip = worktree.commit_all(tree, "work")
    assert tip is not None
    (ws / "app.py").write_text("changed by the person meanwhile\n")  # never part of what the task changed
    diffs = {d.path: d for d in change_diffs(tree, tip)}
    assert sorted(diffs) == ["app.py", "data.bin", "gone.txt", "new.py"]
    assert (diffs["app.py"].added, diffs["app.py"].removed) == (1, 1)
    assert "+    return 'two'" in diffs["app.py"].unified() and "person" not in diffs["app.py"].unified()
    assert diffs["new.py"].created and diffs["new.py"].added == 1
    assert (diffs["gone.txt"].added, diffs["gone.txt"].removed) == (0, 1)
    assert diffs["data.bin"].hunks == () and diffs["data.bin"].created  # binary: changed, no lines


def test_nothing_changed_is_no_tip(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    tree = worktree.create(ws, "tsk_idle")
    assert worktree.commit_all(tree, "nothing") is None


def test_the_call_and_an_agent_file_ask_for_isolation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / ".agentcli" / "agents"
    folder.mkdir(parents=True)
    (folder / "apart.md").write_text("---\nname: apart\ndescription: Apart.\nisolation: worktree\n---\nYou.\n")
    (folder / "odd.md").write_text("---\nname: odd\ndescription: Odd.\nisolation: container\n---\nYou.\n")
    apart = parse_agent_file(folder / "apart.md", scope="project", file_format="agentcli")
    odd = parse_agent_file(folder / "odd.md", scope="project", file_format="agentcli")
    assert apart.isolation == "worktree" and apart.as_dict()["isolation"] == "worktree" and not apart.warnings
    assert odd.isolation is None and odd.warnings == ("'isolation: container' ignored: expected worktree or remote",)
    p = planner(tmp_path, monkeypatch)
    parent = main_session(tmp_path)
    assert planned(p.plan(args("apart"), parent, (), None, TODAY)).isolated
    manual = planned(p.plan(args("general", isolation="worktree", merge="manual"), parent, (), None, TODAY))
    assert manual.isolated and manual.keep_branch
    assert not planned(p.plan(args("general"), parent, (), None, TODAY)).isolated
    refused = p.plan(args("general", merge="manual"), parent, (), None, TODAY)
    assert isinstance(refused, Refusal) and refused.message == (
        'Invalid parameters: merge: "manual" needs isolation: "worktree"')
    with pytest.raises(ValidationError):
        args("general", isolation="container")


@pytest.mark.parametrize("change", ["a new repository", "another worktree's git dir", "a symlink"])
def test_a_worktree_whose_git_was_changed_is_never_committed(tmp_path: Path, change: str) -> None:
    ws = repo(tmp_path)
    tree, other = worktree.create(ws, "tsk_taken"), worktree.create(ws, "tsk_other")
    (tree.path / "app.py").write_text("changed\n")
    gitfile = tree.path / ".git"
    gitfile.unlink()
    if change == "a new repository":
        git(tree.path, "init", "-q")
    elif change == "another worktree's git dir":
        gitfile.write_text((other.path / ".git").read_text())
    else:
        gitfile.symlink_to(other.path / ".git")
    with pytest.raises(WorktreeError, match=r"its worktree's \.git was changed"):
        worktree.commit_all(tree, "work")
    assert git(ws, "rev-parse", "agentcli/tsk_taken") == tree.snapshot  # nothing committed
    worktree.remove(tree, keep_branch=False)
    assert not tree.path.exists() and other.path.is_dir()
    assert worktree.commit_all(other, "idle") is None  # the other worktree is untouched


def test_a_sha256_repository_is_isolated_too(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main", "--object-format=sha256")
    (ws / "app.py").write_text("x = 1\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    (ws / "new.py").write_text("y = 2\n")  # untracked: the snapshot is a commit of its own
    tree = worktree.create(ws, "tsk_sha")
    assert len(tree.snapshot) == 64 and (tree.path / "new.py").read_text() == "y = 2\n"
    (tree.path / "app.py").write_text("x = 10\n")
    tip = worktree.commit_all(tree, "work")
    assert tip is not None
    assert not asyncio.run(merge_into(tree, tip, ws, FileLocks())).conflicts
    assert (ws / "app.py").read_text() == "x = 10\n"
