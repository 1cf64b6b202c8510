"""Mutating file tools: Write, Edit and MultiEdit (exact string replacement, all or nothing).

Each can show what it will change before it runs (`preview`: the unified diff, worked out by the same code
that later writes, without writing) and reports what it changed (`metadata["diff"]` of its result).
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from agentcli.diffs import FileDiff, diff_text
from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agentcli.tools.files.read import READ_MAX_LINE_CHARS, human_size
from agentcli.tools.files.sniff import looks_binary
from agentcli.tools.paths import display_path, normalize_rel, resolve_in_workspace

_SNIPPET_CONTEXT = 3
_SNIPPET_MAX_LINES = 16


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # never open through a symlink swapped in after the check
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in fails to open instead of blocking; no effect on files
EDIT_MAX_BYTES = 16 * 1024 * 1024  # Edit holds the file in memory: bigger ones are refused


def _open_error(exc: OSError, rel: str, verb: str) -> ToolError:
    if exc.errno == errno.ELOOP:
        return ToolError(f"{rel} became a symlink after it was checked; refusing to {verb} through it")
    return ToolError(f"Cannot {verb} {rel}: {exc.strerror or exc}")


def _refuse_links(st: os.stat_result, rel: str) -> None:
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise ToolError(
            f"{rel} has {st.st_nlink} hard links: writing it would also change another path, possibly outside "
            "the workspace, so it is refused (write a new file instead)"
        )


def _read_text(path: Path, rel: str, *, for_diff: bool = False) -> str:
    """The file's text; refused with the reason when it is not text Edit can change (or, `for_diff`, show)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except OSError as exc:
        raise _open_error(exc, rel, "read") from None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ToolError(f"{rel} is not a regular file")
            if st.st_size > EDIT_MAX_BYTES:
                does = "changes are shown for" if for_diff else "Edit changes"
                raise ToolError(f"{rel} is {human_size(st.st_size)}; {does} files up to {human_size(EDIT_MAX_BYTES)}")
            data = fh.read(EDIT_MAX_BYTES + 1)
    except OSError as exc:
        raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from None
    if looks_binary(data):
        why = "no diff is shown" if for_diff else "Edit only changes text files"
        raise ToolError(f"{rel} is a binary file; {why}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        why = "no diff is shown" if for_diff else "Edit cannot change it safely"
        raise ToolError(f"{rel} is not valid UTF-8 text; {why}") from None


def _write_text(path: Path, rel: str, content: str) -> None:
    """Write without following a symlink at the last component, and never through a hard link."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o666)
    except OSError as exc:
        raise _open_error(exc, rel, "write") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(f"{rel} is not a regular file")
        _refuse_links(st, rel)  # checked on the opened file: a link made after the first check is caught too
        os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(content)
    except OSError as exc:
        raise ToolError(f"Cannot write {rel}: {exc.strerror or exc}") from None


async def current_text(ctx: ToolContext, path: Path, rel: str, *, for_diff: bool = False) -> str:
    """The file's text: checked on the disk as always (`_read_text`), then, when the editor offers its buffers
    (`ctx.files`), the editor's text (its unsaved changes) instead of the disk's."""
    text = await asyncio.to_thread(_read_text, path, rel, for_diff=for_diff)
    if ctx.files is None or not ctx.files.reads:
        return text
    return await ctx.files.read_text(path)


async def put_text(ctx: ToolContext, path: Path, rel: str, content: str) -> None:
    """Write `content` (after every check): to the editor when it offers to write files, else to the disk."""
    if ctx.files is not None and ctx.files.writes:
        await ctx.files.write_text(path, content)
    else:
        await asyncio.to_thread(_write_text, path, rel, content)


def check_writable_target(path: Path, rel: str) -> None:
    """Refuse (ToolError) a path that is a directory, not a regular file, or a file with other hard links."""
    _check_writable_target(path, rel)


def _check_writable_target(path: Path, rel: str) -> None:
    if path.is_dir():
        raise ToolError(f"{rel} is a directory; give a file path")
    if path.exists() and not path.is_file():
        raise ToolError(f"{rel} is not a regular file")
    try:
        st = path.stat(follow_symlinks=False)
    except OSError:
        return  # a new file
    _refuse_links(st, rel)


class WriteArgs(ToolArgs):
    """Arguments of Write."""

    file_path: str = Field(description="Path of the file to create or overwrite, relative to the workspace")
    content: str = Field(description="The complete new content of the file")


class WriteTool(Tool[WriteArgs]):
    """Create or overwrite a file."""

    name: ClassVar[str] = "Write"
    args_model: ClassVar[type[ToolArgs]] = WriteArgs
    edits_files: ClassVar[bool] = True
    mutating: ClassVar[bool] = True
    path_target: ClassVar[bool] = True

    def summary(self, args: WriteArgs) -> str:
        return f"{normalize_rel(args.file_path)} ({_line_count(args.content)} lines)"

    def permission_target(self, args: WriteArgs) -> str:
        return args.file_path.strip()  # as given: PermissionPolicy resolves it to the workspace-relative path

    async def preview(self, args: WriteArgs, ctx: ToolContext) -> FileDiff:
        """The diff from the file's current text (a new file: none) to `content`."""
        path = resolve_in_workspace(ctx, args.file_path, for_write=True)
        rel = display_path(ctx, path)
        async with ctx.file_locks.lock(path):
            _check_writable_target(path, rel)
            existed = path.exists()
            old = await current_text(ctx, path, rel, for_diff=True) if existed else ""
        return await asyncio.to_thread(diff_text, rel, old, args.content, created=not existed, max_lines=None)

    async def run(self, args: WriteArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx, args.file_path, for_write=True)
        rel = display_path(ctx, path)
        async with ctx.file_locks.lock(path):
            _check_writable_target(path, rel)
            existed = path.exists()
            old: str | None = ""
            if existed:
                try:
                    old = await current_text(ctx, path, rel, for_diff=True)
                except ToolError:
                    old = None  # binary, not UTF-8 or too big: written all the same, with no diff to show
            await put_text(ctx, path, rel, args.content)
        verb = "Overwrote" if existed else "Created"
        result = ToolResult(f"{verb} {rel} ({_line_count(args.content)} lines)", files_modified=[rel])
        if old is not None:
            result.metadata["diff"] = await asyncio.to_thread(diff_text, rel, old, args.content, created=not existed)
        return result


class EditSpec(BaseModel):
    """One replacement of MultiEdit."""

    model_config = ConfigDict(extra="forbid")

    old_string: str = Field(description="Exact text to replace (empty only to create a new file)")
    new_string: str = Field(description="Text to put in its place")
    replace_all: bool = Field(False, description="Replace every occurrence instead of exactly one")


def apply_edit(content: str, edit: EditSpec, rel: str, *, creating: bool) -> tuple[str, int, int]:
    """Apply one edit in memory: (new content, occurrences replaced, offset of the first one)."""
    old, new = edit.old_string, edit.new_string
    if old == new:
        raise ToolError("old_string and new_string are identical; nothing would change")
    if old == "":
        if creating or content == "":
            return new, 1, 0
        raise ToolError(f"old_string is empty but {rel} is not empty; give the text to replace, or use Write")
    count = content.count(old)
    if count == 0 and "\r\n" in content and "\n" in old and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")  # the file uses CRLF endings
        count = content.count(old)
    if count == 0:
        raise ToolError(
            f"old_string not found in {rel}. It must match the file exactly, including whitespace and "
            "indentation; Read the file to check"
        )
    if count > 1 and not edit.replace_all:
        raise ToolError(f"old_string found {count} times in {rel}; add context to make it unique or set replace_all")
    grown = len(content) + (count if edit.replace_all else 1) * (len(new) - len(old))
    if grown > EDIT_MAX_BYTES:  # refused before it is built: doubling edits would take memory without bound
        raise ToolError(f"the edit would make {rel} {grown:,} characters long; Edit and MultiEdit keep files up "
                        f"to {human_size(EDIT_MAX_BYTES)}. Nothing was written")
    first = content.find(old)
    if edit.replace_all:
        return content.replace(old, new), count, first
    return content.replace(old, new, 1), 1, first


def _snippet(content: str, offset: int, new_len: int) -> str:
    """Numbered lines around the changed region, so the model sees the result without a Read."""
    start_line = content.count("\n", 0, offset)
    end_line = content.count("\n", 0, offset + new_len)
    lines = content.split("\n")
    lo = max(0, start_line - _SNIPPET_CONTEXT)
    hi = min(len(lines), end_line + _SNIPPET_CONTEXT + 1, lo + _SNIPPET_MAX_LINES)
    return "\n".join(f"{n + 1:>6}\t{_cut(lines[n].rstrip(chr(13)))}" for n in range(lo, hi))


def _cut(line: str) -> str:
    """A snippet line cut as Read cuts a long line, saying how much is left out."""
    if len(line) <= READ_MAX_LINE_CHARS:
        return line
    return f"{line[:READ_MAX_LINE_CHARS]}… [{len(line) - READ_MAX_LINE_CHARS} more characters]"


@dataclass(frozen=True, slots=True)
class _Edited:
    """What a list of edits does to one file, worked out in memory."""

    old: str  # the file's text before ("" when the edits create it)
    new: str  # after every edit
    creating: bool
    replacements: int
    offset: int  # where the last edit's new text starts in `new`
    new_len: int  # and its length


async def _apply_edits(ctx: ToolContext, path: Path, rel: str, edits: list[EditSpec]) -> _Edited:
    """Read the file and apply `edits` in order, in memory (call it under the file's lock); raises `ToolError`."""
    _check_writable_target(path, rel)
    creating = not path.exists()
    if creating and edits[0].old_string != "":
        raise ToolError(f"File does not exist: {rel}. Use Write to create it (or an empty old_string)")
    old = "" if creating else await current_text(ctx, path, rel)
    content = old
    total = 0
    offset, new_len = 0, 0
    for index, edit in enumerate(edits, start=1):
        try:
            content, replaced, offset = apply_edit(content, edit, rel, creating=creating and index == 1)
        except ToolError as exc:
            if len(edits) == 1:
                raise
            raise ToolError(f"Edit {index} of {len(edits)} failed: {exc}. No changes were written") from None
        total += replaced
        new_len = len(edit.new_string)
    return _Edited(old, content, creating, total, offset, new_len)


async def _preview_edits(ctx: ToolContext, raw_path: str, edits: list[EditSpec]) -> FileDiff:
    """The diff `edits` would make, worked out by the code `_edit_file` runs, without writing."""
    path = resolve_in_workspace(ctx, raw_path, for_write=True)
    rel = display_path(ctx, path)
    async with ctx.file_locks.lock(path):
        edited = await _apply_edits(ctx, path, rel, edits)
    return await asyncio.to_thread(diff_text, rel, edited.old, edited.new, created=edited.creating, max_lines=None)


async def _edit_file(ctx: ToolContext, raw_path: str, edits: list[EditSpec]) -> ToolResult:
    """Apply `edits` in order under the file's lock; write only when every one succeeds."""
    path = resolve_in_workspace(ctx, raw_path, for_write=True)
    rel = display_path(ctx, path)
    async with ctx.file_locks.lock(path):
        edited = await _apply_edits(ctx, path, rel, edits)
        await put_text(ctx, path, rel, edited.new)
    content = edited.new
    if edited.creating:
        result = ToolResult(f"Created {rel} ({_line_count(content)} lines)", files_modified=[rel])
    else:
        total = edited.replacements
        what = f"{len(edits)} edits" if len(edits) > 1 else "1 edit"
        header = f"Applied {what} to {rel} ({total} replacement{'s' if total != 1 else ''})."
        body = f"{header} The last change now reads:\n{_snippet(content, edited.offset, edited.new_len)}"
        result = ToolResult(body, files_modified=[rel])
    result.metadata["diff"] = await asyncio.to_thread(diff_text, rel, edited.old, content, created=edited.creating)
    return result


class EditArgs(ToolArgs):
    """Arguments of Edit."""

    file_path: str = Field(description="Path of the file to change, relative to the workspace")
    old_string: str = Field(description="Exact text to replace; must be unique unless replace_all")
    new_string: str = Field(description="Text to put in its place (must differ from old_string)")
    replace_all: bool = Field(False, description="Replace every occurrence of old_string")


class EditTool(Tool[EditArgs]):
    """Replace an exact string in a file."""

    name: ClassVar[str] = "Edit"
    args_model: ClassVar[type[ToolArgs]] = EditArgs
    edits_files: ClassVar[bool] = True
    mutating: ClassVar[bool] = True
    path_target: ClassVar[bool] = True
    shows_file: ClassVar[bool] = True  # the changed part

    def summary(self, args: EditArgs) -> str:
        return normalize_rel(args.file_path) + (" (replace all)" if args.replace_all else "")

    def permission_target(self, args: EditArgs) -> str:
        return args.file_path.strip()  # as given: PermissionPolicy resolves it to the workspace-relative path

    async def preview(self, args: EditArgs, ctx: ToolContext) -> FileDiff:
        return await _preview_edits(ctx, args.file_path, [self._spec(args)])

    async def run(self, args: EditArgs, ctx: ToolContext) -> ToolResult:
        return await _edit_file(ctx, args.file_path, [self._spec(args)])

    @staticmethod
    def _spec(args: EditArgs) -> EditSpec:
        return EditSpec(old_string=args.old_string, new_string=args.new_string, replace_all=args.replace_all)


class MultiEditArgs(ToolArgs):
    """Arguments of MultiEdit."""

    file_path: str = Field(description="Path of the file to change, relative to the workspace")
    edits: list[EditSpec] = Field(min_length=1, description="Edits applied in order; all succeed or none is written")


class MultiEditTool(Tool[MultiEditArgs]):
    """Several exact replacements in one file, atomically."""

    name: ClassVar[str] = "MultiEdit"
    on_demand: ClassVar[bool] = True  # rarely needed: deferred, loaded through ToolSearch ([tools] defer)
    args_model: ClassVar[type[ToolArgs]] = MultiEditArgs
    edits_files: ClassVar[bool] = True
    mutating: ClassVar[bool] = True
    path_target: ClassVar[bool] = True
    shows_file: ClassVar[bool] = True  # the changed part

    def summary(self, args: MultiEditArgs) -> str:
        return f"{normalize_rel(args.file_path)} ({len(args.edits)} edits)"

    def permission_target(self, args: MultiEditArgs) -> str:
        return args.file_path.strip()  # as given: PermissionPolicy resolves it to the workspace-relative path

    async def preview(self, args: MultiEditArgs, ctx: ToolContext) -> FileDiff:
        return await _preview_edits(ctx, args.file_path, list(args.edits))

    async def run(self, args: MultiEditArgs, ctx: ToolContext) -> ToolResult:
        return await _edit_file(ctx, args.file_path, list(args.edits))
