"""A model server that streams without end: the reply is cut at its size bound with one error line, and
memory stays bounded. The server here is a plain HTTP server that never finishes its event stream (text
deltas, or a tool call's argument deltas), driven by the real `agentcli run` (the anthropic SDK)."""

from __future__ import annotations

import json
import resource
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Script
from tests.e2e.helpers import cli_env, run_cli

CHUNK = "z" * 60_000


def _event(name: str, data: dict[str, object]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


class _Endless(BaseHTTPRequestHandler):
    kind = "text"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        block = ({"type": "text", "text": ""} if self.kind == "text"
                 else {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}})
        delta = ({"type": "text_delta", "text": CHUNK} if self.kind == "text"
                 else {"type": "input_json_delta", "partial_json": CHUNK})
        self.wfile.write(_event("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5", "content": [],
            "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}))
        self.wfile.write(_event("content_block_start", {"type": "content_block_start", "index": 0,
                                                        "content_block": block}))
        frame = _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        try:
            for _ in range(1_000_000):  # ~60 GB: "without end" for the client
                self.wfile.write(frame)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endless() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("kind", ["text", "tool_args"])
def test_a_reply_without_end_is_cut_with_one_line(kind: str, endless: ThreadingHTTPServer, tmp_path: Path) -> None:
    _Endless.kind = kind
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeLLMServer(Script()) as unused:  # cli_env wants a server; the endless one replaces its URL
        env = cli_env("anthropic", unused, tmp_path)
    env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{endless.server_address[1]}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = run_cli(["run", "--output-format", "text", "--cwd", str(ws), "say a lot"], env)
    peak_mib = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "passed 64 MiB without finishing" in line]
    assert len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert peak_mib < 1024, f"peak RSS {peak_mib:.0f} MiB"
