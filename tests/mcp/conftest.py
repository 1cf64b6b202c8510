"""Real MCP servers for the tests: `mcp-server-time` from PyPI over stdio, and the SDK-built HTTP server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.mcp.specs import ServerSpec

ROOT = Path(__file__).resolve().parents[2]


def time_server(pid_file: Path, *, project: bool = False, name: str = "time") -> ServerSpec:
    """`mcp-server-time`, started through `sh` so its pid lands in `pid_file` (exec keeps the pid)."""
    script = f'echo $$ >> "{pid_file}"; exec "{sys.executable}" -m mcp_server_time --local-timezone UTC'
    return ServerSpec(name, "stdio", "test", project, command="sh", args=("-c", script))


def pids(pid_file: Path) -> list[int]:
    """Every pid the wrapper wrote, oldest first."""
    return [int(line) for line in pid_file.read_text().split()] if pid_file.exists() else []


@pytest.fixture
def http_server() -> Iterator[tuple[str, str]]:
    """(url, token) of the SDK-built streamable-HTTP server, in a subprocess on a free port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "tok-" + os.urandom(4).hex()
    proc = subprocess.Popen([sys.executable, "-m", "tests.mcp.http_server", str(port), token], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the HTTP MCP server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", token
    finally:
        proc.terminate()
        proc.wait(10)
