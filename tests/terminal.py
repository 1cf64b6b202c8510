"""The one real-terminal harness: the real `python -m agentcli` in a private tmux server.

Every test that drives the TUI in a real terminal uses `AgentcliTerminal`. tmux rather than pexpect:
`capture-pane` gives the screen as the person sees it (Textual paints with cursor moves and partial
redraws, so a pty byte stream can split or interleave the words a test looks for), the pane reports
facts a byte stream cannot (its title, whether the alternate screen is on, the exit status of the app),
and keys are sent by name (`Enter`, `C-q`) as a terminal would send them.

Each terminal runs on its own tmux server (its own socket), in a fresh environment: `env -i` with only
the variables given, HOME and the XDG dirs under the test's temp dir. The pane stays after the app exits
(`remain-on-exit`), so its last screen and exit status can be read; `close()` kills the server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType

import pytest

from agentcli.testing.fake_llm import FakeLLMServer
from tests.e2e.helpers import cli_env

requires_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
POLL_SECONDS = 0.05


def terminal_env(home: Path, server: FakeLLMServer, api: str = "anthropic", **extra: str) -> dict[str, str]:
    """The app's whole environment: the fake server's provider settings, HOME and XDG dirs under `home`,
    a 256-colour terminal; `extra` on top."""
    env = cli_env(api, server, home, HOME=str(home / "home"), XDG_CACHE_HOME=str(home / "cache"),
                  TERM="xterm-256color", COLORTERM="truecolor")
    (home / "home").mkdir(parents=True, exist_ok=True)
    env.update(extra)
    return env


class AgentcliTerminal:
    """`python -m agentcli ARGS` in a tmux pane of `size` (columns, rows), started in `cwd` with exactly `env`."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path, size: tuple[int, int] = (150, 45)) -> None:
        self.env = env
        self.name = f"agentcli-{uuid.uuid4().hex[:8]}"
        self.tmux = ["tmux", "-L", f"agentcli-test-{self.name}"]  # a private server: no clash with others
        handle, config = tempfile.mkstemp(prefix="agentcli-tmux-", suffix=".conf")
        os.write(handle, b"set-option -g remain-on-exit on\nset-option -g status off\n")
        os.close(handle)
        self._config = Path(config)
        exports = [f"{k}={v}" for k, v in env.items() if k.isidentifier()]
        command = ["env", "-i", *exports, sys.executable, "-m", "agentcli", *args]
        columns, rows = size
        subprocess.run([*self.tmux, "-f", config, "new-session", "-d", "-s", self.name, "-x", str(columns),
                        "-y", str(rows), "-c", str(cwd), *command], check=True)  # argv: no shell in between
        self._socket = self.pane("#{socket_path}")

    def __enter__(self) -> AgentcliTerminal:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def pane(self, fmt: str) -> str:
        """A tmux format about the pane (`#{pane_title}`, `#{alternate_on}`, `#{pane_pid}`, ...)."""
        out = subprocess.run([*self.tmux, "display-message", "-p", "-t", self.name, fmt],
                             capture_output=True, text=True)
        return out.stdout.rstrip("\n")

    def screen(self) -> str:
        """What the pane shows now."""
        out = subprocess.run([*self.tmux, "capture-pane", "-p", "-t", self.name], capture_output=True, text=True)
        return out.stdout

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """Wait until `text` is on screen; the screen then. Fails with the last screen after `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")
            time.sleep(POLL_SECONDS)

    def type(self, text: str) -> None:
        """Type `text` literally."""
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, "-l", text], check=True)

    def press(self, *keys: str) -> None:
        """Press keys by tmux name: `Enter`, `Escape`, `C-q`, `t`."""
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *keys], check=True)

    @property
    def pid(self) -> int:
        """The app's process id (the pane runs it directly, `env` execs it)."""
        return int(self.pane("#{pane_pid}"))

    def wait_until_exited(self, timeout: float = 30) -> int:
        """Wait until the app has exited; its exit status (128+N when a signal N ended it)."""
        deadline = time.monotonic() + timeout
        while self.pane("#{pane_dead}") != "1":
            if time.monotonic() > deadline:
                raise AssertionError(f"the app did not exit; the screen was:\n{self.screen()}")
            time.sleep(POLL_SECONDS)
        status, signal = self.pane("#{pane_dead_status}"), self.pane("#{pane_dead_signal}")
        return int(status) if status else 128 + int(signal or 0)

    def close(self) -> None:
        """Kill the tmux server (and the app, if it still runs) and remove its socket and config."""
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)
        if self._socket:
            Path(self._socket).unlink(missing_ok=True)
        self._config.unlink(missing_ok=True)
