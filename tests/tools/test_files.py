"""File tools: Read, Write, Edit, MultiEdit, LS, Glob, Grep, TodoWrite, and the registry."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.files import read as files_read
from agentcli.tools.registry import (
    ALL_TOOLS,
    READ_ONLY_TOOLS,
    build_tools,
    canonical_tool_name,
)
from agentcli.tools.search import tools as search

TOOLS: dict[str, Tool[Any]] = {tool.name: tool for tool in build_tools()}


async def call(ctx: ToolContext, name: str, **raw: Any) -> ToolResult:
    tool = TOOLS[name]
    return await tool.run(tool.parse(raw), ctx)


def write(workspace: Path, rel: str, text: str, mtime: float | None = None) -> Path:
    path = workspace / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


# ---- Read ----------------------------------------------------------------------------------


async def test_read_numbers_lines(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "src/app.py", "import os\n\ndef main():\n    pass\n")
    result = await call(ctx, "Read", file_path="src/app.py")
    assert result.content == "     1\timport os\n     2\t\n     3\tdef main():\n     4\t    pass"
    assert not result.is_error


async def test_read_range_and_summary(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "f.txt", "".join(f"line {n}\n" for n in range(1, 101)))
    result = await call(ctx, "Read", file_path="f.txt", offset=10, limit=3)
    assert result.content.splitlines()[:3] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    assert "Showing lines 10-12 of 100. Use offset=13 to read more." in result.content
    assert (
        TOOLS["Read"].summary(TOOLS["Read"].parse({"file_path": "./f.txt", "offset": 10, "limit": 31})) == "f.txt:10-40"
    )
    with pytest.raises(ToolError, match=r"offset 500 is past the end of f.txt \(100 lines\)"):
        await call(ctx, "Read", file_path="f.txt", offset=500)


async def test_read_caps_lines_and_line_length(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "big.txt", "x" * 2500 + "\n" + "".join(f"{n}\n" for n in range(2, 2501)))
    result = await call(ctx, "Read", file_path="big.txt")
    body, _, note = result.content.rpartition("\n\n")
    assert len(body.splitlines()) == 2000
    assert body.splitlines()[0].endswith("… [500 more characters]")
    assert "Showing lines 1-2000 of 2500. Use offset=2001 to read more." in note
    assert "1 line(s) longer than 2000 characters were cut." in note


async def test_read_refusals(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "d").mkdir()
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")  # a broken image
    (workspace / "blob.bin").write_bytes(b"\x7fELF\x00\x00\x00")
    (workspace / "empty.txt").write_text("")
    with pytest.raises(ToolError, match=r"d is a directory.*LS"):
        await call(ctx, "Read", file_path="d")
    with pytest.raises(ToolError, match=r"blob.bin is a binary file"):
        await call(ctx, "Read", file_path="blob.bin")
    with pytest.raises(ToolError, match=r"img.png cannot be shown as an image: not an image Pillow can read"):
        await call(ctx, "Read", file_path="img.png")
    with pytest.raises(ToolError, match=r"File does not exist: nope.txt"):
        await call(ctx, "Read", file_path="nope.txt")
    assert "empty" in (await call(ctx, "Read", file_path="empty.txt")).content


# ---- Write ---------------------------------------------------------------------------------


async def test_write_creates_parents_and_reports_file(ctx: ToolContext, workspace: Path) -> None:
    result = await call(ctx, "Write", file_path="a/b/c.txt", content="one\ntwo\n")
    assert (workspace / "a/b/c.txt").read_text() == "one\ntwo\n"
    assert result.files_modified == ["a/b/c.txt"]
    assert result.content == "Created a/b/c.txt (2 lines)"
    again = await call(ctx, "Write", file_path=str(workspace / "a/b/c.txt"), content="x")
    assert again.content.startswith("Overwrote a/b/c.txt") and again.files_modified == ["a/b/c.txt"]
    with pytest.raises(ToolError, match=r"is a directory"):
        await call(ctx, "Write", file_path="a", content="x")


async def test_write_respects_write_paths(ctx: ToolContext, workspace: Path) -> None:
    sub = dataclasses.replace(ctx, write_paths=["src/**"])
    await call(sub, "Write", file_path="src/ok.py", content="")
    with pytest.raises(ToolError, match=r"^Subagent lacks permission for required tools: write to docs/x.md"):
        await call(sub, "Write", file_path="docs/x.md", content="")
    assert not (workspace / "docs").exists()


# ---- Edit / MultiEdit ----------------------------------------------------------------------


async def test_edit_replaces_unique_string(ctx: ToolContext, workspace: Path) -> None:
    path = write(workspace, "m.py", "def a():\n    return 1\n\ndef b():\n    return 2\n")
    result = await call(ctx, "Edit", file_path="m.py", old_string="return 2", new_string="return 3")
    assert path.read_text() == "def a():\n    return 1\n\ndef b():\n    return 3\n"
    assert result.files_modified == ["m.py"]
    assert "     5\t    return 3" in result.content


async def test_edit_errors(ctx: ToolContext, workspace: Path) -> None:
    path = write(workspace, "m.py", "x = 1\nx = 1\n")
    with pytest.raises(ToolError, match=r"old_string not found in m.py"):
        await call(ctx, "Edit", file_path="m.py", old_string="y = 1", new_string="y = 2")
    with pytest.raises(ToolError, match=r"found 2 times in m.py; add context to make it unique or set replace_all"):
        await call(ctx, "Edit", file_path="m.py", old_string="x = 1", new_string="x = 2")
    with pytest.raises(ToolError, match=r"identical"):
        await call(ctx, "Edit", file_path="m.py", old_string="x = 1", new_string="x = 1")
    with pytest.raises(ToolError, match=r"File does not exist: other.py"):
        await call(ctx, "Edit", file_path="other.py", old_string="a", new_string="b")
    assert path.read_text() == "x = 1\nx = 1\n"


async def test_edit_replace_all_and_create(ctx: ToolContext, workspace: Path) -> None:
    path = write(workspace, "m.py", "x = 1\nx = 1\n")
    result = await call(ctx, "Edit", file_path="m.py", old_string="x = 1", new_string="x = 2", replace_all=True)
    assert path.read_text() == "x = 2\nx = 2\n"
    assert "2 replacements" in result.content
    created = await call(ctx, "Edit", file_path="new/n.py", old_string="", new_string="print(1)\n")
    assert (workspace / "new/n.py").read_text() == "print(1)\n" and created.files_modified == ["new/n.py"]


async def test_edit_keeps_crlf_files(ctx: ToolContext, workspace: Path) -> None:
    path = workspace / "w.txt"
    path.write_bytes(b"a\r\nb\r\nc\r\n")
    await call(ctx, "Edit", file_path="w.txt", old_string="a\nb", new_string="a\nB")
    assert path.read_bytes() == b"a\r\nB\r\nc\r\n"


async def test_multiedit_applies_in_order(ctx: ToolContext, workspace: Path) -> None:
    path = write(workspace, "m.py", "alpha beta\n")
    edits = [{"old_string": "alpha", "new_string": "gamma"}, {"old_string": "gamma beta", "new_string": "done"}]
    result = await call(ctx, "MultiEdit", file_path="m.py", edits=edits)
    assert path.read_text() == "done\n"
    assert result.files_modified == ["m.py"]


async def test_multiedit_is_all_or_nothing(ctx: ToolContext, workspace: Path) -> None:
    path = write(workspace, "m.py", "alpha beta\n")
    before = path.stat().st_mtime_ns
    edits = [{"old_string": "alpha", "new_string": "gamma"}, {"old_string": "missing", "new_string": "x"}]
    with pytest.raises(ToolError, match=r"^Edit 2 of 2 failed: old_string not found in m.py.*No changes were written"):
        await call(ctx, "MultiEdit", file_path="m.py", edits=edits)
    assert path.read_text() == "alpha beta\n"
    assert path.stat().st_mtime_ns == before


async def test_concurrent_edits_of_one_file_are_serialized(ctx: ToolContext, workspace: Path) -> None:
    path = write(workspace, "c.txt", "".join(f"v{n} = 0\n" for n in range(20)))
    await asyncio.gather(
        *(call(ctx, "Edit", file_path="c.txt", old_string=f"v{n} = 0", new_string=f"v{n} = 1") for n in range(20))
    )
    assert path.read_text() == "".join(f"v{n} = 1\n" for n in range(20))


# ---- LS ------------------------------------------------------------------------------------


async def test_ls_sorted_with_dir_marks(ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(workspace, "b.txt", "")
    write(workspace, "a/x.txt", "")
    write(workspace, "c.pyc", "")
    result = await call(ctx, "LS")
    assert result.content.splitlines() == ["./", "  a/", "  b.txt", "  c.pyc"]
    ignored = await call(ctx, "LS", ignore=["*.pyc"])
    assert "c.pyc" not in ignored.content
    monkeypatch.setattr(files_read, "LS_MAX_ENTRIES", 2)
    capped = await call(ctx, "LS", path="./")
    assert "(Showing 2 of 3 entries." in capped.content
    with pytest.raises(ToolError, match=r"b.txt is a file"):
        await call(ctx, "LS", path="b.txt")


# ---- Glob ----------------------------------------------------------------------------------


@pytest.fixture
def tree(workspace: Path) -> Path:
    write(workspace, "src/old.py", "def main():\n    return 1\n", mtime=1_000)
    write(workspace, "src/pkg/new.py", "MAIN = 'x'\ndef helper():\n    main()\n", mtime=3_000)
    write(workspace, "top.py", "import src\n", mtime=2_000)
    write(workspace, "README.md", "def main is documented here\n", mtime=500)
    write(workspace, "build/gen.py", "def main(): pass\n")
    write(workspace, "debug.log", "def main\n")
    write(workspace, "node_modules/m/index.py", "def main(): pass\n")
    write(workspace, ".venv/lib/x.py", "def main(): pass\n")
    write(workspace, ".git/hooks/h.py", "def main(): pass\n")
    write(workspace, "src/__pycache__/old.py", "def main(): pass\n")
    (workspace / "blob.bin").write_bytes(b"def main\x00\x01")
    write(workspace, ".gitignore", "build/\n*.log\n")
    return workspace


async def test_glob_newest_first_skipping_ignored(ctx: ToolContext, tree: Path) -> None:
    result = await call(ctx, "Glob", pattern="**/*.py")
    assert result.content.splitlines() == ["src/pkg/new.py", "top.py", "src/old.py"]
    top = await call(ctx, "Glob", pattern="*.py")
    assert top.content == "top.py"
    under = await call(ctx, "Glob", pattern="*.py", path="src")
    assert under.content == "src/old.py"
    assert (await call(ctx, "Glob", pattern="**/*.rs")).content.startswith("No files match")


async def test_glob_searches_an_ignored_dir_when_named(ctx: ToolContext, tree: Path) -> None:
    assert (await call(ctx, "Glob", pattern="*.py", path="build")).content == "build/gen.py"


async def test_glob_cap_has_a_note(ctx: ToolContext, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "GLOB_MAX_RESULTS", 2)
    result = await call(ctx, "Glob", pattern="**/*.py")
    assert result.content.splitlines()[:2] == ["src/pkg/new.py", "top.py"]
    assert "(Showing 2 of 3 matches, newest first." in result.content


# ---- Grep ----------------------------------------------------------------------------------


async def test_grep_files_with_matches(ctx: ToolContext, tree: Path) -> None:
    result = await call(ctx, "Grep", pattern=r"def main")
    assert result.content.splitlines() == ["README.md", "src/old.py"]


async def test_grep_include_case_and_path(ctx: ToolContext, tree: Path) -> None:
    assert (await call(ctx, "Grep", pattern="main", include="*.py")).content.splitlines() == [
        "src/old.py",
        "src/pkg/new.py",
    ]
    insensitive = await call(ctx, "Grep", pattern="^main", case_insensitive=True, include="*.py")
    assert insensitive.content == "src/pkg/new.py"
    assert (await call(ctx, "Grep", pattern="main", path="src/pkg")).content == "src/pkg/new.py"
    assert (await call(ctx, "Grep", pattern="main", path="src/old.py")).content == "src/old.py"


async def test_grep_content_and_context(ctx: ToolContext, tree: Path) -> None:
    result = await call(ctx, "Grep", pattern="main", output_mode="content", include="*.py")
    assert result.content.splitlines() == [
        "src/old.py:1:def main():",
        "src/pkg/new.py:3:    main()",
    ]
    around = await call(ctx, "Grep", pattern="helper", output_mode="content", context=1)
    assert around.content.splitlines() == [
        "src/pkg/new.py-1-MAIN = 'x'",
        "src/pkg/new.py:2:def helper():",
        "src/pkg/new.py-3-    main()",
    ]


async def test_grep_count(ctx: ToolContext, tree: Path) -> None:
    result = await call(ctx, "Grep", pattern="main", output_mode="count", case_insensitive=True)
    lines = result.content.splitlines()
    assert lines[:3] == ["README.md:1", "src/old.py:1", "src/pkg/new.py:2"]
    assert lines[-1] == "4 matching lines in 3 files"


async def test_grep_head_limit_note(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "many.txt", "".join(f"hit {n}\n" for n in range(150)))
    result = await call(ctx, "Grep", pattern="hit", output_mode="content")
    lines = result.content.splitlines()
    assert lines[0] == "many.txt:1:hit 0" and lines[99] == "many.txt:100:hit 99"
    assert "(Showing the first 100 of 150 lines;" in result.content
    small = await call(ctx, "Grep", pattern="hit", output_mode="content", head_limit=5)
    assert "(Showing the first 5 of 150 lines;" in small.content


async def test_grep_bad_regex_and_progress(ctx: ToolContext, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ToolError, match=r"Invalid regular expression"):
        await call(ctx, "Grep", pattern="(unclosed")
    ticks: list[int] = []
    monkeypatch.setattr(search, "_PROGRESS_EVERY", 1)
    await call(dataclasses.replace(ctx, progress=lambda: ticks.append(1)), "Grep", pattern="x")
    assert ticks


# ---- TodoWrite, parsing, registry ----------------------------------------------------------


async def test_todowrite_replaces_the_list(ctx: ToolContext) -> None:
    todos = [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "id": "fix"},
        {"content": "Run tests", "status": "pending"},
    ]
    result = await call(ctx, "TodoWrite", todos=todos)
    assert [(t.content, t.status, t.id) for t in ctx.todos] == [
        ("Read the code", "completed", "1"),
        ("Fix the bug", "in_progress", "fix"),
        ("Run tests", "pending", "3"),
    ]
    assert result.content == "Todo list updated (1/3 completed):\n[x] Read the code\n[~] Fix the bug\n[ ] Run tests"
    assert not result.files_modified
    await call(ctx, "TodoWrite", todos=[{"content": "Only this", "status": "pending"}])
    assert [t.content for t in ctx.todos] == ["Only this"]


def test_parse_lists_every_problem() -> None:
    with pytest.raises(ToolError) as info:
        TOOLS["Edit"].parse({"file_path": 3, "old_string": None, "bogus": 1})
    message = str(info.value)
    assert message.startswith("Invalid arguments for Edit: ")
    for field in ("file_path", "old_string", "new_string", "bogus"):
        assert field in message
    assert "\n" not in message
    with pytest.raises(ToolError, match=r"todos\.0\.status"):
        TOOLS["TodoWrite"].parse({"todos": [{"content": "x", "status": "done"}]})
    with pytest.raises(ToolError, match=r"edits"):
        TOOLS["MultiEdit"].parse({"file_path": "x", "edits": []})


def test_registry() -> None:
    assert list(ALL_TOOLS)[:9] == ["Read", "Write", "Edit", "MultiEdit", "LS", "Glob", "Grep", "Bash", "TodoWrite"]
    mutating = {name for name, cls in ALL_TOOLS.items() if cls.mutating}
    assert mutating == {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "WebFetch", "WebSearch"}
    assert {name for name, cls in ALL_TOOLS.items() if cls.network_only} == {"WebFetch", "WebSearch"}
    assert set(READ_ONLY_TOOLS) == {"LS", "Glob", "Grep", "Read", "TodoWrite", "LSP", "AskUserQuestion"}
    for name in ("LS", "Glob", "Grep", "Read", "LSP"):
        assert ALL_TOOLS[name].concurrency_safe and not ALL_TOOLS[name].mutating
    assert not ALL_TOOLS["TodoWrite"].concurrency_safe and not ALL_TOOLS["TodoWrite"].mutating
    for raw, expected in [
        ("read", "Read"),
        ("multiedit", "MultiEdit"),
        ("multi_edit", "MultiEdit"),
        ("ls", "LS"),
        ("list", "LS"),
        ("todowrite", "TodoWrite"),
        ("BASH", "Bash"),
        ("web_fetch", "WebFetch"),
        ("WebSearch", "WebSearch"),
        ("notebook_edit", "NotebookEdit"),
        ("ExitPlanMode", None),
        ("mcp__server__tool", None),
    ]:
        assert canonical_tool_name(raw) == expected
    assert [t.name for t in build_tools(["grep", "read", "Read"])] == ["Read", "Grep"]
    with pytest.raises(ValueError, match=r"ExitPlanMode"):
        build_tools(["Read", "ExitPlanMode"])


def test_every_tool_has_a_description_and_schema() -> None:
    for tool in build_tools():
        assert len(tool.description()) > 100, tool.name
        schema = tool.input_schema()
        assert schema["type"] == "object" and schema.get("additionalProperties") is False, tool.name
