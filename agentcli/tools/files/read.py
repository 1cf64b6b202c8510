"""Read-only file tools: Read (numbered lines of a text file; an image file shown as an image, `image_read`; a PDF's
text by pages, `pdf`; a notebook's cells, `notebook`) and LS (one directory's entries)."""

from __future__ import annotations

import asyncio
import io
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, TextIO

from pydantic import Field

from agentcli.llm import ImageBlock, ImageError, image_from_base64
from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agentcli.tools.files import notebook, pdf
from agentcli.tools.files.image_read import is_image_path, read_image
from agentcli.tools.files.sniff import SNIFF_BYTES, looks_binary
from agentcli.tools.paths import display_path, match_glob, normalize_rel, resolve_for_read

READ_DEFAULT_LINES = 2000
READ_MAX_LINE_CHARS = 2000
READ_MAX_CHARS = 100_000  # text one call returns (default of `[agent] read_max_chars`); the rest is paged with `offset`
READ_COUNT_MAX_BYTES = 8 * 1024 * 1024  # files up to this size get their total line count
_CHUNK_CHARS = 1 << 16
LS_MAX_ENTRIES = 1000


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
    offset: int | None = Field(None, ge=1, description="1-based line number to start at (a notebook: cell number)")
    limit: int | None = Field(None, ge=1, description=f"Number of lines to read (default {READ_DEFAULT_LINES}; a "
                                                      "notebook: cells)")
    pages: str | None = Field(
        None, description=f'PDF files only: the pages to read, "3" or "1-5" (at most {pdf.PDF_MAX_PAGES} per call)'
    )


@dataclass
class _ReadPage:
    lines: list[str] = field(default_factory=list)
    total: int | None = 0  # lines in the file; None when the rest of a big file was not read
    cut_lines: int = 0
    capped: bool = False  # stopped at the character cap; the next line is `first + len(lines)`


class _Stopped(Exception):
    """The call was cancelled or ran out of time: the reading thread stops."""


def _rest_of_line(fh: TextIO, stop: threading.Event) -> int:
    """Skip to the end of the current line; the characters skipped (not counting the newline)."""
    skipped = 0
    while chunk := fh.readline(_CHUNK_CHARS):
        if stop.is_set():
            raise _Stopped
        if chunk.endswith("\n"):
            return skipped + len(chunk) - 1
        skipped += len(chunk)
    return skipped


def _read_page(
    path: Path, first: int, count: int, stop: threading.Event | None = None, max_chars: int = READ_MAX_CHARS
) -> _ReadPage:
    """Lines `first..first+count-1` (1-based), numbered as Read shows them in at most `max_chars`, streaming.

    The first line of a page always fits (a line is cut at READ_MAX_LINE_CHARS). No line is ever held
    whole (a long one is cut while it is read); lines before `first` are skipped the same way. The total
    is counted only for files up to READ_COUNT_MAX_BYTES: reading stops after the page.
    """
    with path.open("r", encoding="utf-8", errors="replace", newline=None) as fh:
        return _page_of(fh, path.stat().st_size, first, count, stop, max_chars)


def _page_of_text(
    text: str, first: int, count: int, stop: threading.Event | None = None, max_chars: int = READ_MAX_CHARS
) -> _ReadPage:
    """`_read_page` of a text the editor gave (its unsaved buffer), with the same line endings and limits."""
    return _page_of(io.StringIO(text, newline=None), len(text.encode("utf-8", "replace")), first, count, stop,
                    max_chars)


def _page_of(
    fh: TextIO, size: int, first: int, count: int, stop: threading.Event | None, max_chars: int
) -> _ReadPage:
    """The page of `_read_page` from an open text stream of `size` bytes."""
    stop = stop or threading.Event()
    page = _ReadPage()
    used = 0
    number = 0
    with fh:
        while True:
            if stop.is_set():
                raise _Stopped
            if len(page.lines) >= count or page.capped:
                break
            head = fh.readline(READ_MAX_LINE_CHARS + 1)
            if not head:
                page.total = number
                return page
            number += 1
            extra = 0
            if head.endswith("\n"):
                text = head[:-1]
            elif len(head) > READ_MAX_LINE_CHARS:
                text = head[:READ_MAX_LINE_CHARS]
                extra = 1 + _rest_of_line(fh, stop)
            else:
                text = head  # the last line, without a newline
            if number < first:
                continue
            if extra:
                text += f"… [{extra} more characters]"
            cost = len(text) + max(6, len(str(number))) + 2  # `{number:>6}\t{text}\n`
            if page.lines and used + cost > max_chars:
                page.capped = True
                number -= 1
                break
            used += cost
            page.cut_lines += bool(extra)  # only lines shown count as cut
            page.lines.append(text)
        shown_last = number
        if size > READ_COUNT_MAX_BYTES:
            page.total = None if fh.read(1) or page.capped else shown_last
            return page
        rest = 0
        last = ""
        while chunk := fh.read(_CHUNK_CHARS):
            rest += chunk.count("\n")
            last = chunk[-1]
        # Lines so far (the unshown capped one was read to its end), then those after it.
        page.total = shown_last + (1 if page.capped else 0) + rest + (1 if last and last != "\n" else 0)
    return page


