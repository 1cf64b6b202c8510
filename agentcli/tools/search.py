"""Search tools: Glob (find files by pattern) and Grep (regex over file contents).

Both walk the tree in a worker thread, skip `.git`, `node_modules`, `.venv`, `__pycache__`
and whatever the workspace's `.gitignore` excludes; Grep also skips binary files.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

import pathspec
from pydantic import Field

from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agentcli.tools.files_read import is_binary_file
from agentcli.tools.globmatch import compile_glob
from agentcli.tools.paths import display_path, match_glob, normalize_rel, resolve_in_workspace

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})
GLOB_MAX_RESULTS = 200
GREP_DEFAULT_HEAD_LIMIT = 100
GREP_MAX_LINE_CHARS = 500
_PROGRESS_EVERY = 200  # files between progress reports


class _Stopped(Exception):
    """The awaiting coroutine was cancelled: the worker thread stops early."""


@dataclass
class _Walk:
    """Files under `root`, honouring SKIP_DIRS and the workspace `.gitignore`."""

    workspace: Path
    root: Path
    stop: threading.Event
    tick: Callable[[], None]
    ignore: pathspec.GitIgnoreSpec | None = field(default=None)

    def __post_init__(self) -> None:
        gitignore = self.workspace / ".gitignore"
        if gitignore.is_file():
            try:
                lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines = []
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
            root_rel = self._rel(self.root)
            # A folder the person names explicitly is searched even when it is ignored.
            if root_rel == "." or not spec.match_file(root_rel + "/"):
                self.ignore = spec

    def _rel(self, path: Path) -> str:
        text = path.relative_to(self.workspace).as_posix()
        return text if text else "."

    def _ignored(self, rel: str, is_dir: bool) -> bool:
        return self.ignore is not None and self.ignore.match_file(rel + "/" if is_dir else rel)

    def files(self) -> Iterator[tuple[Path, str]]:
        """(absolute path, workspace-relative path) of every file, in a stable order."""
        if self.root.is_file():
            yield self.root, self._rel(self.root)
            return
        seen = 0
        for dirpath, dirnames, filenames in os.walk(self.root):
            if self.stop.is_set():
                raise _Stopped
            base = Path(dirpath)
            base_rel = self._rel(base)
            prefix = "" if base_rel == "." else base_rel + "/"
            dirnames[:] = sorted(
                d for d in dirnames if d not in SKIP_DIRS and not self._ignored(prefix + d, is_dir=True)
            )
            for name in sorted(filenames):
                rel = prefix + name
                if self._ignored(rel, is_dir=False):
                    continue
                path = base / name
                if path.is_symlink() and not _inside(path, self.workspace):
                    continue  # never read through a link that leaves the workspace
                seen += 1
                if seen % _PROGRESS_EVERY == 0:
                    self.tick()
                    if self.stop.is_set():
                        raise _Stopped
                yield path, rel


def _inside(path: Path, workspace: Path) -> bool:
    try:
        return path.resolve().is_relative_to(workspace)
    except (OSError, RuntimeError):
        return False


async def _in_thread(ctx: ToolContext, work: Callable[[threading.Event, Callable[[], None]], str]) -> str:
    """Run blocking search work in a thread; report progress on the loop; stop it if cancelled."""
    loop = asyncio.get_running_loop()
    stop = threading.Event()

    def tick() -> None:
        loop.call_soon_threadsafe(ctx.progress)

    try:
        return await asyncio.to_thread(work, stop, tick)
    except asyncio.CancelledError:
        stop.set()
        raise


def _search_root(ctx: ToolContext, raw: str | None) -> tuple[Path, str]:
    root = resolve_in_workspace(ctx, raw or ".")
    rel = display_path(ctx, root)
    if not root.exists():
        raise ToolError(f"Path does not exist: {rel}")
    return root, rel


class GlobArgs(ToolArgs):
    """Arguments of Glob."""

    pattern: str = Field(min_length=1, description="Glob pattern such as **/*.py or src/**/test_*.py")
    path: str | None = Field(None, description="Directory to search in (default: the workspace)")


class GlobTool(Tool[GlobArgs]):
    """Find files by name pattern, newest first."""

    name: ClassVar[str] = "Glob"
    args_model: ClassVar[type[ToolArgs]] = GlobArgs
    concurrency_safe: ClassVar[bool] = True

    def summary(self, args: GlobArgs) -> str:
        where = normalize_rel(args.path) if args.path else ""
        return f"{args.pattern}" + (f" in {where}" if where and where != "." else "")

    def permission_target(self, args: GlobArgs) -> str:
        return args.pattern

    async def run(self, args: GlobArgs, ctx: ToolContext) -> ToolResult:
        root, root_rel = _search_root(ctx, args.path)
        if not root.is_dir():
            raise ToolError(f"{root_rel} is a file, not a directory; give a directory as path")
        pattern = args.pattern.strip()
        if pattern.startswith("./"):
            pattern = pattern[2:]
        if Path(pattern).is_absolute():
            raise ToolError("Glob patterns are relative to path; give e.g. **/*.py and set path instead")
        regex = compile_glob(pattern)
        workspace = ctx.workspace.resolve()

        def work(stop: threading.Event, tick: Callable[[], None]) -> str:
            walk = _Walk(workspace, root, stop, tick)
            found: list[tuple[float, str]] = []
            for path, rel in walk.files():
                local = path.relative_to(root).as_posix()
                if regex.fullmatch(local):
                    try:
                        mtime = path.stat().st_mtime
                    except OSError:
                        continue
                    found.append((mtime, rel))
            if not found:
                return f"No files match {args.pattern}" + (f" in {root_rel}" if root_rel != "." else "")
            found.sort(key=lambda item: (-item[0], item[1]))
            shown = [rel for _, rel in found[:GLOB_MAX_RESULTS]]
            text = "\n".join(shown)
            if len(found) > len(shown):
                text += (
                    f"\n\n(Showing {len(shown)} of {len(found)} matches, newest first. "
                    "Use a narrower pattern or path to see the rest.)"
                )
            return text

        return ToolResult(await _in_thread(ctx, work))


OutputMode = Literal["content", "files_with_matches", "count"]


class GrepArgs(ToolArgs):
    """Arguments of Grep."""

    pattern: str = Field(min_length=1, description="Python regular expression to search for")
    path: str | None = Field(None, description="File or directory to search (default: the workspace)")
    include: str | None = Field(None, description="Only files matching this glob, e.g. *.py or *.{ts,tsx}")
    output_mode: OutputMode = Field("files_with_matches", description="content | files_with_matches | count")
    case_insensitive: bool = Field(False, description="Ignore case")
    context: int = Field(0, ge=0, le=50, description="Lines of context around each match (content mode)")
    head_limit: int = Field(
        GREP_DEFAULT_HEAD_LIMIT, ge=1, le=10_000, description="Maximum results (lines, files or counts)"
    )


def _cut(line: str) -> str:
    return line if len(line) <= GREP_MAX_LINE_CHARS else line[:GREP_MAX_LINE_CHARS] + "…"


def _grep_file(path: Path, regex: re.Pattern[str], rel: str, context: int, want_lines: bool) -> tuple[int, list[str]]:
    """(matching line count, output lines in rg style) of one file."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return 0, []
    hits = [n for n, line in enumerate(lines) if regex.search(line)]
    if not want_lines or not hits:
        return len(hits), []
    out: list[str] = []
    hit_set = set(hits)
    last_shown = -1
    for n in hits:
        lo, hi = max(0, n - context), min(len(lines) - 1, n + context)
        if last_shown >= 0 and lo > last_shown + 1:
            out.append("--")
        for k in range(max(lo, last_shown + 1), hi + 1):
            sep = ":" if k in hit_set else "-"
            out.append(f"{rel}{sep}{k + 1}{sep}{_cut(lines[k])}")
        last_shown = max(last_shown, hi)
    return len(hits), out


