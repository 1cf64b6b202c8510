"""Read is bounded: characters per call, characters per line, and it stops reading after the page."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentcli.config.schema import AgentSettings
from agentcli.tools.base import ToolContext, ToolResult
from agentcli.tools.files import read as files_read
from agentcli.tools.files.read import READ_MAX_CHARS, READ_MAX_LINE_CHARS, ReadTool, _read_page


async def read(ctx: ToolContext, **raw: Any) -> ToolResult:
    tool = ReadTool()
    return await tool.run(tool.parse(raw), ctx)


async def test_output_is_capped_in_characters_with_a_way_on(ctx: ToolContext, workspace: Path) -> None:
    line = "y" * 1000
    (workspace / "wide.txt").write_text((line + "\n") * 1000)  # 1 MB: 2000 lines would be ~250k tokens
    result = await read(ctx, file_path="wide.txt")
    body, _, note = result.content.rpartition("\n\n")
    shown = len(body.splitlines())
    assert READ_MAX_CHARS == ctx.read_max_chars == 100_000
    assert 90 < shown < 100 and len(body) <= READ_MAX_CHARS and len(result.content) < READ_MAX_CHARS + 300
    assert note == (
        f"(Showing lines 1-{shown} of 1000. Read returns at most 100,000 characters per call. "
        f"Use offset={shown + 1} to read more.)"
    )
    assert result.content.endswith(f"Use offset={shown + 1} to read more.)")  # the last thing the model reads
    nxt = await read(ctx, file_path="wide.txt", offset=shown + 1)
    assert nxt.content.startswith(f"{shown + 1:>6}\t{line}")
    assert f"Showing lines {shown + 1}-{2 * shown} of 1000." in nxt.content


async def test_the_cap_is_the_contexts_setting(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "wide.txt").write_text(("y" * 1000 + "\n") * 1000)
    small = await read(replace(ctx, read_max_chars=20_000), file_path="wide.txt")
    assert len(small.content.rpartition("\n\n")[0].splitlines()) == 19  # 19 lines of 1008 characters
    assert small.content.endswith("Read returns at most 20,000 characters per call. Use offset=20 to read more.)")
    (workspace / "short.txt").write_text("a\nb\n")
    whole = await read(replace(ctx, read_max_chars=20_000), file_path="short.txt")
    assert whole.content == "     1\ta\n     2\tb"  # under the cap: no note


async def test_long_lines_cut_and_the_cap_end_with_the_offset(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "min.js").write_text(("z" * 5000 + "\n") * 200)
    result = await read(ctx, file_path="min.js")
    body, _, note = result.content.rpartition("\n\n")
    shown = len(body.splitlines())
    assert 40 < shown < 60 and len(body) <= READ_MAX_CHARS
    assert note.startswith(f"({shown} line(s) longer than 2000 characters were cut. Showing lines 1-{shown} of 200.")
    assert note.endswith(f"Use offset={shown + 1} to read more.)")


def test_read_max_chars_is_a_bounded_agent_setting() -> None:
    assert AgentSettings().read_max_chars == READ_MAX_CHARS
    assert AgentSettings(read_max_chars=25_000).read_max_chars == 25_000
    for bad in (100, 10**9):
        with pytest.raises(ValueError, match="read_max_chars"):
            AgentSettings(read_max_chars=bad)


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


async def test_a_configured_cap_reaches_every_agents_read(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole path: `[agent] read_max_chars` in config, the runner's ToolContext (agents', `@path`'s), a Read."""
    from agentcli.testing.scripted import ScriptedLLM
    from tests.subagents.harness import build_harness

    (workspace / "wide.txt").write_text(("y" * 1000 + "\n") * 100)
    harness = build_harness(ScriptedLLM(), workspace, monkeypatch, {"agent.read_max_chars": 20_000})
    try:
        ctx = harness.runner.tool_context(harness.session)
        result = await read(ctx, file_path="wide.txt")
    finally:
        await harness.aclose()
    assert ctx.read_max_chars == 20_000
    assert result.content.endswith("at most 20,000 characters per call. Use offset=20 to read more.)")
