"""The scripted fake LLM server for tests: its public names, and its command line.

`FakeLLMServer` (fake_llm_server.py) serves a `Script` (fake_llm_models.py) on a loopback address
to the real SDKs; see fake_llm_server.py for how requests are routed and checked.

`python -m agentcli.testing.fake_llm --script FILE [--port 0]` serves a script file to another
process: it prints exactly one first line `fake_llm listening on http://HOST:PORT`, serves until
SIGTERM or SIGINT, then writes the request log (JSONL) if asked and exits 0 when the script was
followed exactly, 1 (problems on stderr) when it was not, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from pydantic import ValidationError

from agentcli.testing.fake_llm_models import (
    Fault,
    Match,
    Raw,
    RawFrame,
    RecordedRequest,
    Reply,
    Script,
    Step,
    ToolCall,
    Usage,
)
from agentcli.testing.fake_llm_server import FakeLLMServer, is_loopback

__all__ = [
    "FakeLLMServer",
    "Fault",
    "Match",
    "Raw",
    "RawFrame",
    "RecordedRequest",
    "Reply",
    "Script",
    "Step",
    "ToolCall",
    "Usage",
    "is_loopback",
    "main",
]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agentcli.testing.fake_llm",
        description="Scripted fake Anthropic/OpenAI server for tests (loopback only).",
    )
    parser.add_argument("--script", required=True, help="script file (JSON or YAML)")
    parser.add_argument("--port", type=int, default=0, help="port, 0 = any free port (default)")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--log", default=None, help="write every request as JSON lines to this file on exit")
    parser.add_argument("--latency-ms", type=int, default=0, help="delay before each response's headers")
    parser.add_argument("--chunk-delay-ms", type=int, default=0, help="delay between SSE events")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the server until a signal; the exit code says whether the script was followed."""
    args = _parser().parse_args(argv)
    if not is_loopback(args.host):
        print(f"fake_llm: refusing to listen on {args.host!r}; use a loopback address", file=sys.stderr)
        return 2
    try:
        script = Script.load(args.script)
    except (OSError, ValueError, ValidationError) as exc:
        print(f"fake_llm: cannot load script {args.script}: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server = FakeLLMServer(
        script, latency_ms=args.latency_ms, chunk_delay_ms=args.chunk_delay_ms, host=args.host, port=args.port
    )
    with server:
        print(f"fake_llm listening on {server.base_url}", flush=True)
        stop.wait()
    if args.log:
        server.write_log(args.log)
    problems = server.problems()
    if problems:
        print("fake_llm script not done:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
