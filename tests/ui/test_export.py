"""/export and /copy's pieces: the transcript as Markdown, code blocks, where an export may be written."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.ui.export import (
    ExportError,
    code_blocks,
    default_export_name,
    export_target,
    last_answer,
    last_code_block,
    transcript_markdown,
    write_export,
)
from agentcli.ui.model import BlockItem, NoteItem, TextItem, ThinkingItem, ToolItem

ANSWER = "Here:\n\n```python\nprint('one')\n```\n\nand\n\n~~~~\nsecond ```\n~~~~\n"


def _items() -> list:  # type: ignore[type-arg]
    block = BlockItem(task_id="t-1", subagent_type="explore", description="Find auth code", model="light",
                      agent="explore#1", status="completed", tool_calls=3, input_tokens=1000, output_tokens=200,
                      elapsed_ms=4100)
    block.items = [TextItem(["looking"], done=True), ToolItem("c2", "Grep", "login"),
                   TextItem(["Auth lives in src/auth.py."], done=True)]
    return [
        NoteItem("welcome", "info"),
        NoteItem("where is auth?", "user"),
        NoteItem("📎 src/auth.py (2 lines)", "attachment"),
        ThinkingItem(["secret reasoning"], done=True),
        ToolItem("c1", "Read", "src/auth.py", status="ok", duration_ms=120),
        block,
        TextItem([ANSWER], done=True),
        NoteItem("! ls", "user"),
        NoteItem("a ```b``` c\n(exit 0; added to the context of your next prompt)", "shell"),
        NoteItem("error: boom", "error"),
    ]


def test_the_transcript_as_markdown() -> None:
    text = transcript_markdown(_items(), session_id="s-1", workspace="/w", model="sonnet",
                               now=datetime(2025, 1, 2, 3, 4, 5))
    assert text.startswith("# agentcli transcript\n") and "agentcli sessions show s-1" in text
    assert "## You\n\nwhere is auth?\n\n📎 src/auth.py (2 lines)\n\n## agentcli" in text
    assert "- `Read` src/auth.py · ok · 0.1s" in text
    assert ("**Subagent explore#1** (explore, light): Find auth code · completed · 3 tools · 1.2k tok · 4.1s"
            in text)
    assert "> Auth lives in src/auth.py." in text and "looking" not in text  # the block's result, summarised
    assert "secret reasoning" not in text and "welcome" not in text
    assert "````text\na ```b``` c" in text  # a fence longer than the output's own backticks
    assert "> ⚠ error: boom" in text
    assert text.index("## You\n\n! ls") > text.index("print('one')")


def test_code_blocks_and_the_last_answer() -> None:
    assert code_blocks(ANSWER) == ["print('one')", "second ```"]
    assert code_blocks("```\nunclosed") == ["unclosed"]
    items = _items()
    assert last_answer(items) == ANSWER.strip()
    assert last_code_block(items) == "second ```"
    assert last_answer([NoteItem("x", "user")]) is None and last_code_block([]) is None


def _ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws.resolve(), agent="main", session_id="s", permissions=PermissionPolicy("ask"),
                       file_locks=FileLocks())


def test_an_export_is_written_in_the_workspace_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = _ctx(ws)
    assert write_export("notes/out.md", "# hi\n", ctx) == "notes/out.md"
    assert (ws / "notes" / "out.md").read_text() == "# hi\n"
    with pytest.raises(ExportError, match=r"exists; /export notes/out\.md --force replaces it"):
        write_export("notes/out.md", "again", ctx)
    assert write_export("notes/out.md", "again", ctx, force=True) == "notes/out.md"
    assert (ws / "notes" / "out.md").read_text() == "again"
    for bad, why in [("../out.md", "outside the workspace"), (".git/hooks/pre-commit", "git's config or hooks"),
                     (".agentcli/config.toml", "agentcli's project config"), ("notes", "is a folder")]:
        with pytest.raises(ExportError, match=why):
            write_export(bad, "x", ctx, force=True)
    os.symlink(tmp_path, ws / "link")
    with pytest.raises(ExportError, match="outside the workspace"):
        write_export("link/out.md", "x", ctx)
    assert not (tmp_path / "out.md").exists()


def test_export_arguments() -> None:
    assert export_target("out.md --force", "abcdef123456") == ("out.md", True)
    name, force = export_target("", "abcdef123456")
    assert not force and name.startswith("agentcli-abcdef12-") and name.endswith(".md")
    assert default_export_name("abcdef123456", datetime(2025, 1, 2, 3, 4, 5)) == "agentcli-abcdef12-20250102-030405.md"
