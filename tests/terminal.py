"""The one real-terminal harness: the real `python -m agentcli` in a private tmux server.

Every test that drives the TUI in a real terminal uses `AgentcliTerminal`. tmux rather than pexpect:
`capture-pane` gives the screen as the person sees it (Textual paints with cursor moves and partial
redraws, so a pty byte stream can split or interleave the words a test looks for), the pane reports
facts a byte stream cannot (its title, whether the alternate screen is on, the exit status of the app),
and keys are sent by name (`Enter`, `C-q`) as a terminal would send them.

Each terminal runs on its own tmux server (its own socket), in a fresh environment: `env -i` with only
the variables given, HOME and the XDG dirs under the test's temp dir. A small `sh` in the pane runs the app
in the foreground and writes its exit status to a file (tmux 3.3 does not always reap a pane's process, so
`#{pane_dead_status}` can stay empty). The pane stays after the app exits (`remain-on-exit`), so its last
screen can be read; `close()` kills the server and removes its files.

Getting ready takes what it takes: on a fresh machine (cold bytecode caches) under a busy test run, start-up
and the model SDK's import in the background can take a minute or more. So a test waits for those states
(`wait_started`: the status bar is painted; `wait_loaded`: it no longer says the SDK is loading), bounded only
by `READY_BOUND` from the launch, a failure bound; `wait_for` bounds what follows, once the app is ready.
Tests that use the harness carry `terminal_timeout`, pytest's limit sized for that bound, and the `terminal` marker
(`pytest -m "not terminal"` leaves them out).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import pytest

from agentcli.testing.fake_llm import FakeLLMServer
from agentcli.ui.widgets.status_bar import LOADING, READY, STATE_FORMS
from tests.e2e.helpers import cli_env

requires_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
POLL_SECONDS = 0.05
READY_BOUND = 300.0  # s from the launch until the app has painted and loaded its SDK: a failure bound, never a wait
terminal_timeout = pytest.mark.timeout(READY_BOUND + 180)  # getting ready, then the test's own bounded waits
_STATE_FORMS = sorted({form for forms in STATE_FORMS.values() for form in forms}, key=len, reverse=True)


def terminal_env(home: Path, server: FakeLLMServer, api: str = "anthropic", **extra: str) -> dict[str, str]:
    """The app's whole environment: the fake server's provider settings, HOME and XDG dirs under `home`,
    a 256-colour terminal; `extra` on top."""
    env = cli_env(api, server, home, HOME=str(home / "home"), XDG_CACHE_HOME=str(home / "cache"),
                  TERM="xterm-256color", COLORTERM="truecolor")
    (home / "home").mkdir(parents=True, exist_ok=True)
    for size in ("COLUMNS", "LINES"):  # the pane's size is the terminal's (xdist workers set 80x24 here)
        env.pop(size, None)
    env.update(extra)
    return env


class AgentcliTerminal:
    """`python -m agentcli ARGS` in a tmux pane of `size` (columns, rows), started in `cwd` with exactly `env`."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path, size: tuple[int, int] = (150, 45)) -> None:
        self.env = env
        self.name = f"agentcli-{uuid.uuid4().hex[:8]}"
        self.tmux = ["tmux", "-L", f"agentcli-test-{self.name}"]  # a private server: no clash with others
        self._files = Path(tempfile.mkdtemp(prefix="agentcli-tmux-"))
        config = self._files / "tmux.conf"
        config.write_text("set-option -g remain-on-exit on\nset-option -g status off\n")
        self._status_file = self._files / "status"
        exports = [f"{k}={v}" for k, v in env.items() if k.isidentifier()]
        app = ["env", "-i", *exports, sys.executable, "-m", "agentcli", *args]
        wrapper = ["sh", "-c", '"$@"; echo $? > "$0"', str(self._status_file), *app]  # argv all the way: no quoting
        columns, rows = size
        subprocess.run([*self.tmux, "-f", str(config), "new-session", "-d", "-s", self.name, "-x", str(columns),
                        "-y", str(rows), "-c", str(cwd), *wrapper], check=True)
        self._ready_by = time.monotonic() + READY_BOUND
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

    def scrollback(self) -> str:
        """What the pane shows and every line scrolled off it (tmux's `Pane is dead` line, printed once the app
        has exited, scrolls a full screen by one)."""
        out = subprocess.run([*self.tmux, "capture-pane", "-p", "-S", "-", "-t", self.name],
                             capture_output=True, text=True)
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

    def status(self) -> str | None:
        """The app's state as its status bar shows it (the bar's last part: `loading the model SDK…`, `ready`,
        `working…`, ...); None while no status bar is on screen (before the first paint, or another program's)."""
        for line in reversed(self.screen().splitlines()):
            text = line.rstrip()
            state = next((form for form in _STATE_FORMS if text.endswith(form)), None)
            if state is not None and "·" in text:  # the bar's parts are separated by `·`
                return state
        return None

    def wait_started(self) -> str:
        """Wait until the app has painted its status bar (its first full screen); the state it shows then."""
        return self._wait_ready(lambda state: state is not None, "the app's status bar never appeared")

    def wait_loaded(self) -> str:
        """Wait until the status bar no longer says the model SDK is loading (imported, or failed to: either way
        the app goes on); the state it shows then. A prompt sent before waits for this inside the app."""
        return self._wait_ready(lambda state: state is not None and state not in STATE_FORMS[LOADING],
                                "the model SDK was still loading")

    def wait_idle(self, timeout: float = 60) -> None:
        """Wait until the status bar says `ready`: the turn has ended (its last words can be on screen a moment
        before). Fails with the last screen after `timeout` s."""
        deadline = time.monotonic() + timeout
        while self.status() not in STATE_FORMS[READY]:
            if self.exited():
                raise AssertionError(f"the app exited before its turn ended; the screen was:\n{self.screen()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"the turn never ended; the screen was:\n{self.screen()}")
            time.sleep(POLL_SECONDS)

    def _wait_ready(self, ready: Callable[[str | None], bool], failure: str) -> str:
        """Poll the status bar until `ready(state)`; fail at once when the app has exited, or at `READY_BOUND`."""
        while True:
            state = self.status()
            if ready(state):
                assert state is not None
                return state
            if self.exited():
                raise AssertionError(f"the app exited ({failure}); the screen was:\n{self.screen()}")
            if time.monotonic() > self._ready_by:
                raise AssertionError(f"{failure} {READY_BOUND:g} s after the launch; the screen was:\n{self.screen()}")
            time.sleep(POLL_SECONDS)

    def exited(self) -> bool:
        """Whether the app has exited (its exit status is written)."""
        return self._status_file.exists() and bool(self._status_file.read_text().strip())

    def type(self, text: str) -> None:
        """Type `text` literally."""
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, "-l", text], check=True)

    def press(self, *keys: str) -> None:
        """Press keys by tmux name: `Enter`, `Escape`, `C-q`, `t`."""
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *keys], check=True)

    @property
    def pid(self) -> int:
        """The app's process id: the pane's shell's child (`env` execs the app)."""
        shell = self.pane("#{pane_pid}")
        children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        assert len(children) == 1, f"the pane's shell runs {children!r}, not just the app"
        return int(children[0])

    def wait_until_exited(self, timeout: float = 30) -> int:
        """Wait until the app has exited; its exit status (128+N when a signal N ended it)."""
        deadline = time.monotonic() + timeout
        while not self.exited():
            if time.monotonic() > deadline:
                raise AssertionError(f"the app did not exit; the screen was:\n{self.screen()}")
            time.sleep(POLL_SECONDS)
        return int(self._status_file.read_text())

    def close(self) -> None:
        """Kill the tmux server (and the app, if it still runs) and remove its socket and config."""
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)
        if self._socket:
            Path(self._socket).unlink(missing_ok=True)
        shutil.rmtree(self._files, ignore_errors=True)
