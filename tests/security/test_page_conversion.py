"""A web page cannot keep agentcli alive: WebFetch's HTML conversion is bounded in size and time, and a stop
signal during it ends the run at once.

Black box through `agentcli run` against the fake model: the model fetches a page from a local server (allowed
with `[web_fetch] allow_private_hosts`) whose markup is ~300 KB of `<a <a <a …`, on which Python's
`html.parser` is quadratic (20 KB took ~10 s, 150 KB 159 s before).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, db, last_json
from tests.processes import alive

HOSTILE = b"<html><body><p>Intro.</p>" + b"<a " * 100_000  # ~300 KB, never closed
ALLOW = {"AGENTCLI_WEB_FETCH__ALLOW_PRIVATE_HOSTS": '["127.0.0.1"]'}
CUT_NOTE = "shown as plain text"


class _Hostile(BaseHTTPRequestHandler):
    served: ClassVar[threading.Event] = threading.Event()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(HOSTILE)))
        self.end_headers()
        self.wfile.write(HOSTILE)
        self.wfile.flush()
        self.served.set()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def page() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    _Hostile.served = threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/links"
    finally:
        server.shutdown()
        server.server_close()


def _fetch(url: str) -> Step:
    return Step(match=Match(system_contains=MAIN, turn=0),
                reply=Reply(tool_calls=[ToolCall(name="WebFetch", input={"url": url})]))


def _descendants(root: int) -> list[int]:
    """Live processes below `root` (by parent id, read from /proc)."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    parents[int(name)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return [pid for pid in found if alive(pid)]


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes have used (exited ones no longer count)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total / ticks


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_quadratic_page_is_cut_to_plain_text_and_the_run_goes_on(page: str, tmp_path: Path) -> None:
    script = Script(steps=[_fetch(page), Step(match=Match(system_contains=MAIN, turn=1, last_user_contains=CUT_NOTE),
                                              reply=Reply(text="survived"))])
    started = time.monotonic()
    with FakeLLMServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--yes", "--output-format", "json", "--cwd", str(tmp_path),
             "read the page"],
            capture_output=True, text=True, timeout=90, env=cli_env("anthropic", server, tmp_path, **ALLOW))
        elapsed = time.monotonic() - started
        assert proc.returncode == 0, proc.stderr
        server.assert_done()
    result = last_json(proc.stdout)
    assert result["status"] == "completed" and result["result"] == "survived"
    tool_result = server.requests[-1].body["messages"][-1]["content"][0]
    assert tool_result["is_error"] is False
    assert "Intro." in str(tool_result["content"])  # the page's text, tags stripped
    assert elapsed < 45, f"the run took {elapsed:.0f}s"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_sigterm_during_a_page_conversion_ends_the_run_with_143(page: str, tmp_path: Path) -> None:
    with FakeLLMServer(Script(steps=[_fetch(page)])) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "run", "--yes", "--output-format", "json", "--cwd", str(tmp_path),
             "read the page"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=cli_env("anthropic", server, tmp_path, **ALLOW))
        try:
            assert _Hostile.served.wait(60), "the page was never fetched"
            # The conversion is under way once agentcli (or a process below it) has spent a second of CPU
            # since the page was sent.
            base = _cpu_seconds([proc.pid, *_descendants(proc.pid)])
            deadline = time.monotonic() + 60
            while _cpu_seconds([proc.pid, *_descendants(proc.pid)]) - base < 1.0:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no conversion seen"
                time.sleep(0.05)
            below = _descendants(proc.pid)
            proc.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            try:
                out, err = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                raise AssertionError("agentcli was still running 5 s after SIGTERM") from None
            waited = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "stopped by SIGTERM" in err
    assert waited < 5
    deadline = time.monotonic() + 5
    while (left := [pid for pid in below if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"processes outlived agentcli: {left}"
    result = json.loads(out.strip().splitlines()[-1])
    assert result["status"] == "cancelled"
    with db(tmp_path) as conn:
        status, = conn.execute("SELECT status FROM sessions").fetchone()
    assert status == "cancelled"
