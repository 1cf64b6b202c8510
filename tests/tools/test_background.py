"""Background commands in process (`tools/shell/background`): what is new since the last read, the output cap with
its cut said, the filter, the limit on how many run, ownership and the session's end."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentcli.tools.base import FileLocks, ToolContext, ToolError
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.shell.background import BackgroundShells


def body(content: str) -> str:
    """The output part of a TaskOutput result (after its state line)."""
    return content.split("\n\n", 1)[1]


def context(ws: Path, session: str = "ses_main") -> ToolContext:
    return ToolContext(workspace=ws, agent="main", session_id=session, permissions=PermissionPolicy("auto"),
                       file_locks=FileLocks())


async def test_each_read_returns_what_is_new_and_the_exit_is_told_once(tmp_path: Path) -> None:
    shells = BackgroundShells()
    job = await shells.start("echo one; sleep 1; echo two; exit 4", context(tmp_path), None)
    first = await shells.output(job, wait_seconds=10)
    assert body(first.content) == "one"
    await job.done.wait()
    second = await shells.output(job)
    assert body(second.content) == "two" and "exited with code 4" in second.content
    assert second.metadata == {"task_id": "bash_1", "status": "exited", "exit_code": 4}
    (notice,) = shells.notices("ses_main")
    assert "bash_1" in notice and "exited with code 4" in notice and "one\ntwo" in notice
    assert shells.notices("ses_main") == []
    await shells.aclose()


async def test_the_output_file_keeps_its_newest_bytes_and_says_the_cut(tmp_path: Path) -> None:
    shells = BackgroundShells(output_cap=4096)
    job = await shells.start("for i in $(seq 1 2000); do echo line-$i; done", context(tmp_path), None)
    await job.done.wait()
    assert job.path.stat().st_size <= 4096
    result = await shells.output(job)
    assert "earlier bytes of output were cut" in result.content and "line-2000" in result.content
    assert "line-1\n" not in body(result.content)
    filtered = await shells.output(job, pattern="line-1999")
    assert "(no new output)" in filtered.content  # everything was read already
    await shells.aclose()
    assert not job.path.exists()  # the session's folder goes with it


async def test_a_filter_keeps_matching_lines_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    shells = BackgroundShells()
    job = await shells.start("printf 'GET /a\\nnoise\\nGET /b\\n'", context(tmp_path), None)
    await job.done.wait()
    with pytest.raises(ToolError, match="not a valid regular expression"):
        await shells.output(job, pattern="(")
    result = await shells.output(job, pattern="^GET")
    assert body(result.content) == "GET /a\nGET /b"
    await shells.aclose()


async def test_the_limit_the_owner_and_the_end_of_the_session(tmp_path: Path) -> None:
    shells = BackgroundShells(max_running=2)
    mine = await shells.start("sleep 300", context(tmp_path), None)
    theirs = await shells.start("sleep 300", context(tmp_path, "ses_child"), None)
    with pytest.raises(ToolError, match=r"2 background commands are running, the most \[shell\] max_background"):
        await shells.start("sleep 300", context(tmp_path), None)
    await shells.stop_owned("ses_child")
    assert theirs.status == "stopped" and mine.status == "running"
    assert shells.notices("ses_child") == []  # stopped, not exited: nothing to tell
    await shells.aclose()
    assert mine.status == "stopped" and shells.running() == []
    await asyncio.sleep(0)


async def test_a_line_written_in_two_parts_is_read_whole(tmp_path: Path) -> None:
    shells = BackgroundShells()
    job = await shells.start("printf 'one\\ntw'; sleep 1; printf 'o\\n'; sleep 300", context(tmp_path), None)
    first = await shells.output(job, wait_seconds=10)
    assert body(first.content) == "one"
    second = await shells.output(job, wait_seconds=10)
    assert body(second.content) == "two"
    await shells.aclose()
