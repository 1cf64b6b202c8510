"""The real `agentcli` TUI in a real terminal (tmux) against the fake server: prompt, subagent blocks, answer, quit."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Terminal:
    """A tmux session running one command, read through capture-pane."""

    def __init__(self, name: str, command: str, env: dict[str, str], cwd: Path) -> None:
        self.name = name
        self.tmux = ["tmux", "-L", f"agentcli-test-{os.getpid()}"]  # a private server: no clash with others
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k.isidentifier())
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", name, "-x", "150", "-y", "45", "-c", str(cwd),
             f"env -i {exports} {command}; sleep 30"],
            check=True,
        )

    def screen(self) -> str:
        out = subprocess.run([*self.tmux, "capture-pane", "-p", "-t", self.name], capture_output=True, text=True)
        return out.stdout

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")
            time.sleep(0.1)

    def keys(self, *keys: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *keys], check=True)

    def wait_until_exited(self, timeout: float = 20) -> None:
        """The command has ended (the pane then runs the trailing `sleep`)."""
        deadline = time.monotonic() + timeout
        while True:
            out = subprocess.run([*self.tmux, "list-panes", "-t", self.name, "-F", "#{pane_current_command}"],
                                 capture_output=True, text=True)
            if out.stdout.strip() == "sleep":
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the app did not exit; the screen was:\n{self.screen()}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


@pytest.fixture
def terminal_factory() -> Iterator[list[Terminal]]:
    made: list[Terminal] = []
    yield made
    for term in made:
        term.close()


def _task(description: str, tool: ToolCall) -> list[Step]:
    mark = f"# Task\n{description}"
    return [
        Step(match=Match(system_contains=mark, turn=0), reply=Reply(tool_calls=[tool]), latency_ms=150),
        Step(match=Match(system_contains=mark, turn=1), reply=Reply(text=f"{description}: done"), latency_ms=150),
    ]


def test_tui_in_a_real_terminal(tmp_path: Path, terminal_factory: list[Terminal]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print('hello')\n")
    calls = [ToolCall(name="Task", input={"description": d, "prompt": f"please {d.lower()}",
                                          "subagent_type": "explore"})
             for d in ("List the files", "Read the app")]
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Delegating to two explorers.",
                                                                    tool_calls=calls)),
        *_task("List the files", ToolCall(name="Glob", input={"pattern": "**/*.py"})),
        *_task("Read the app", ToolCall(name="Read", input={"file_path": "app.py"})),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="FINAL ANSWER: one file, app.py.")),
    ])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path, TERM="xterm-256color", COLORTERM="truecolor")
        command = f"{shlex.quote(sys.executable)} -m agentcli --cwd {shlex.quote(str(ws))}"
        term = Terminal(f"agentcli-e2e-{uuid.uuid4().hex[:8]}", command, env, ws)
        terminal_factory.append(term)
        term.wait_for("agentcli")
        term.keys("look around", "Enter")
        screen = term.wait_for("FINAL ANSWER: one file, app.py.")
        screen = term.wait_for("Task completed by explore")
        assert screen.count("Task completed by explore") == 2, screen
        assert "look around" in screen
        term.keys("C-q")
        term.wait_until_exited()
    server.assert_done()
