"""Background commands in process (`tools/shell/background`): what is new since the last read, the output cap with
its cut said, the filter, the limit on how many run, ownership and the session's end, a foreground call moved there."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agentcli.tools.base import FileLocks, ToolContext, ToolError
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.shell.background import BackgroundShells
from agentcli.tools.shell.bash import BashArgs, BashTool


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
    await shells.end_task("ses_child")
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


async def test_a_running_foreground_call_moved_to_the_background_goes_on_there(tmp_path: Path) -> None:
    shells = BackgroundShells()
    ctx = context(tmp_path)
    ctx.shells = shells
    assert shells.move_foreground() == "No Bash command is running in the foreground."
    tool = BashTool()
    args = BashArgs(command="echo before; sleep 0.5; echo after; sleep 300", timeout=60)
    call = asyncio.create_task(tool.run(args, ctx))
    while not shells.foreground():
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)  # "before" is printed
    assert shells.move_foreground().startswith("Moving 1 running Bash command(s) to the background")
    result = await asyncio.wait_for(call, 10)
    assert result.metadata == {"task_id": "bash_1", "background": True, "moved": True}
    assert "keeps running as bash_1" in result.content and result.content.endswith("before")
    job = shells.commands["bash_1"]
    assert job.status == "running" and shells.foreground() == []
    later = await shells.output(job, wait_seconds=10)  # what it printed after the move, and only that
    assert body(later.content) == "after"
    await shells.stop(job)
    assert job.status == "stopped"
    with pytest.raises(ProcessLookupError):
        os.killpg(job.pgid, 0)
    await shells.aclose()


async def test_a_move_finds_no_room_under_the_limit(tmp_path: Path) -> None:
    shells = BackgroundShells(max_running=1)
    ctx = context(tmp_path)
    ctx.shells = shells
    await shells.start("sleep 300", ctx, None)
    call = asyncio.create_task(BashTool().run(BashArgs(command="sleep 0.5; echo done"), ctx))
    while not shells.foreground():
        await asyncio.sleep(0.01)
    assert "1 background commands are running, the most [shell] max_background" in shells.move_foreground()
    result = await call
    assert result.content == "done" and "moved" not in result.metadata  # it stayed in the foreground
    await shells.aclose()