class GrepTool(Tool[GrepArgs]):
    """Search file contents with a regular expression."""

    name: ClassVar[str] = "Grep"
    args_model: ClassVar[type[ToolArgs]] = GrepArgs
    concurrency_safe: ClassVar[bool] = True

    def summary(self, args: GrepArgs) -> str:
        text = f'grep "{args.pattern}"'
        if args.include:
            text += f" in {args.include}"
        if args.path and normalize_rel(args.path) != ".":
            text += f" under {normalize_rel(args.path)}"
        return text

    def permission_target(self, args: GrepArgs) -> str:
        return args.pattern

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        root, root_rel = _search_root(ctx, args.path)
        try:
            regex = re.compile(args.pattern, re.IGNORECASE if args.case_insensitive else 0)
        except re.error as exc:
            raise ToolError(f"Invalid regular expression {args.pattern!r}: {exc}") from None
        workspace = ctx.workspace.resolve()
        mode = args.output_mode
        limit = args.head_limit

        def work(stop: threading.Event, tick: Callable[[], None]) -> str:
            walk = _Walk(workspace, root, stop, tick)
            results: list[str] = []
            shown = total_results = files_matched = total_hits = 0
            for path, rel in walk.files():
                if args.include and not match_glob(args.include, path.relative_to(root).as_posix(), anchored=False):
                    continue
                if is_binary_file(path):
                    continue
                count, lines = _grep_file(path, regex, rel, args.context, want_lines=mode == "content")
                if not count:
                    continue
                files_matched += 1
                total_hits += count
                if mode == "files_with_matches":
                    entries = [rel]
                elif mode == "count":
                    entries = [f"{rel}:{count}"]
                else:
                    entries = (["--"] if results and args.context else []) + lines
                for entry in entries:
                    if entry == "--":  # group separator, not a result
                        if shown < limit:
                            results.append(entry)
                        continue
                    total_results += 1
                    if shown < limit:
                        results.append(entry)
                        shown += 1
            return _grep_report(args, results, total_results, files_matched, total_hits, root_rel)

        return ToolResult(await _in_thread(ctx, work))


def _grep_report(
    args: GrepArgs, results: list[str], total_results: int, files_matched: int, total_hits: int, root_rel: str
) -> str:
    """The text Grep returns: results, then a note when the head limit cut them."""
    where = f" in {root_rel}" if root_rel != "." else ""
    if not results:
        return f"No matches for {args.pattern!r}{where}" + (f" (files matching {args.include})" if args.include else "")
    while results and results[-1] == "--":
        results.pop()
    shown = sum(1 for e in results if e != "--")
    text = "\n".join(results)
    if args.output_mode == "count":
        text += f"\n\n{total_hits} matching lines in {files_matched} files"
    if shown < total_results:
        unit = {"content": "lines", "files_with_matches": "files", "count": "files"}[args.output_mode]
        text += (
            f"\n\n(Showing the first {shown} of {total_results} {unit}; raise head_limit or narrow the "
            "pattern, path or include to see more.)"
        )
    return text
