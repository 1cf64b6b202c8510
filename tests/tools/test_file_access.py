"""`ToolContext.files`: an editor's buffers as the text Read, Edit and MultiEdit see and Write, Edit and MultiEdit
change, after the same checks as on the disk (which stays untouched)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.registry import build_tools

TOOLS: dict[str, Tool[Any]] = {tool.name: tool for tool in build_tools()}


class Buffers:
    """An editor's open buffers by absolute path; unopened files read from the disk, as an editor does."""

    def __init__(self, texts: dict[Path, str], *, reads: bool = True, writes: bool = True,
                 fail: str | None = None) -> None:
        self.texts = texts
        self.reads = reads
        self.writes = writes
        self.fail = fail
        self.calls: list[tuple[str, Path]] = []

    async def read_text(self, path: Path) -> str:
        self.calls.append(("read", path))
        if self.fail:
            raise ToolError(self.fail)
        return self.texts[path] if path in self.texts else path.read_text()

    async def write_text(self, path: Path, content: str) -> None:
        self.calls.append(("write", path))
        if self.fail:
            raise ToolError(self.fail)
        self.texts[path] = content


def call(ctx: ToolContext, name: str, **raw: Any) -> ToolResult:
    tool = TOOLS[name]
    return asyncio.run(tool.run(tool.parse(raw), ctx))


@pytest.fixture
def disk(workspace: Path) -> Path:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    return path


def test_read_sees_the_buffer_not_the_disk(ctx: ToolContext, disk: Path) -> None:
    buffers = Buffers({disk: "x = 2\ny = 3\n"})
    result = call(dataclasses.replace(ctx, files=buffers), "Read", file_path="a.py", offset=2)
    assert result.content == "     2\ty = 3\n\n(Showing lines 2-2 of 2.)" and result.metadata["total_lines"] == 2
    assert buffers.calls == [("read", disk)]


def test_an_empty_file_on_disk_reads_the_buffers_text(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "new.py").write_text("")
    buffers = Buffers({workspace / "new.py": "unsaved\r\ntext"})
    assert call(dataclasses.replace(ctx, files=buffers), "Read", file_path="new.py").content == (
        "     1\tunsaved\n     2\ttext")


def test_binary_files_and_the_checks_stay_on_the_disk(ctx: ToolContext, workspace: Path, outside: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\x7fELF\x00\x00")
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    buffers = Buffers({})
    with_buffers = dataclasses.replace(ctx, files=buffers)
    with pytest.raises(ToolError, match="binary"):
        call(with_buffers, "Read", file_path="blob.bin")
    with pytest.raises(ToolError, match="cannot be shown as an image"):  # an image is the disk's too
        call(with_buffers, "Read", file_path="img.png")
    with pytest.raises(ToolError, match="outside the workspace"):
        call(with_buffers, "Read", file_path=str(outside / "secret.txt"))
    with pytest.raises(ToolError, match="does not exist"):
        call(with_buffers, "Read", file_path="missing.py")
    with pytest.raises(ToolError, match="outside write_paths"):
        call(dataclasses.replace(with_buffers, write_paths=["docs/**"]), "Write", file_path="a.py", content="x")
    assert buffers.calls == []


def test_write_edit_and_multiedit_go_to_the_buffer(ctx: ToolContext, disk: Path) -> None:
    buffers = Buffers({disk: "x = 2\n"})
    with_buffers = dataclasses.replace(ctx, files=buffers)
    edited = call(with_buffers, "Edit", file_path="a.py", old_string="x = 2", new_string="x = 3")
    assert buffers.texts[disk] == "x = 3\n" and "x = 2" in repr(edited.metadata["diff"])
    call(with_buffers, "MultiEdit", file_path="a.py", edits=[{"old_string": "3", "new_string": "4"},
                                                             {"old_string": "x", "new_string": "z"}])
    assert buffers.texts[disk] == "z = 4\n"
    written = call(with_buffers, "Write", file_path="b.py", content="new\n")
    assert written.content.startswith("Created b.py")
    assert buffers.texts[disk.parent / "b.py"] == "new\n"
    assert disk.read_text() == "x = 1\n" and not (disk.parent / "b.py").exists()


def test_an_edit_of_text_only_the_disk_has_fails_against_the_buffer(ctx: ToolContext, disk: Path) -> None:
    buffers = Buffers({disk: "x = 2\n"})
    with pytest.raises(ToolError, match="old_string not found"):
        call(dataclasses.replace(ctx, files=buffers), "Edit", file_path="a.py", old_string="x = 1", new_string="y")


def test_reads_and_writes_are_offered_separately(ctx: ToolContext, disk: Path) -> None:
    reads_only = Buffers({disk: "x = 2\n"}, writes=False)
    call(dataclasses.replace(ctx, files=reads_only), "Edit", file_path="a.py", old_string="2", new_string="5")
    assert disk.read_text() == "x = 5\n" and reads_only.texts[disk] == "x = 2\n"
    writes_only = Buffers({}, reads=False)
    call(dataclasses.replace(ctx, files=writes_only), "Edit", file_path="a.py", old_string="5", new_string="6")
    assert writes_only.texts[disk] == "x = 6\n" and disk.read_text() == "x = 5\n"
    assert "5" in call(dataclasses.replace(ctx, files=writes_only), "Read", file_path="a.py").content


def test_an_editor_failure_is_the_tools_error(ctx: ToolContext, disk: Path) -> None:
    failing = dataclasses.replace(ctx, files=Buffers({}, fail="The editor could not read a.py: gone"))
    with pytest.raises(ToolError, match=r"^The editor could not read a\.py: gone$"):
        call(failing, "Read", file_path="a.py")
    with pytest.raises(ToolError, match="gone"):
        call(failing, "Edit", file_path="a.py", old_string="1", new_string="2")
    assert disk.read_text() == "x = 1\n"


def test_without_buffers_everything_is_on_the_disk(ctx: ToolContext, disk: Path) -> None:
    assert ctx.files is None
    call(ctx, "Edit", file_path="a.py", old_string="1", new_string="2")
    assert "x = 2" in call(ctx, "Read", file_path="a.py").content and disk.read_text() == "x = 2\n"
