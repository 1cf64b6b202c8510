"""LSP's shapes as agentcli's: 0-based UTF-16 positions as 1-based character columns, diagnostics as
`tools.Diagnostic`, paths relative to the workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.tools import Diagnostic

if TYPE_CHECKING:
    from lsprotocol import types

    from agentcli.lsp.client import ServerConnection

MAX_FILE_BYTES = 4 << 20  # a larger file is not sent to a server
_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


async def read_text(path: Path) -> str | None:
    """`path`'s text (UTF-8, undecodable bytes replaced), or None: gone, not a file, or too large to send."""
    def read() -> str | None:
        try:
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                return None
            return path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None

    return await asyncio.to_thread(read)


def relative(path: Path, workspace: Path) -> str:
    """`path` relative to `workspace` when inside it, else absolute."""
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def column_of(line_text: str, utf16: int) -> int:
    """The 1-based character column of a UTF-16 offset into `line_text`."""
    units = 0
    for index, char in enumerate(line_text):
        if units >= utf16:
            return index + 1
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line_text) + 1


def utf16_of(line_text: str, column: int) -> int:
    """The UTF-16 offset of a 1-based character column of `line_text`."""
    return sum(2 if ord(char) > 0xFFFF else 1 for char in line_text[: max(column - 1, 0)])


def line_of(text: str | None, line: int) -> str:
    """The 0-based `line` of `text` ("" when there is none)."""
    if text is None:
        return ""
    lines = text.splitlines()
    return lines[line] if 0 <= line < len(lines) else ""


def diagnostic(found: types.Diagnostic, path: Path, workspace: Path, conn: ServerConnection) -> Diagnostic:
    """One published finding of `path` as agentcli's, its column counted in the text the server was sent."""
    sent = conn.documents.get(path.as_uri())
    start = found.range.start
    code = "" if found.code is None else str(found.code)
    severity = _SEVERITY.get(int(found.severity) if found.severity is not None else 1, "error")
    return Diagnostic(relative(path, workspace), start.line + 1,
                      column_of(line_of(sent[1] if sent else None, start.line), start.character),
                      severity, found.message, found.source or conn.spec.name, code)  # type: ignore[arg-type]
