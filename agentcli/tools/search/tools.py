"""Search tools: Glob (find files by pattern) and Grep (regex over file contents).

Both skip `.git`, `node_modules`, `.venv`, `__pycache__` and whatever `.gitignore` files exclude
(nested ones too). Glob lists files with `rg --files` and stats each match as the list arrives
(newest first needs every match's mtime), else walks the tree in a worker thread (its matcher
cannot backtrack); Grep runs in a child process (`tools.grep_engine`: ripgrep, else a Python
fallback), killed when the call is cancelled or runs out of time, and skips binary files and files
over 10 MiB. A thread reads either child's output in big batches (see `tools.search_child`); Glob's
listing is `tools.rg_listing`.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agentcli.tools.files.read import human_size
from agentcli.tools.files.sniff import is_binary_file
from agentcli.tools.globmatch import compile_glob
from agentcli.tools.paths import display_path, match_glob, normalize_rel, resolve_in_workspace
from agentcli.tools.search.walk import SKIP_DIRS, Stopped, Walk

if TYPE_CHECKING:
    from agentcli.tools.search import grep_engine

__all__ = ["SKIP_DIRS", "GlobTool", "GrepTool"]

GLOB_MAX_RESULTS = 200
GREP_DEFAULT_HEAD_LIMIT = 100
_PROGRESS_EVERY = 200  # files between progress reports (Glob)


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
    read_only: ClassVar[bool] = True
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

        prefix = "" if root_rel == "." else root_rel + "/"

        def report(found: list[tuple[float, str]]) -> str:
            """The text for `(-mtime, path)` pairs: newest first, then by path, capped."""
            if not found:
                return f"No files match {args.pattern}" + (f" in {root_rel}" if root_rel != "." else "")
            found.sort()
            shown = [prefix + rel for _, rel in found[:GLOB_MAX_RESULTS]]
            text = "\n".join(shown)
            if len(found) > len(shown):
                text += (
                    f"\n\n(Showing {len(shown)} of {len(found)} matches, newest first. "
                    "Use a narrower pattern or path to see the rest.)"
                )
            return text

        name = _name_glob(pattern)
        # `NAME` (this folder's files) and `**/NAME` are exactly what rg lists: no second match here.
        exact = name is not None and pattern in (name, "**/" + name)
        from agentcli.tools.search import rg_listing  # with the first search, not at start-up

        listed = await rg_listing.list_files_dated(
            root, name, ctx.progress, top_only=exact and pattern == name, select=None if exact else regex.fullmatch
        )
        if listed is not None:
            return ToolResult(report(listed))

        def work(stop: threading.Event, tick: Callable[[], None]) -> str:
            walk = Walk(workspace, root, stop, tick, progress_every=_PROGRESS_EVERY)
            found: list[tuple[float, str]] = []
            try:
                for path, _ in walk.files():  # the walk checks `stop` at every entry
                    local = path.relative_to(root).as_posix()
                    if regex.fullmatch(local):
                        try:
                            found.append((-path.stat().st_mtime, local))
                        except OSError:
                            continue
            except Stopped:
                return ""  # cancelled or past the deadline: nobody reads this
            return report(found)

        return ToolResult(await _in_thread(ctx, work))


def _name_glob(pattern: str) -> str | None:
    """The part of a Glob pattern that a file's name must match, as an rg glob (None: no such filter)."""
    depth = cut = 0
    for at, ch in enumerate(pattern):
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if ch == "/":
            if depth:
                return None  # `{a/b,c}`: alternatives across folders
            cut = at + 1
    name = pattern[cut:]
    if not name or "**" in name or ",}" in name or "{," in name or "{}" in name:
        return None
    glob = _rg_glob(name)
    return glob if glob == name else None


OutputMode = Literal["content", "files_with_matches", "count"]


class GrepArgs(ToolArgs):
    """Arguments of Grep."""

    pattern: str = Field(min_length=1, description="Regular expression (Rust regex syntax) to search for")
    path: str | None = Field(None, description="File or directory to search (default: the workspace)")
    include: str | None = Field(None, description="Only files matching this glob, e.g. *.py or *.{ts,tsx}")
    output_mode: OutputMode = Field("files_with_matches", description="content | files_with_matches | count")
    case_insensitive: bool = Field(False, description="Ignore case")
    context: int = Field(0, ge=0, le=50, description="Lines of context around each match (content mode)")
    head_limit: int = Field(
        GREP_DEFAULT_HEAD_LIMIT, ge=1, le=10_000, description="Maximum results (lines, files or counts)"
    )