class ReadTool(Tool[ReadArgs]):
    """Read a text file as numbered lines, or show an image file."""

    name: ClassVar[str] = "Read"
    args_model: ClassVar[type[ToolArgs]] = ReadArgs
    read_only: ClassVar[bool] = True
    concurrency_safe: ClassVar[bool] = True
    path_target: ClassVar[bool] = True
    shows_file: ClassVar[bool] = True

    def summary(self, args: ReadArgs) -> str:
        path = normalize_rel(args.file_path)
        if args.pages is not None:
            return f"{path} (pages {args.pages.strip()})"
        if args.offset is None and args.limit is None:
            return path
        first = args.offset or 1
        return f"{path}:{first}-{first + args.limit - 1}" if args.limit else f"{path}:{first}-"

    def permission_target(self, args: ReadArgs) -> str:
        return args.file_path.strip()  # as given: PermissionPolicy resolves it to the workspace-relative path

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_for_read(ctx, args.file_path)
        rel = display_path(ctx, path)
        if not path.exists():
            raise ToolError(f"File does not exist: {rel}")
        if path.is_dir():
            raise ToolError(f"{rel} is a directory, not a file; use LS to list it or Glob to find files in it")
        if not path.is_file():
            raise ToolError(f"{rel} is not a regular file")
        size = path.stat().st_size
        head = _head(path)
        if pdf.is_pdf(path, head):  # the disk's: an editor's buffers hold text
            return await _read_pdf(path, rel, args, ctx)
        if args.pages is not None:
            raise ToolError(f"pages is for PDF files; {rel} is not one (use offset and limit)")
        buffers = ctx.files if ctx.files is not None and ctx.files.reads else None  # the editor's text, if offered
        if notebook.is_notebook(path) and (size or buffers is not None):
            return await _read_notebook(path, rel, args, ctx)
        if size == 0 and buffers is None:
            return ToolResult(f"(The file {rel} exists but is empty.)")
        if is_image_path(path) and size:  # shown to the model as an image
            return await read_image(path, rel, size)
        if looks_binary(head):  # binary files are the disk's: an editor's buffers hold text
            raise ToolError(f"{rel} is a binary file ({human_size(size)}); Read only shows text files")
        first = args.offset or 1
        count = args.limit or READ_DEFAULT_LINES
        stop = threading.Event()
        try:
            if buffers is not None:
                text = await buffers.read_text(path)
                if not text:
                    return ToolResult(f"(The file {rel} exists but is empty.)")
                size = len(text.encode("utf-8", "replace"))
                page = await asyncio.to_thread(_page_of_text, text, first, count, stop, ctx.read_max_chars)
            else:
                page = await asyncio.to_thread(_read_page, path, first, count, stop, ctx.read_max_chars)
        except OSError as exc:
            raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from None
        except asyncio.CancelledError:
            stop.set()  # the reading thread ends at its next line
            raise
        if not page.lines:
            raise ToolError(f"offset {first} is past the end of {rel} ({page.total} lines)")
        body = "\n".join(f"{number:>6}\t{text}" for number, text in enumerate(page.lines, start=first))
        notes: list[str] = []
        if page.cut_lines:
            notes.append(f"{page.cut_lines} line(s) longer than {READ_MAX_LINE_CHARS} characters were cut.")
        shown_last = first + len(page.lines) - 1
        more = page.total is None or shown_last < page.total
        if first > 1 or more:
            of = f"of {page.total}" if page.total is not None else f"of a {human_size(size)} file"
            note = f"Showing lines {first}-{shown_last} {of}."
            if page.capped:
                note += f" Read returns at most {ctx.read_max_chars:,} characters per call."
            if more:
                note += f" Use offset={shown_last + 1} to read more."
            notes.append(note)  # last, so the result ends with where to read on
        if notes:
            body += "\n\n(" + " ".join(notes) + ")"
        return ToolResult(
            body, metadata={"path": rel, "first_line": first, "last_line": shown_last, "total_lines": page.total}
        )


