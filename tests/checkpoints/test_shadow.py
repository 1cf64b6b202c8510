"""The shadow repository with real git: snapshots that are byte-exact whatever a workspace's attributes say,
incremental, honouring ignores, leaving out big files and nested repositories; rewinds that never write through a
symlinked folder, tell the person's changes apart, and never read or run anything of the person's repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentcli.checkpoints import CheckpointError, ShadowRepo, Snapshot, Span, apply_plan, file_diff, plan_rewind
from agentcli.checkpoints.restore import put_back

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True, env=ENV).stdout.strip()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def shadow(ws: Path, tmp_path: Path, **caps: int) -> ShadowRepo:
    return ShadowRepo(ws, tmp_path / "checkpoints", **caps)


def tree_files(ws: Path) -> dict[str, bytes]:
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in sorted(ws.rglob("*"))
            if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(ws).parts}


def rewind(repo: ShadowRepo, before: Snapshot, after: str, **kwargs: object) -> list[str]:
    plan = plan_rewind(repo, [Span(before.tree, after)], repo.snapshot(), before.skipped)
    _, problems = apply_plan(repo, plan, **kwargs)  # type: ignore[arg-type]
    return problems


def test_files_come_back_byte_for_byte_whatever_the_attributes_say(ws: Path, tmp_path: Path) -> None:
    (ws / ".gitattributes").write_text("* text=auto eol=crlf\n*.txt filter=evil ident working-tree-encoding=UTF-16\n")
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\n$Id$\n")
    (ws / "bin.dat").write_bytes(bytes(range(256)))
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    os.symlink("crlf.txt", ws / "link")
    repo = shadow(ws, tmp_path)
    first = repo.snapshot()
    start = tree_files(ws)
    (ws / "crlf.txt").write_bytes(b"changed\n")
    (ws / "bin.dat").unlink()
    (ws / "run.sh").chmod(0o644)
    (ws / "link").unlink()
    os.symlink("bin.dat", ws / "link")
    assert rewind(repo, first, repo.snapshot().tree) == []
    assert tree_files(ws) == start
    assert os.access(ws / "run.sh", os.X_OK) and os.readlink(ws / "link") == "crlf.txt"


def test_an_unchanged_tree_gives_the_same_tree_and_changes_are_listed(ws: Path, tmp_path: Path) -> None:
    (ws / "a.txt").write_text("a")
    repo = shadow(ws, tmp_path)
    one = repo.snapshot()
    assert repo.snapshot() == one
    (ws / "a.txt").write_text("b")
    (ws / "d").mkdir()
    (ws / "d" / "new.txt").write_text("n")
    two = repo.snapshot()
    assert [(c.path, c.kind) for c in repo.changes(one.tree, two.tree)] == [("a.txt", "modified"),
                                                                             ("d/new.txt", "added")]


def test_ignored_big_and_nested_repository_files_are_left_out_and_never_touched(ws: Path, tmp_path: Path) -> None:
    git(ws, "init", "-q")
    (ws / ".git" / "info" / "exclude").write_text("secret.env\n")
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_text("o")
    (ws / "secret.env").write_text("KEY=1")
    (ws / "big.bin").write_bytes(b"x" * 5000)
    nested = ws / "vendor"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / "lib.c").write_text("int x;")
    repo = shadow(ws, tmp_path, max_file_bytes=4096)
    snap = repo.snapshot()
    assert sorted(s.path for s in snap.skipped) == ["big.bin", "vendor/"]
    listed = git(tmp_path, f"--git-dir={repo.git_dir}", "ls-tree", "-r", "--name-only", snap.tree).split()
    assert listed == [".gitignore"]
    for path in ("build/out.o", "secret.env", "big.bin", "vendor/lib.c"):
        (ws / path).write_text("changed by the person")
    (ws / ".gitignore").write_text("build/\n# more\n")
    assert rewind(repo, snap, repo.snapshot().tree) == []
    assert (ws / ".gitignore").read_text() == "build/\n"
    for path in ("build/out.o", "secret.env", "big.bin", "vendor/lib.c"):
        assert (ws / path).read_text() == "changed by the person"


def test_too_many_changed_files_take_no_checkpoint(ws: Path, tmp_path: Path) -> None:
    for n in range(5):
        (ws / f"f{n}").write_text(str(n))
    with pytest.raises(CheckpointError, match="more than \\[checkpoints\\] max_files \\(3\\)"):
        shadow(ws, tmp_path, max_files=3).snapshot()


def test_the_persons_repository_is_never_read_written_or_run(ws: Path, tmp_path: Path) -> None:
    git(ws, "init", "-q", "-b", "main")
    (ws / "a.txt").write_text("a")
    (ws / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    marker = tmp_path / "ran"
    for key, value in (("filter.evil.clean", f"touch {marker}; cat"), ("filter.evil.smudge", f"touch {marker}; cat"),
                       ("diff.evil.textconv", f"touch {marker}; cat"), ("core.fsmonitor", f"touch {marker}")):
        git(ws, "config", key, value)
    hook = ws / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    git(ws, "add", "a.txt")
    marker.unlink(missing_ok=True)
    git_state = {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()}
    repo = shadow(ws, tmp_path)
    one = repo.snapshot()
    (ws / "a.txt").write_text("b")
    plan = plan_rewind(repo, [Span(one.tree, repo.snapshot().tree)], repo.snapshot())
    assert file_diff(repo, plan, plan.files[0]).added == 1
    apply_plan(repo, plan)
    assert (ws / "a.txt").read_text() == "a" and not marker.exists()
    assert {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()} == git_state


def test_a_rewind_never_writes_or_deletes_through_a_symlinked_folder(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("outside")
    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("inside")
    repo = shadow(ws, tmp_path)
    one = repo.snapshot().tree
    shutil.rmtree(ws / "d")
    os.symlink(outside, ws / "d")  # a folder swapped for a link out of the workspace
    put_back(repo, one, ["d/f.txt"], [])
    assert (outside / "f.txt").read_text() == "outside"
    assert (ws / "d").is_dir() and not (ws / "d").is_symlink() and (ws / "d" / "f.txt").read_text() == "inside"
    os.symlink(outside, ws / "e")
    assert put_back(repo, one, [], ["e/f.txt"]) == []
    assert (outside / "f.txt").exists()


def test_changes_made_between_prompts_are_the_persons(ws: Path, tmp_path: Path) -> None:
    repo = shadow(ws, tmp_path)
    (ws / "agent.txt").write_text("0")
    (ws / "mine.txt").write_text("0")
    before1 = repo.snapshot().tree
    (ws / "agent.txt").write_text("1")  # prompt 1's agent
    after1 = repo.snapshot().tree
    (ws / "mine.txt").write_text("edited by the person")  # between prompts
    before2 = repo.snapshot().tree
    (ws / "agent.txt").write_text("2")  # prompt 2's agent
    after2 = repo.snapshot().tree
    (ws / "late.txt").write_text("the person, after")
    plan = plan_rewind(repo, [Span(before1, after1), Span(before2, after2)], repo.snapshot())
    assert {(f.path, f.action, f.by_person) for f in plan.files} == {
        ("agent.txt", "restore", False), ("mine.txt", "restore", True), ("late.txt", "delete", True)}
    changed, problems = apply_plan(repo, plan)
    assert [c.path for c in changed] == ["agent.txt"] and len(problems) == 2
    assert (ws / "mine.txt").read_text() == "edited by the person" and (ws / "late.txt").exists()
    changed, problems = apply_plan(repo, plan_rewind(repo, [Span(before1, after1)], repo.snapshot()),
                                   overwrite={"late.txt"})
    assert not (ws / "late.txt").exists() and (ws / "mine.txt").read_text() == "edited by the person"


def test_disk_use_and_forgetting_a_sessions_snapshots(ws: Path, tmp_path: Path) -> None:
    repo = shadow(ws, tmp_path)
    (ws / "shared.txt").write_text("both")
    shared = repo.snapshot().tree
    (ws / "own.txt").write_text("x" * 10_000)
    own = repo.snapshot().tree
    repo.keep("ses_a/1", shared)
    repo.keep("ses_a/2", own)
    repo.keep("ses_b/1", shared)
    (ws / "own.txt").unlink()
    repo.snapshot()  # the shadow's index holds the present: own.txt is only in ses_a's snapshot now
    assert repo.disk_use("ses_a/") > repo.disk_use("ses_b/") == 0  # b holds nothing a does not
    assert repo.forget("ses_a/") == 2
    assert repo.refs("ses_a/") == [] and repo.refs("ses_b/") == ["refs/checkpoints/ses_b/1"]
    assert repo.blob(shared, "shared.txt") == b"both" and repo.blob(own, "own.txt") is None
