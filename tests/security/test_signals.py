"""Signals: SIGTERM / SIGHUP stop a run like Ctrl-C, and no Bash child outlives agentcli, kill -9 included."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, db
from tests.processes import alive
from tests.terminal import AgentcliTerminal, requires_tmux, terminal_env, terminal_timeout

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

SLOW = "sleep 300 & echo $! > bg.pid; echo $$ > shell.pid; touch started.flag; sleep 300"


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group, read from /proc."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


def _wait_gone(pids: list[int], pgid: int, limit: float = 30) -> None:
    """Poll until every pid and the whole group are gone (bounded; fails with what is left)."""
    deadline = time.monotonic() + limit
    while any(alive(p) for p in pids) or _group_members(pgid):
        if time.monotonic() > deadline:
            left = [p for p in pids if alive(p)] + _group_members(pgid)
            for pid in left:  # do not leave them behind after a failure
                os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"processes outlived agentcli: {left}")
        time.sleep(0.05)


def _start(repo: Path, tmp_path: Path, server: FakeLLMServer, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "run", "--yes", "--cwd", str(repo), *args, "run the slow thing"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env("anthropic", server, tmp_path),
    )
    deadline = time.monotonic() + 60
    while not (repo / "started.flag").exists():
        if proc.poll() is not None:
            raise AssertionError(proc.communicate())
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("the Bash call never started")
        time.sleep(0.02)
    return proc


def _pids(repo: Path) -> tuple[int, int]:
    deadline = time.monotonic() + 10
    while not ((repo / "bg.pid").read_text().strip() and (repo / "shell.pid").read_text().strip()):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return int((repo / "bg.pid").read_text()), int((repo / "shell.pid").read_text())


def _bash_script() -> Script:
    return Script(steps=[Step(match=Match(turn=0), reply=Reply(
        text="Running it.", tool_calls=[ToolCall(name="Bash", input={"command": SLOW})]))])


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_stop_signal_during_bash_cancels_run_and_kills_its_group(
    sig: signal.Signals, code: int, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with FakeLLMServer(_bash_script()) as server:
        proc = _start(repo, tmp_path, server, "--output-format", "json")
        bg, shell = _pids(repo)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert f"stopped by {sig.name}" in err
    _wait_gone([bg, shell], shell)
    result = json.loads(out.strip().splitlines()[-1])  # the final object, status cancelled
    assert result["status"] == "cancelled"
    assert [c["name"] for c in result["tool_calls"]] == ["Bash"]
    with db(tmp_path) as conn:
        status, = conn.execute("SELECT status FROM sessions").fetchone()
        tool_status, = conn.execute("SELECT status FROM tool_calls").fetchone()
    assert status == "cancelled"
    assert tool_status in ("error", "cancelled")


def test_sigterm_text_mode_prints_what_streamed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with FakeLLMServer(_bash_script()) as server:
        proc = _start(repo, tmp_path, server)
        bg, shell = _pids(repo)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Running it." in out
    assert "Traceback" not in err
    _wait_gone([bg, shell], shell)


def test_kill_9_leaves_no_bash_child_behind(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with FakeLLMServer(_bash_script()) as server:
        proc = _start(repo, tmp_path, server)
        bg, shell = _pids(repo)
        proc.kill()  # SIGKILL: no handler runs; PDEATHSIG and the reaper must clean up
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    _wait_gone([bg, shell], shell)


def test_sigterm_while_subagent_runs_bash_records_its_task_cancelled(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[ToolCall(name="Task", input={
            "description": "Run slow job", "prompt": "run the slow job", "subagent_type": "general"})])),
        Step(match=Match(system_contains="# Task\nRun slow job", turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": SLOW})])),
    ])
    with FakeLLMServer(script) as server:
        proc = _start(repo, tmp_path, server, "--output-format", "json")
        bg, shell = _pids(repo)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    _wait_gone([bg, shell], shell)
    result = json.loads(out.strip().splitlines()[-1])
    assert result["status"] == "cancelled"
    assert [t["status"] for t in result["tasks"]] == ["cancelled"]
    with db(tmp_path) as conn:
        task_status, = conn.execute("SELECT status FROM tasks").fetchone()
        statuses = sorted(s for (s,) in conn.execute("SELECT status FROM sessions"))
    assert task_status == "cancelled"
    assert statuses == ["cancelled", "cancelled"]  # the main session and the subagent's


@pytest.mark.terminal
@requires_tmux
@terminal_timeout
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_stop_signal_ends_the_tui_cleanly(sig: signal.Signals, code: int, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeLLMServer(_bash_script()) as server:
        env = terminal_env(tmp_path, server, AGENTCLI_PERMISSIONS__MODE="auto")
        with AgentcliTerminal(["--cwd", str(ws)], env, ws) as term:
            term.wait_started()
            term.type("run the slow thing")
            term.press("Enter")
            term.wait_loaded()  # the turn waits for the SDK's import, however long it takes here
            deadline = time.monotonic() + 60
            while not (ws / "started.flag").exists():
                assert time.monotonic() < deadline, term.screen()
                time.sleep(0.05)
            bg, shell = _pids(ws)
            os.kill(term.pid, sig)
            exit_status = term.wait_until_exited()
            screen = term.screen()
            alternate = term.pane("#{alternate_on}")
    assert exit_status == code, screen
    assert "Traceback" not in screen
    assert alternate == "0"  # the app left the alternate screen: the terminal was restored
    _wait_gone([bg, shell], shell)
    with db(tmp_path) as conn:
        status, = conn.execute("SELECT status FROM sessions").fetchone()
    assert status == "cancelled"


def _background_script() -> Script:
    """A background command (its pids written down), then a slow foreground call the test stops agentcli in."""
    background = ToolCall(name="Bash", input={"command": "echo $$ > bgshell.pid; sleep 300 & echo $! > bgchild.pid; "
                                                         "wait", "run_in_background": True})
    return Script(steps=[Step(match=Match(turn=0), reply=Reply(tool_calls=[background])),
                         Step(match=Match(turn=1), reply=Reply(tool_calls=[ToolCall(name="Bash",
                                                                                    input={"command": SLOW})]))])


@pytest.mark.parametrize("stop", ["SIGTERM", "kill -9"])
def test_no_background_command_outlives_agentcli(stop: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with FakeLLMServer(_background_script()) as server:
        proc = _start(repo, tmp_path, server)
        deadline = time.monotonic() + 30
        while not all((repo / name).exists() and (repo / name).read_text().strip()
                      for name in ("bgshell.pid", "bgchild.pid")):
            assert time.monotonic() < deadline, "the background command never wrote its pids"
            time.sleep(0.02)
        background = [int((repo / name).read_text()) for name in ("bgshell.pid", "bgchild.pid")]
        assert all(alive(pid) for pid in background)
        proc.send_signal(signal.SIGTERM) if stop == "SIGTERM" else proc.kill()
        proc.communicate(timeout=60)
    _wait_gone([*background, *_pids(repo)], background[0])
