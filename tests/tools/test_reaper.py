"""The reaper process and the parent-death hook that keep Bash children from outliving agentcli."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcli.tools.shell.reaper import MARK_VARIABLE, Reaper, kill_marked, mark_needle, parent_death_hook
from tests.processes import alive, wait_dead

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _group() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "300"], start_new_session=True)


def test_reaper_kills_tracked_groups_when_the_pipe_closes() -> None:
    guard = Reaper()
    proc = _group()
    try:
        guard.track(proc.pid)
        guard.close()  # what the kernel does when agentcli dies
        proc.wait(timeout=20)
        assert proc.returncode == -signal.SIGKILL
    finally:
        proc.kill()
        proc.wait()


def test_reaper_leaves_untracked_groups_alone() -> None:
    guard = Reaper()
    proc = _group()
    try:
        guard.track(proc.pid)
        guard.untrack(proc.pid)
        guard.close()
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=0.3)  # still running after the reaper exited
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(parent_death_hook() is None, reason="no prctl on this platform")
def test_parent_death_signal_kills_the_child(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    code = (
        "import subprocess, sys\n"
        "from agentcli.tools.shell.reaper import parent_death_hook\n"
        "p = subprocess.Popen(['sleep', '300'], start_new_session=True, preexec_fn=parent_death_hook())\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "sys.stdin.read()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, env=os.environ)
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.02)
    child = int(pid_file.read_text())
    parent.kill()
    parent.wait()
    try:
        assert wait_dead(child, 20)
    finally:
        if alive(child):
            os.kill(child, signal.SIGKILL)


def test_a_child_registers_its_own_group_before_it_execs() -> None:
    """No window between fork and track(): a kill -9 right after the spawn still reaps the group."""
    guard = Reaper()
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True, preexec_fn=guard.spawn_hook())
    try:
        guard.close()  # agentcli dies before it could call track(): only the child's own line is there
        proc.wait(timeout=20)
        assert proc.returncode == -signal.SIGKILL
    finally:
        proc.kill()
        proc.wait()


def _marked(mark: str | None) -> subprocess.Popen[bytes]:
    """A `sleep` in a session of its own (out of any group agentcli knows), its environment marked, once it has
    exec'd (before, /proc shows the forking process's environment)."""
    env = {**os.environ, MARK_VARIABLE: mark} if mark is not None else {**os.environ, "SLEEPER": "1"}
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True, env=env)
    entry = mark_needle(mark) if mark is not None else b"SLEEPER=1\0"
    deadline = time.monotonic() + 10
    while entry not in Path(f"/proc/{proc.pid}/environ").read_bytes():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return proc


def test_kill_marked_kills_exactly_the_processes_carrying_the_mark() -> None:
    procs = {mark: _marked(mark) for mark in ("x1-ab.1", "x1-ab.10", "y2-cd.1", None)}
    try:
        assert kill_marked(mark_needle("x1-ab.1"), after=procs["x1-ab.1"].pid - 1) == 1
        assert procs["x1-ab.1"].wait(timeout=10) == -signal.SIGKILL
        assert [p.poll() for m, p in procs.items() if m != "x1-ab.1"] == [None, None, None]  # .10 is another call
        assert kill_marked(mark_needle("x1-ab.", whole=False)) == 1  # any call of agentcli x1-ab
        assert procs["x1-ab.10"].wait(timeout=10) == -signal.SIGKILL
        assert procs["y2-cd.1"].poll() is None and procs[None].poll() is None
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()


def test_reaper_kills_every_marked_process_of_its_agentcli_when_the_pipe_closes() -> None:
    guard = Reaper()
    guard.track(os.getpid() + 10**7)  # start the reaper (a group id nobody has)
    mine, other = _marked(guard.new_mark()), _marked("someone-else.1")
    try:
        guard.close()  # what the kernel does when agentcli dies: no group of theirs was tracked
        assert mine.wait(timeout=20) == -signal.SIGKILL
        assert other.poll() is None
    finally:
        for proc in (mine, other):
            proc.kill()
            proc.wait()
