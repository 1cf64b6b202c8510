"""Bash: output, exit codes, timeouts and cancellation that leave no process behind, output cap."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import time
from pathlib import Path

import pytest

from agentcli.tools.base import ToolContext, ToolError, ToolResult
from agentcli.tools.shell.bash import BashTool, OutputBuffer
from agentcli.tools.shell.reaper import MARK_VARIABLE, reaper
from tests.processes import alive, wait_dead

BASH = BashTool()


async def bash(ctx: ToolContext, command: str, **extra: object) -> ToolResult:
    return await BASH.run(BASH.parse({"command": command, **extra}), ctx)


async def test_output_and_exit_code(ctx: ToolContext, workspace: Path) -> None:
    ok = await bash(ctx, "pwd; echo err >&2")
    assert ok.content == f"{workspace}\nerr"
    assert not ok.is_error and ok.metadata["exit_code"] == 0
    failed = await bash(ctx, "echo partial; exit 3")
    assert failed.content == "partial\n\nexit code 3"
    assert failed.is_error is False
    assert (await bash(ctx, "true")).content == "(no output)"


async def test_stdin_is_closed(ctx: ToolContext) -> None:
    result = await bash(ctx, "cat; echo done", timeout=10)
    assert result.content == "done"


async def test_summary_and_target() -> None:
    args = BASH.parse({"command": "git status\ngit diff", "description": "show changes"})
    assert BASH.summary(args) == "git status …"
    assert BASH.permission_target(args) == "git status\ngit diff"
    assert BASH.mutating and not BASH.concurrency_safe


async def test_timeout_kills_the_process_group(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await bash(ctx, "sleep 30 & echo $!; wait", timeout=0.5)
    assert time.monotonic() - started < 5
    assert result.is_error
    assert result.content.startswith("Command timed out after 0.5s")
    pid = int(result.content.split()[-1])
    assert not alive(pid)


async def test_background_child_does_not_outlive_the_command(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await bash(ctx, "sleep 30 & echo $!")
    assert time.monotonic() - started < 5
    assert not result.is_error
    assert not alive(int(result.content))


@pytest.mark.skipif(not Path("/proc/self/environ").exists() or shutil.which("setsid") is None,
                    reason="needs /proc and setsid")
async def test_a_daemon_that_left_the_group_does_not_outlive_the_command(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await bash(ctx, "setsid sh -c 'sleep 30 & echo $!'")
    assert time.monotonic() - started < 5  # the daemon held the pipe until it was killed
    pid = int(result.content)
    assert wait_dead(pid, 5)


async def test_each_call_runs_with_its_own_mark(ctx: ToolContext) -> None:
    first, second = await bash(ctx, f"echo ${MARK_VARIABLE}"), await bash(ctx, f"echo ${MARK_VARIABLE}")
    assert first.content.startswith(reaper().mark + ".") and second.content.startswith(reaper().mark + ".")
    assert first.content != second.content


async def test_cancellation_kills_the_process_group(ctx: ToolContext, workspace: Path) -> None:
    output_seen = asyncio.Event()
    watched = dataclasses.replace(ctx, progress=output_seen.set)
    task = asyncio.create_task(bash(watched, "sleep 30 & echo $! > pid.txt; echo started; wait"))
    await output_seen.wait()
    pid = int((workspace / "pid.txt").read_text())
    assert alive(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not alive(pid)


@pytest.mark.parametrize("yields", [1, 2, 3, 5, 8])
async def test_cancellation_while_bash_is_being_started_ends_and_kills_the_group(
    ctx: ToolContext, workspace: Path, yields: int
) -> None:
    # Cancelled while the event loop still connects bash's pipes, asyncio's own clean-up killed bash alone and
    # then waited for those pipes for ever: `agentcli run` hung on SIGTERM under load.
    # The pid file appears whole or not at all: bash may be killed between creating a file and writing it.
    task = asyncio.create_task(bash(ctx, "sleep 30 & echo $! > pid.tmp && mv pid.tmp pid.txt; sleep 30"))
    for _ in range(yields):  # somewhere inside the start-up of the child, whatever the machine's speed
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=20)
    pid_file = workspace / "pid.txt"
    deadline = time.monotonic() + 5
    if pid_file.exists():  # bash got far enough to start its background child: that is gone too
        pid = int(pid_file.read_text())
        while alive(pid) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert not alive(pid)


async def test_output_cap_keeps_head_and_tail(ctx: ToolContext) -> None:
    small = dataclasses.replace(ctx, bash_output_limit_bytes=200)
    result = await bash(small, "echo HEAD; seq 1 2000; echo TAIL")
    assert result.content.startswith("HEAD\n1\n2\n")
    assert result.content.endswith("1999\n2000\nTAIL")
    assert "bytes of output cut;" in result.content
    assert len(result.content) < 400


def test_output_buffer_counts_what_it_cut() -> None:
    buffer = OutputBuffer(10)
    for chunk in (b"abc", b"defghij", b"klmnop"):
        buffer.feed(chunk)
    assert buffer.head == b"abcde" and buffer.tail == b"lmnop" and buffer.total == 16
    assert "[6 bytes of output cut; 16 bytes in all]" in buffer.text()


async def test_timeout_above_maximum_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"above the maximum of 600s"):
        await bash(ctx, "true", timeout=601)
    with pytest.raises(ToolError, match=r"timeout"):
        BASH.parse({"command": "true", "timeout": -1})


async def test_a_configured_default_above_600s_raises_the_cap(ctx: ToolContext) -> None:
    long = dataclasses.replace(ctx, bash_timeout_seconds=900)
    assert (await bash(long, "echo ok")).content == "ok"  # the default alone was refused as above 600 s
    assert (await bash(long, "echo ok", timeout=900)).content == "ok"
    with pytest.raises(ToolError, match=r"above the maximum of 900s"):
        await bash(long, "true", timeout=901)
    with pytest.raises(ToolError, match=r"above the maximum of 600s"):  # a default below the cap keeps it
        await bash(dataclasses.replace(ctx, bash_timeout_seconds=30), "true", timeout=601)


async def test_bash_runs_under_a_configured_900s_default(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole path: `[agent] bash_timeout_seconds = 900` in config, the runner's ToolContext, a Bash call."""
    from agentcli.testing.fake_llm import FakeLLMServer, Script
    from tests.subagents.harness import build_harness

    with FakeLLMServer(Script(steps=[])) as server:
        harness = build_harness(server, workspace, monkeypatch, {"agent.bash_timeout_seconds": 900})
        try:
            assert harness.settings.agent.bash_timeout_seconds == 900
            result = await bash(harness.runner.tool_context(harness.session), "echo ok")
        finally:
            await harness.aclose()
    assert result.content == "ok" and not result.is_error


async def test_progress_is_reported_as_output_arrives(ctx: ToolContext) -> None:
    ticks: list[int] = []
    await bash(dataclasses.replace(ctx, progress=lambda: ticks.append(1)), "echo a")
    assert ticks
