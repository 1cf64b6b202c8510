"""AgentLoop.stop: a run stopped with a status ends with it (RunFinishedEvent too), keeps its partial result,
runs no tool call after the stop, and never swallows a cancel that came from above with it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.agent.tool_calls import CANCELLED_RESULT
from agentcli.events import Event, RunFinishedEvent, ToolCallFinishedEvent, ToolCallStartedEvent, UsageEvent
from agentcli.llm.base import RetryPolicy
from agentcli.llm.models import ResolvedModel
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools


def make_loop(llm: ScriptedLLM, workspace: Path, events: list[Event]) -> AgentLoop:
    model = ResolvedModel("main", "anthropic", "fake", None, "sk-test", 1024)
    session = Session(system_prompt="You are the loop under test.", model=model, workspace=workspace)
    ctx = ToolContext(
        workspace=workspace, agent="main", session_id=session.id,
        permissions=PermissionPolicy("auto"), file_locks=FileLocks(),
    )
    return AgentLoop(session, llm.provider("anthropic", policy=RetryPolicy(max_retries=0)), build_tools(), ctx,
                     events.append, max_turns=4)


def finished(events: list[Event]) -> RunFinishedEvent:
    (event,) = [e for e in events if isinstance(e, RunFinishedEvent)]
    return event


WRITES = Reply(text="Writing both.", tool_calls=[
    ToolCall(name="Write", input={"file_path": "one.txt", "content": "1"}),
    ToolCall(name="Write", input={"file_path": "two.txt", "content": "2"}),
])


async def test_a_stop_from_a_tool_calls_start_runs_neither_it_nor_the_rest(llm: ScriptedLLM, tmp_path: Path) -> None:
    """A consumer of the loop's own events (a tool-call limit) stops it as a call starts: nothing more runs."""
    llm.add_steps(Step(match=Match(turn=0), reply=WRITES))
    events: list[Event] = []
    loop = make_loop(llm, tmp_path, events)

    def consumer(event: Event) -> None:
        events.append(event)
        if isinstance(event, ToolCallStartedEvent):
            loop.stop("budget_exceeded", "tool call limit reached (0 calls)")

    loop.emit = consumer
    outcome = await loop.run("write")
    assert (outcome.status, outcome.result, outcome.error) == (
        "budget_exceeded", "Writing both.", "tool call limit reached (0 calls)"
    )
    assert not (tmp_path / "one.txt").exists() and not (tmp_path / "two.txt").exists()
    assert [e.name for e in events if isinstance(e, ToolCallStartedEvent)] == ["Write"]  # the second never started
    (done,) = [e for e in events if isinstance(e, ToolCallFinishedEvent)]
    assert done.is_error and done.output == CANCELLED_RESULT
    assert (finished(events).status, finished(events).error) == ("budget_exceeded", outcome.error)
    llm.assert_done()


async def test_a_stop_from_another_task_ends_the_run_normally_with_its_status(
    llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.add_steps(
        Step(match=Match(turn=0), reply=Reply(text="Half done.", tool_calls=[ToolCall(name="LS", input={})])),
        Step(match=Match(turn=1), reply=Reply(text="never"), latency_ms=30_000),
    )
    events: list[Event] = []
    loop = make_loop(llm, tmp_path, events)
    run = asyncio.create_task(loop.run("go"))
    await llm.wait_until_async(lambda s: len(s.requests) == 2)
    assert loop.stop("timed_out", "Subagent task timed out after 1000ms")
    outcome = await run  # no CancelledError: the stop's own cancel is taken back
    assert (outcome.status, outcome.result) == ("timed_out", "Half done.")
    assert (finished(events).status, finished(events).error) == ("timed_out", "Subagent task timed out after 1000ms")
    llm.assert_done()


async def test_a_cancel_from_above_after_an_inner_stop_still_propagates(llm: ScriptedLLM, tmp_path: Path) -> None:
    """The loop stopped itself (a budget), then the task above it is cancelled: status stands, cancel goes on."""
    llm.add_steps(Step(match=Match(turn=0), reply=WRITES))
    events: list[Event] = []
    loop = make_loop(llm, tmp_path, events)
    run = asyncio.create_task(loop.run("write"))

    async def above() -> None:
        await run

    outer = asyncio.create_task(above())

    def consumer(event: Event) -> None:
        events.append(event)
        if isinstance(event, UsageEvent):
            loop.stop("budget_exceeded", "token budget exceeded: 2 > 1 tokens")
            outer.cancel()  # the parent's turn ends too: its cancel reaches the run it awaits

    loop.emit = consumer
    with pytest.raises(asyncio.CancelledError):
        await outer
    assert run.cancelled()
    reason = "token budget exceeded: 2 > 1 tokens"
    assert (finished(events).status, finished(events).error) == ("budget_exceeded", reason)
    assert not (tmp_path / "one.txt").exists()
    llm.assert_done()
