"""Run the fake LLM server in its own process for benchmarks, as a remote API would be.

In-process, the server's own work would compete with the code under measurement for the GIL.
Timestamps in its request log are CLOCK_MONOTONIC, comparable with `time.monotonic()` here.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from agentcli.testing.fake_llm import RecordedRequest, Script


@contextlib.contextmanager
def server_process(
    script: Script, workdir: Path, cpus: set[int] | None = None, strict: bool = True
) -> Iterator[tuple[str, list[RecordedRequest]]]:
    """Yield (base_url, requests); `requests` is filled from the server's log when the block ends. `cpus`: the
    processors the server may run on (Linux), e.g. to keep it off the one the measured client runs on.
    `strict`: raise RuntimeError when the script was not followed exactly (False: the caller judges the log)."""
    script_file, log_file = workdir / "script.json", workdir / "requests.jsonl"
    script_file.write_text(script.model_dump_json())
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli.testing.fake_llm", "--script", str(script_file), "--log", str(log_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    if cpus:
        os.sched_setaffinity(proc.pid, cpus)
    assert proc.stdout is not None
    base_url = proc.stdout.readline().split()[-1]
    requests: list[RecordedRequest] = []
    try:
        yield base_url, requests
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    requests.extend(RecordedRequest.model_validate_json(line) for line in log_file.read_text().splitlines())
    if strict and proc.returncode != 0:
        raise RuntimeError(f"fake server: script not followed:\n{err}")


def gaps_ms(requests: list[RecordedRequest]) -> list[float]:
    """Between consecutive requests: end of one response -> arrival of the next request."""
    ordered = sorted(requests, key=lambda r: r.received_at)
    return [
        (b.received_at - a.finished_at) * 1000
        for a, b in itertools.pairwise(ordered)
        if a.finished_at is not None
    ]
