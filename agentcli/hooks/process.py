"""Run one hook command: `bash -c` in the workspace, the event's JSON on stdin, a time limit.

Like Bash tool calls, the command runs in its own process group with the session's environment
(provider keys removed, `tools/shell/env`) plus `CLAUDE_PROJECT_DIR`; when it ends or times out the
whole group is stopped, and the reaper kills it should agentcli die first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentcli.tools import DRAIN_GRACE_SECONDS, TERM_GRACE_SECONDS, reaper, stop_process_group

OUTPUT_LIMIT_BYTES = 64_000  # of stdout and of stderr each; the rest is counted, not kept


@dataclass(frozen=True, slots=True)
class Finished:
    """How one hook process ended."""

    exit_code: int | None  # None: it never started, or it was killed at its time limit
    stdout: str
    stderr: str
    timed_out: bool
    duration_ms: float
    error: str = ""  # it could not be started


async def _read_capped(stream: asyncio.StreamReader | None, limit: int) -> bytes:
    kept = bytearray()
    if stream is None:
        return b""
    while chunk := await stream.read(65536):
        if len(kept) < limit:
            kept += chunk[: limit - len(kept)]
    return bytes(kept)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write the input and close stdin; a hook that never reads it is no failure."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


async def run_command(
    command: str, stdin: bytes, *, cwd: Path, env: Mapping[str, str], timeout: float
) -> Finished:
    """Run `command` with `stdin`; never raises for the command's own failures."""
    started = time.perf_counter()
    guard = reaper()
    try:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=dict(env),
            preexec_fn=guard.spawn_hook(),
        )
    except OSError as exc:
        return Finished(None, "", "", False, (time.perf_counter() - started) * 1000, f"cannot start: {exc}")
    pgid = proc.pid  # start_new_session: the group id is bash's pid
    guard.track(pgid)
    exited: asyncio.Future[int] = asyncio.ensure_future(proc.wait())
    feeding = asyncio.ensure_future(_feed(proc, stdin))
    out = asyncio.ensure_future(_read_capped(proc.stdout, OUTPUT_LIMIT_BYTES))
    err = asyncio.ensure_future(_read_capped(proc.stderr, OUTPUT_LIMIT_BYTES))
    try:
        await asyncio.wait({exited}, timeout=timeout)
        timed_out = not exited.done()
        if not timed_out:  # background children may still hold the pipes: a moment, then they are stopped
            await asyncio.wait({out, err}, timeout=DRAIN_GRACE_SECONDS)
        await stop_process_group(pgid, exited)
        await asyncio.wait({out, err}, timeout=TERM_GRACE_SECONDS)
    except BaseException:
        await stop_process_group(pgid, exited)
        raise
    finally:
        guard.untrack(pgid)
        for job in (feeding, out, err, exited):
            if not job.done():
                job.cancel()
    stdout = out.result() if out.done() and not out.cancelled() else b""
    stderr = err.result() if err.done() and not err.cancelled() else b""
    code = None if timed_out or not exited.done() or exited.cancelled() else exited.result()
    return Finished(
        code,
        stdout.decode("utf-8", errors="replace"),
        stderr.decode("utf-8", errors="replace"),
        timed_out,
        (time.perf_counter() - started) * 1000,
    )


def hook_environment(env: Mapping[str, str] | None, workspace: Path) -> dict[str, str]:
    """A hook's environment: the session's Bash environment (no provider keys) and `CLAUDE_PROJECT_DIR`."""
    base = os.environ if env is None else env
    return {**base, "CLAUDE_PROJECT_DIR": str(workspace)}
