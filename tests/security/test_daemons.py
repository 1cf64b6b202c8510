"""A daemon a Bash command starts (double fork, a session of its own: out of Bash's process group) does not
outlive the call, nor agentcli, kill -9 included.

Black box through `agentcli run` against the fake model, which runs the daemon's command through Bash.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import cli_env, last_json
from tests.processes import alive, wait_dead

pytestmark = [pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc"),
              pytest.mark.skipif(shutil.which("setsid") is None, reason="needs setsid")]

#: Each writes the daemon's pid to daemon.pid; the daemon is in a session (and group) of its own, its parent gone.
DAEMONS = {
    "setsid-sh": "setsid sh -c 'sleep 300 & echo $! > daemon.pid'",
    "double-fork": "(setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' &) &",
}
WAIT_PID = "while [ ! -s daemon.pid ]; do sleep 0.02; done"
#: Polls the daemon for up to 5 s: a zombie, or no process, counts as gone.
CHECK = ("p=$(cat daemon.pid); for i in $(seq 100); do s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); "
         "if [ -z \"$s\" ] || [ \"$s\" = Z ]; then echo \"daemon $p gone\"; exit 0; fi; sleep 0.05; done; "
         "echo \"daemon $p alive\"")


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "repo"
    path.mkdir()
    yield path
    pid_file = path / "daemon.pid"
    if pid_file.exists() and pid_file.read_text().strip():
        pid = int(pid_file.read_text())
        if alive(pid):  # never leave one behind after a failure
            os.kill(pid, signal.SIGKILL)


def _bash(turn: int, command: str) -> Step:
    return Step(match=Match(turn=turn), reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": command})]))


@pytest.mark.parametrize("daemon", DAEMONS.values(), ids=DAEMONS.keys())
def test_a_daemon_is_gone_once_its_bash_call_ends(daemon: str, repo: Path, tmp_path: Path) -> None:
    script = Script(steps=[_bash(0, f"{daemon}\n{WAIT_PID}"), _bash(1, CHECK),
                           Step(match=Match(turn=2), reply=Reply(text="checked"))])
    with FakeLLMServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--yes", "--output-format", "json", "--cwd", str(repo), "go"],
            capture_output=True, text=True, timeout=120, env=cli_env("anthropic", server, tmp_path))
        assert proc.returncode == 0, proc.stderr
        server.assert_done()
    assert last_json(proc.stdout)["result"] == "checked"
    check = str(server.requests[-1].body["messages"][-1]["content"][0]["content"])
    assert " gone" in check, f"the daemon outlived its Bash call: {check}"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
@pytest.mark.parametrize("daemon", DAEMONS.values(), ids=DAEMONS.keys())
def test_a_daemon_does_not_outlive_agentcli(daemon: str, sig: signal.Signals, repo: Path, tmp_path: Path) -> None:
    script = Script(steps=[_bash(0, f"{daemon}\n{WAIT_PID}; touch started.flag; sleep 300")])
    with FakeLLMServer(script) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "run", "--yes", "--cwd", str(repo), "go"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env("anthropic", server, tmp_path))
        try:
            deadline = time.monotonic() + 60
            while not (repo / "started.flag").exists():
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the Bash call never started"
                time.sleep(0.02)
            daemon_pid = int((repo / "daemon.pid").read_text())
            assert alive(daemon_pid)
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == (143 if sig == signal.SIGTERM else -signal.SIGKILL), err
    assert wait_dead(daemon_pid, 10), f"daemon {daemon_pid} outlived agentcli"
