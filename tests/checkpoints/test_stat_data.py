"""The shadow index's stat data: a file touched with the same bytes (a branch switched and back, a build) is
taken again by one snapshot and then no more (`ls-files --modified` alone would hash it at every snapshot), and
touched files never count against the cap on changed files."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from agentcli.checkpoints import CheckpointError, ShadowRepo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
PAST = time.time_ns() - 100 * 10**9  # files older than any index written here: none racily clean


def stat_dirty(repo: ShadowRepo) -> list[str]:
    """The files whose stat data in the shadow index is not theirs now (git compares stat data only)."""
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_INDEX_FILE": str(repo.index)}
    return subprocess.run(["git", f"--git-dir={repo.git_dir}", f"--work-tree={repo.workspace}", "diff-files",
                           "--name-only"], cwd=repo.workspace, env=env, check=True, capture_output=True,
                          text=True).stdout.split()


def write_old(path: Path, text: str, age_ns: int = 0) -> None:
    path.write_text(text)
    os.utime(path, ns=(PAST + age_ns, PAST + age_ns))


def test_a_touched_file_is_taken_again_once_and_then_no_more(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(3):
        write_old(ws / f"f{n}", str(n))
    repo = ShadowRepo(ws, tmp_path / "checkpoints")
    first = repo.snapshot()
    assert stat_dirty(repo) == []
    os.utime(ws / "f1", ns=(PAST + 10**10, PAST + 10**10))  # the same bytes, a new mtime
    assert stat_dirty(repo) == ["f1"]
    assert repo.snapshot() == first
    assert stat_dirty(repo) == []
    write_old(ws / "f2", "changed", 2 * 10**10)
    second = repo.snapshot()
    assert [(c.path, c.kind) for c in repo.changes(first.tree, second.tree)] == [("f2", "modified")]
    assert stat_dirty(repo) == []


def test_touched_files_do_not_count_against_max_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(5):
        write_old(ws / f"f{n}", str(n))
    first = ShadowRepo(ws, tmp_path / "checkpoints").snapshot()
    capped = ShadowRepo(ws, tmp_path / "checkpoints", max_files=3)
    for n in range(5):
        write_old(ws / f"f{n}", str(n), 10**10)  # all five rewritten, one of them with new bytes
    write_old(ws / "f0", "new", 10**10)
    second = capped.snapshot()
    assert [c.path for c in capped.changes(first.tree, second.tree)] == ["f0"]
    assert stat_dirty(capped) == []
    for n in range(4):
        write_old(ws / f"f{n}", f"changed {n}", 2 * 10**10)
    with pytest.raises(CheckpointError, match=r"4 files changed .* more than \[checkpoints\] max_files \(3\)"):
        capped.snapshot()