class GrepTool(Tool[GrepArgs]):
    """Search file contents with a regular expression."""

    name: ClassVar[str] = "Grep"
    args_model: ClassVar[type[ToolArgs]] = GrepArgs
    read_only: ClassVar[bool] = True
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
        from agentcli.tools.search import grep_engine  # with the first search, not at start-up

        root, root_rel = _search_root(ctx, args.path)
        if root.is_file():
            size = root.stat().st_size
            if size > grep_engine.MAX_FILE_BYTES:
                raise ToolError(
                    f"{root_rel} is {human_size(size)}; Grep skips files over "
                    f"{human_size(grep_engine.MAX_FILE_BYTES)} (Read it in pages with offset and limit)"
                )
            if is_binary_file(root):
                return ToolResult(_grep_report(args, [], 0, 0, 0, root_rel))
        elif not root.is_dir():
            raise ToolError(f"{root_rel} is not a regular file or a folder; Grep cannot search it")
        search = grep_engine.Search(
            pattern=args.pattern,
            root=root,
            workspace=ctx.workspace.resolve(),
            content=args.output_mode == "content",
            files_only=args.output_mode == "files_with_matches",
            case_insensitive=args.case_insensitive,
            context=args.context if args.output_mode == "content" else 0,
            rg_glob=_rg_glob(args.include) if args.include else None,
        )
        prefix = "" if root_rel == "." or root.is_file() else root_rel + "/"
        include = args.include

        def kept(path: str) -> bool:
            if not include:
                return True
            local = root.name if root.is_file() else path
            return match_glob(include, local, anchored=False)

        hidden = _read_denied_filter(ctx)
        ctx.progress()
        # The loop has the same deadline; this one gives Grep its own message (and bounds direct calls).
        timer = asyncio.timeout(ctx.tool_timeout_seconds)
        try:
            async with timer:
                text = await _collect(args, search, prefix, root_rel, kept, ctx.progress, hidden)
        except TimeoutError:
            if not timer.expired():
                raise
            raise ToolError(
                f"Grep timed out after {ctx.tool_timeout_seconds:g}s; narrow the path, include or pattern"
            ) from None
        return ToolResult(text)


def _read_denied_filter(ctx: ToolContext) -> Callable[[str], bool] | None:
    """Whether Grep must leave a file out: a `Read(...)` deny rule covers it, by its own or its resolved
    path (a deny rule on Read would otherwise be read around with Grep). None: no rule denies reads."""
    policy = ctx.permissions
    if not policy.denies_reads:
        return None
    workspace = ctx.workspace.resolve()
    seen: dict[str, bool] = {}

    def hidden(rel: str) -> bool:
        if rel not in seen:
            resolved = display_path(ctx, (workspace / rel).resolve())
            seen[rel] = policy.read_denied(rel) or policy.read_denied(resolved)
        return seen[rel]

    return hidden


async def _collect(
    args: GrepArgs,
    search: grep_engine.Search,
    prefix: str,
    root_rel: str,
    kept: Callable[[str], bool],
    progress: Callable[[], None],
    hidden: Callable[[str], bool] | None = None,
) -> str:
    """Read the engine's hits into Grep's text: results, group separators, the head-limit note."""
    from agentcli.tools.search import grep_engine

    limit = args.head_limit

    def rel_of(path: str) -> str:
        return prefix + path if prefix or root_rel == "." else root_rel

    def keep(path: str) -> bool:
        return kept(path) and not (hidden is not None and hidden(rel_of(path)))

    # Without an include glob or a deny rule every file stays: no call per file.
    filtered = hidden is not None or args.include is not None
    files = await grep_engine.run_search(search, progress, keep if filtered else None, limit)
    results: list[str] = []
    shown = 0
    for hit in files:
        if shown >= limit:
            break
        rel = rel_of(hit.path)
        if not search.content:
            results.append(rel if search.files_only else f"{rel}:{hit.count}")
            shown += 1
            continue
        last = -1
        for line in hit.lines():
            if shown >= limit:
                break
            if args.context and results and (last == -1 or line.number > last + 1):
                results.append("--")  # group separator (new file or a gap), not a result
            last = line.number
            sep = ":" if line.is_match else "-"
            results.append(f"{rel}{sep}{line.number}{sep}{line.text}" + ("…" if line.cut else ""))
            shown += 1
    total_hits = sum(hit.count for hit in files)
    total_results = total_hits if search.content else len(files)
    return _grep_report(args, results, total_results, len(files), total_hits, root_rel)


_RG_SAFE_GLOB = re.compile(r"[\w.\-/*?{},@+ ]+")


def _rg_glob(include: str) -> str | None:
    """`include` for rg's `--glob` when rg reads it exactly as `match_glob` does, else None (we filter)."""
    glob = include.strip().removeprefix("./")
    if glob.endswith("/"):
        glob += "**"
    if not glob or not _RG_SAFE_GLOB.fullmatch(glob) or glob.startswith("!"):
        return None
    if any("**" in seg and seg != "**" for seg in glob.split("/")):
        return None  # `a**b` spans folders here; ripgrep reads it as `a*b`
    depth = 0
    for ch in glob:
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if depth not in (0, 1):
            return None
    if depth or ("," in glob and "{" not in glob):
        return None
    return glob


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