def _head(path: Path) -> bytes:
    """The file's first bytes (what `sniff` looks at); empty when it cannot be read (the reader reports why)."""
    try:
        with path.open("rb") as fh:
            return fh.read(SNIFF_BYTES)
    except OSError:
        return b""


async def _read_pdf(path: Path, rel: str, args: ReadArgs, ctx: ToolContext) -> ToolResult:
    """Read of a PDF: its pages' text (`pdf`), extracted in a thread that stops when the call is cancelled."""
    if args.offset is not None or args.limit is not None:
        raise ToolError(f'{rel} is a PDF: give pages (such as "1-5") instead of offset and limit')
    first, last = pdf.parse_pages(args.pages) if args.pages is not None else (1, None)
    stop = threading.Event()
    try:
        got = await asyncio.to_thread(pdf.extract, path, rel, first, last, ctx.read_max_chars, stop)
    except OSError as exc:
        raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from None
    except asyncio.CancelledError:
        stop.set()  # the extracting thread ends at its next page
        raise
    result = ToolResult(pdf.render(rel, got, first, ctx.read_max_chars), metadata={"path": rel})
    if got.pages:
        result.metadata.update(first_page=got.pages[0][0], last_page=got.pages[-1][0], total_pages=got.total)
    if path.stat().st_size <= pdf.PDF_DOCUMENT_MAX_BYTES:
        result.metadata["document"] = str(path)  # the seam: a provider that takes PDFs may send the file itself
    return result


async def _read_notebook(path: Path, rel: str, args: ReadArgs, ctx: ToolContext) -> ToolResult:
    """Read of a Jupyter notebook: its cells with ids, sources and outputs (`notebook`); `offset` and `limit` count
    cells. The editor's text when it offers its buffers, as for any text file."""
    if ctx.files is not None and ctx.files.reads:
        text = await ctx.files.read_text(path)
    else:
        text = await asyncio.to_thread(notebook.read_notebook_text, path, rel)
    nb = await asyncio.to_thread(notebook.load, text, rel)
    first = args.offset or 1
    view = await asyncio.to_thread(notebook.render, nb, first, args.limit or len(nb.cells), ctx.read_max_chars)
    if view.total == 0:
        return ToolResult(f"(The notebook {rel} has no cells.)", metadata={"path": rel})
    if view.last < first:
        raise ToolError(f"offset {first} is past the end of {rel} ({view.total} cells)")
    notes: list[str] = []
    if view.images_left:
        notes.append(f"{view.images_left} more image output(s) were left out.")
    if first > 1 or view.last < view.total:
        note = f"Showing cells {first}-{view.last} of {view.total}."
        if view.capped:
            note += f" Read returns at most {ctx.read_max_chars:,} characters per call."
        if view.last < view.total:
            note += f" For a notebook offset and limit count cells: use offset={view.last + 1} to read more."
        notes.append(note)
    body = view.text + ("\n\n(" + " ".join(notes) + ")" if notes else "")
    metadata: dict[str, object] = {"path": rel, "first_cell": first, "last_cell": view.last, "total_cells": view.total}
    images: list[ImageBlock] = []
    for number, (_mime, encoded) in enumerate(view.images, start=1):  # the image outputs, made fit as any image
        try:
            images.append((await asyncio.to_thread(image_from_base64, encoded, f"{rel} image {number}")).block)
        except ImageError as exc:
            body += f"\n(image {number} of this Read cannot be shown: {exc})"
    return ToolResult(body, metadata=metadata, images=images)


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
    read_only: ClassVar[bool] = True
    concurrency_safe: ClassVar[bool] = True
    path_target: ClassVar[bool] = True

    def summary(self, args: LSArgs) -> str:
        return normalize_rel(args.path) or "."

    def permission_target(self, args: LSArgs) -> str:
        return args.path.strip() or "."

    async def run(self, args: LSArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_for_read(ctx, args.path)
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
