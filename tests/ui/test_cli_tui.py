"""`agentcli` with no command: errors before any TUI starts, and the TUI itself in a real terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from tests.terminal import AgentcliTerminal, requires_tmux, terminal_env, terminal_timeout
from tests.ui.conftest import MAIN


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=60)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENTCLI_"))}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), **extra)
    return env


def test_a_missing_key_is_one_line_before_the_tui(tmp_path: Path) -> None:
    proc = _run(["--cwd", str(tmp_path)], _env(tmp_path))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentcli: no API key") and "ANTHROPIC_API_KEY" in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_an_invalid_config_exits_2_before_the_tui(tmp_path: Path) -> None:
    proc = _run(["--cwd", str(tmp_path)], _env(tmp_path, AGENTCLI_TASK_TOOL__MAX_DEPTH="deep",
                                                ANTHROPIC_API_KEY="sk-ant-x"))
    assert proc.returncode == 2
    assert proc.stderr.startswith("agentcli: ") and "max_depth" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_an_unknown_cwd_is_bad_usage(tmp_path: Path) -> None:
    proc = _run(["--cwd", str(tmp_path / "nope")], _env(tmp_path, ANTHROPIC_API_KEY="sk-ant-x"))
    assert proc.returncode == 2 and "is not a directory" in proc.stderr


@pytest.mark.terminal
@requires_tmux
@terminal_timeout
def test_the_tui_in_a_real_terminal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = Script(steps=[Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="ping"),
                                reply=Reply(text="PONG-FROM-FAKE"))])
    with (FakeLLMServer(script) as server,
          AgentcliTerminal(["--cwd", str(ws)], terminal_env(tmp_path, server), ws, size=(100, 30)) as term):
        term.wait_started()
        term.wait_for("Type a task")
        term.type("ping")
        term.wait_for("ping")
        term.press("Enter")  # at once: the turn waits for the SDK import if it is still running
        term.wait_loaded()
        term.wait_for("PONG-FROM-FAKE")
        term.press("C-q")
        assert term.wait_until_exited() == 0
    server.assert_done()
