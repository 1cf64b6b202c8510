"""Read-only file tools: Read (numbered lines of a text file) and LS (one directory's entries)."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agentcli.tools.paths import display_path, match_glob, normalize_rel, resolve_in_workspace

READ_DEFAULT_LINES = 2000
READ_MAX_LINE_CHARS = 2000
LS_MAX_ENTRIES = 1000
_SNIFF_BYTES = 8192


def is_binary_file(path: Path) -> bool:
    """A file whose first 8 KiB hold a NUL byte is binary (git's heuristic)."""
    try:
        with path.open("rb") as fh:
            return b"\x00" in fh.read(_SNIFF_BYTES)
    except OSError:
        return False


def human_size(size: int) -> str:
    """`1.2 MB`-style size."""
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"  # pragma: no cover


class ReadArgs(ToolArgs):
    """Arguments of Read."""

    file_path: str = Field(description="Path of the file, relative to the workspace (or absolute inside it)")
    offset: int | None = Field(None, ge=1, description="1-based line number to start at")
    limit: int | None = Field(None, ge=1, description=f"Number of lines to read (default {READ_DEFAULT_LINES})")


@dataclass
class _ReadPage:
    lines: list[str] = field(default_factory=list)
    total: int = 0
    cut_lines: int = 0


def _read_page(path: Path, first: int, count: int) -> _ReadPage:
    """Lines `first..first+count-1` (1-based) of a text file, counting all lines."""
    page = _ReadPage()
    last = first + count - 1
    with path.open("r", encoding="utf-8", errors="replace", newline=None) as fh:
        for number, line in enumerate(fh, start=1):
            page.total = number
            if first <= number <= last:
                text = line.rstrip("\n")
                if len(text) > READ_MAX_LINE_CHARS:
                    text = text[:READ_MAX_LINE_CHARS] + f"… [{len(text) - READ_MAX_LINE_CHARS} more characters]"
                    page.cut_lines += 1
                page.lines.append(text)
    return page


class ReadTool(Tool[ReadArgs]):
    """Read a text file as numbered lines."""

    name: ClassVar[str] = "Read"
    args_model: ClassVar[type[ToolArgs]] = ReadArgs
    concurrency_safe: ClassVar[bool] = True

    def summary(self, args: ReadArgs) -> str:
        path = normalize_rel(args.file_path)
        if args.offset is None and args.limit is None:
            return path
        first = args.offset or 1
        return f"{path}:{first}-{first + args.limit - 1}" if args.limit else f"{path}:{first}-"

    def permission_target(self, args: ReadArgs) -> str:
        return args.file_path.strip()  # as given: PermissionPolicy resolves it to the workspace-relative path

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx, args.file_path)
        rel = display_path(ctx, path)
        if not path.exists():
            raise ToolError(f"File does not exist: {rel}")
        if path.is_dir():
            raise ToolError(f"{rel} is a directory, not a file; use LS to list it or Glob to find files in it")
        if not path.is_file():
            raise ToolError(f"{rel} is not a regular file")
        size = path.stat().st_size
        if size == 0:
            return ToolResult(f"(The file {rel} exists but is empty.)")
        if is_binary_file(path):
            raise ToolError(f"{rel} is a binary file ({human_size(size)}); Read only shows text files")
        first = args.offset or 1
        count = args.limit or READ_DEFAULT_LINES
        try:
            page = await asyncio.to_thread(_read_page, path, first, count)
        except OSError as exc:
            raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from None
        if not page.lines:
            raise ToolError(f"offset {first} is past the end of {rel} ({page.total} lines)")
        body = "\n".join(f"{number:>6}\t{text}" for number, text in enumerate(page.lines, start=first))
        notes: list[str] = []
        shown_last = first + len(page.lines) - 1
        if first > 1 or shown_last < page.total:
            note = f"Showing lines {first}-{shown_last} of {page.total}."
            if shown_last < page.total:
                note += f" Use offset={shown_last + 1} to read more."
            notes.append(note)
        if page.cut_lines:
            notes.append(f"{page.cut_lines} line(s) longer than {READ_MAX_LINE_CHARS} characters were cut.")
        if notes:
            body += "\n\n(" + " ".join(notes) + ")"
        return ToolResult(body, metadata={"path": rel, "first_line": first, "last_line": shown_last})


class LSArgs(ToolArgs):
    """Arguments of LS."""

    path: str = Field(".", description="Directory to list, relative to the workspace (default: the workspace)")
    ignore: list[str] = Field(default_factory=list, description="Glob patterns of names to leave out")


def _list_dir(path: Path) -> list[tuple[str, bool]]:
    entries: list[tuple[str, bool]] = []
    with os.scandir(path) as it:
        for entry in it:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            entries.append((entry.name, is_dir))
    entries.sort(key=lambda item: item[0])
    return entries


class LSTool(Tool[LSArgs]):
    """List one directory."""

    name: ClassVar[str] = "LS"
    args_model: ClassVar[type[ToolArgs]] = LSArgs
    concurrency_safe: ClassVar[bool] = True

    def summary(self, args: LSArgs) -> str:
        return normalize_rel(args.path) or "."

    def permission_target(self, args: LSArgs) -> str:
        return args.path.strip() or "."

    async def run(self, args: LSArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx, args.path)
        rel = display_path(ctx, path)
        if not path.exists():
            raise ToolError(f"Directory does not exist: {rel}")
        if not path.is_dir():
            raise ToolError(f"{rel} is a file, not a directory; use Read to read it")
        try:
            entries = await asyncio.to_thread(_list_dir, path)
        except OSError as exc:
            raise ToolError(f"Cannot list {rel}: {exc.strerror or exc}") from None
        kept = [
            name + ("/" if is_dir else "")
            for name, is_dir in entries
            if not any(match_glob(glob, name, anchored=False) for glob in args.ignore)
        ]
        if not kept:
            return ToolResult(f"{rel}/ is empty" + (" (after ignore patterns)" if entries else ""))
        shown = kept[:LS_MAX_ENTRIES]
        body = f"{rel}/\n" + "\n".join(f"  {name}" for name in shown)
        if len(kept) > len(shown):
            body += f"\n\n(Showing {len(shown)} of {len(kept)} entries. Use Glob to search within it.)"
        return ToolResult(body)
