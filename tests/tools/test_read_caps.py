"""Read is bounded: bytes per call, characters per line, and it stops reading after the page."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from agentcli.tools import files_read
from agentcli.tools.base import ToolContext, ToolResult
from agentcli.tools.files_read import READ_MAX_BYTES, READ_MAX_LINE_CHARS, ReadTool, _read_page


async def read(ctx: ToolContext, **raw: Any) -> ToolResult:
    tool = ReadTool()
    return await tool.run(tool.parse(raw), ctx)


async def test_output_is_capped_in_bytes_with_a_way_on(ctx: ToolContext, workspace: Path) -> None:
    line = "y" * 1000
    (workspace / "wide.txt").write_text((line + "\n") * 1000)
    result = await read(ctx, file_path="wide.txt")
    body, _, note = result.content.rpartition("\n\n")
    shown = len(body.splitlines())
    assert 200 < shown < 300 and len(body.encode()) <= READ_MAX_BYTES
    assert f"Showing lines 1-{shown} of 1000. Use offset={shown + 1} to read more." in note
    assert "Output is capped at 256 KB of text per Read." in note
    nxt = await read(ctx, file_path="wide.txt", offset=shown + 1)
    assert nxt.content.startswith(f"{shown + 1:>6}\t{line}")


async def test_a_huge_file_is_paged_without_being_read_whole(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace / "big.log"
    with path.open("w") as fh:
        for n in range(1, 400_001):
            fh.write(f"line {n}\n")
    opened: list[int] = []
    real_open = Path.open

    def spy(self: Path, *args: Any, **kwargs: Any) -> Any:
        fh = real_open(self, *args, **kwargs)
        if self == path:
            opened.append(1)
            reads = fh.readline

            def counted(*a: Any) -> str:
                opened.append(1)
                return reads(*a)

            fh.readline = counted  # type: ignore[method-assign]
        return fh

    monkeypatch.setattr(files_read, "READ_COUNT_MAX_BYTES", 1024)
    monkeypatch.setattr(Path, "open", spy)
    result = await read(ctx, file_path="big.log", limit=10)
    assert result.content.splitlines()[-1].startswith("(Showing lines 1-10 of a ")
    assert "Use offset=11 to read more." in result.content
    assert len(opened) < 20  # a handful of readline calls: the page, not 400,000 lines


def test_a_single_huge_line_is_cut_while_streaming(workspace: Path) -> None:
    path = workspace / "one.txt"
    path.write_text("z" * 3_000_000 + "\nnext\n")
    page = _read_page(path, 1, 10, threading.Event())
    assert page.lines[0] == "z" * READ_MAX_LINE_CHARS + f"… [{3_000_000 - READ_MAX_LINE_CHARS} more characters]"
    assert page.lines[1:] == ["next"] and page.total == 2 and page.cut_lines == 1


def test_totals_are_exact_for_small_files(workspace: Path) -> None:
    path = workspace / "t.txt"
    path.write_text("a\nb\nc")  # no final newline
    assert _read_page(path, 1, 2).total == 3
    assert _read_page(path, 3, 5).lines == ["c"]
    assert _read_page(path, 9, 5).total == 3
