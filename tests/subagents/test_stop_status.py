"""A subagent stopped by a limit ends with that limit's status everywhere; a person's cancel stays `cancelled`.

For each limit (token and dollar budgets, max_tool_calls, the wall-clock and idle timeouts, a session
budget) the child's session row, its RunFinishedEvent, the task record (in memory and stored) and
the parent's tool result all say the same status, and the partial result is kept. The real runner,
loops and store run against the in-process scripted model.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from agentcli.events import RunFinishedEvent, SubagentBlockAddedEvent, unwrap
from agentcli.status import (
    RUN_STATUSES,
    SESSION_STATUSES,
    STOP_STATUSES,
    TASK_ERROR_CODES,
    TASK_STATUS_OF_RUN,
    TASK_STATUSES,
)
from agentcli.store.records import TaskRecord
from agentcli.testing.fake_llm_models import Usage
from agentcli.testing.scripted import Fault, Match, Reply, ScriptedLLM, Step, ToolCall
from tests.subagents.harness import MAIN, Harness, Make, main_step, price, requests_for, sub, task_call

PARTIAL = "Read two files so far."
LOOKED = Reply(text=PARTIAL, tool_calls=[ToolCall(name="LS", input={})],
               usage=Usage(input_tokens=500, output_tokens=20))  # 520 tokens, $0.70 at `price`


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "a.py").write_text("x = 1\n")
    return workspace


def sub_step(description: str, reply: Reply, **step: Any) -> Step:
    turn = step.pop("turn", None)
    return Step(match=Match(system_contains=sub(description), turn=turn), reply=reply, **step)


def only_task(h: Harness) -> TaskRecord:
    (record,) = h.runner.records()
    return record


def child_run_status(h: Harness, session_id: str) -> str:
    """The status of the child's RunFinishedEvent (it reaches the parent wrapped)."""
    found = []
    for event in h.events:
        _, inner = unwrap(event)
        if isinstance(inner, RunFinishedEvent) and inner.session_id == session_id:
            found.append(inner.status)
    (status,) = found
    return status


def parent_result_status(h: Harness) -> str:
    """The status the parent's stored Task tool result reports, checked against its error code."""
    (call,) = [c for c in h.store.get_tool_calls(h.session.id) if c.name == "Task"]
    assert call.output is not None
    found = re.search(r"stopped \((\w+)\)", call.output)
    assert found is not None, call.output
    status = found.group(1)
    assert call.code == TASK_ERROR_CODES[status]  # type: ignore[index]
    return status


async def statuses(h: Harness, record: TaskRecord) -> dict[str, str]:
    """Every place that tells how the task ended: they must agree."""
    await h.store.flush()
    assert record.child_session_id is not None
    child = h.store.get_session(record.child_session_id)
    stored = h.store.get_task(record.task_id)
    assert child is not None and stored is not None
    return {
        "task": record.status,
        "stored task": stored.status,
        "child session": child.status,
        "child run": child_run_status(h, record.child_session_id),
    }


async def assert_stopped_with(h: Harness, status: str, error: str | None = None) -> TaskRecord:
    """The one task ended with `status` everywhere, its partial result kept in the record and the parent's result."""
    record = only_task(h)
    found = await statuses(h, record)
    assert found == dict.fromkeys(found, status)
    assert parent_result_status(h) == status
    assert record.result == PARTIAL
    (call,) = [c for c in h.store.get_tool_calls(h.session.id) if c.name == "Task"]
    assert call.output is not None and PARTIAL in call.output
    assert child_error(h, record) == record.error
    if error is not None:
        assert record.error == error
    return record


def child_error(h: Harness, record: TaskRecord) -> str | None:
    assert record.child_session_id is not None
    child = h.store.get_session(record.child_session_id)
    assert child is not None
    return child.error


def test_every_stop_status_is_a_run_a_session_and_a_task_status() -> None:
    """The store's CHECK constraints are built from these vocabularies (since schema v1): no migration needed."""
    for status in STOP_STATUSES:
        assert status in RUN_STATUSES and status in SESSION_STATUSES and status in TASK_STATUSES
        assert TASK_STATUS_OF_RUN[status] == status


# --- limits -------------------------------------------------------------------------------------------


async def test_token_budget(server: ScriptedLLM, make: Make) -> None:
    desc = "Costly search job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look")])),
        sub_step(desc, LOOKED),
        main_step(1, Reply(text="ok"), last_user_contains="token budget exceeded"),
    )
    h = make({"task_tool.max_tokens": 100})
    await h.run()
    record = await assert_stopped_with(h, "budget_exceeded", "token budget exceeded: 520 > 100 tokens")
    assert record.tool_calls == 0  # the stop came with the answer: its tool call never started
    server.assert_done()


async def test_cost_budget(server: ScriptedLLM, make: Make) -> None:
    desc = "Pricey search job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look")])),
        sub_step(desc, LOOKED),
        main_step(1, Reply(text="ok"), last_user_contains="cost budget exceeded"),
    )
    h = make({"task_tool.max_cost_usd": 0.5}, price=price)
    await h.run()
    await assert_stopped_with(h, "budget_exceeded", "cost budget exceeded: $0.7000 > $0.5000")
    server.assert_done()


async def test_tool_call_limit_runs_no_call_beyond_it(server: ScriptedLLM, ws: Path, make: Make) -> None:
    desc = "Busy writing job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "write", subagent_type="general")])),
        sub_step(desc, Reply(text="Listing first.", tool_calls=[ToolCall(name="LS", input={})]), turn=0),
        sub_step(
            desc,
            Reply(text=PARTIAL, tool_calls=[ToolCall(name="Write", input={"file_path": "late.txt", "content": "x"})]),
            turn=1,
        ),
        main_step(1, Reply(text="ok"), last_user_contains="tool call limit reached"),
    )
    h = make({"task_tool.max_tool_calls": 1})
    await h.run()
    record = await assert_stopped_with(h, "budget_exceeded", "tool call limit reached (1 calls)")
    assert record.tool_calls == 2
    assert not (ws / "late.txt").exists()  # the call beyond the limit started, and stopped before it ran
    assert record.child_session_id is not None
    write = next(c for c in h.store.get_tool_calls(record.child_session_id) if c.name == "Write")
    assert write.is_error and write.output is not None and write.output.startswith("Cancelled")
    server.assert_done()


async def test_wall_clock_timeout(server: ScriptedLLM, make: Make) -> None:
    desc = "Slow search job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look", timeout_seconds=1)])),
        sub_step(desc, Reply(text=PARTIAL, tool_calls=[ToolCall(name="LS", input={})]), turn=0),
        sub_step(desc, Reply(text="never"), turn=1, latency_ms=30_000),
        main_step(1, Reply(text="ok"), last_user_contains="timed out"),
    )
    h = make()
    await h.run()
    await assert_stopped_with(h, "timed_out", "Subagent task timed out after 1000ms")
    server.assert_done()


async def test_idle_timeout(server: ScriptedLLM, make: Make) -> None:
    desc = "Stuck search job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look")])),
        sub_step(desc, Reply(text=PARTIAL, tool_calls=[ToolCall(name="LS", input={})]), turn=0),
        sub_step(desc, Reply(text="never"), turn=1, fault=Fault(kind="stall", after_events=1, seconds=30)),
        main_step(1, Reply(text="ok"), last_user_contains="timed out"),
    )
    h = make({"task_tool.idle_timeout_seconds": 1})
    await h.run()
    record = await assert_stopped_with(h, "timed_out")
    assert record.error is not None and "task_tool.idle_timeout_seconds" in record.error
    server.assert_done()


async def test_session_budget(server: ScriptedLLM, make: Make) -> None:
    """The session's budget stops the subagent and the parent's turn: the parent's run ends with the same status.

    The parent's turn itself is cut, so its Task call gets the loop's cancelled result; the task
    record and the child's session carry the status and the partial result.
    """
    desc = "Long search job"
    server.add_steps(
        main_step(0, Reply(text="Delegating.", tool_calls=[task_call(desc, "look")],
                           usage=Usage(input_tokens=10, output_tokens=5))),
        sub_step(desc, Reply(text=PARTIAL, tool_calls=[ToolCall(name="LS", input={})],
                             usage=Usage(input_tokens=1000, output_tokens=30))),
    )
    h = make({"budget.session_max_tokens": 1000})
    outcome = await h.run()
    record = only_task(h)
    found = await statuses(h, record)
    assert found == dict.fromkeys(found, "budget_exceeded")
    assert record.result == PARTIAL and record.tool_calls == 0
    assert child_error(h, record) == record.error == outcome.error
    parent = h.store.get_session(h.session.id)
    assert parent is not None
    assert (outcome.status, parent.status) == ("budget_exceeded", "budget_exceeded")
    assert len(requests_for(server, MAIN)) == 1
    server.assert_done()


# --- a person's cancel ----------------------------------------------------------------------------------


async def test_a_persons_cancel_stays_cancelled(server: ScriptedLLM, make: Make) -> None:
    desc = "Hanging search job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look")])),
        sub_step(desc, Reply(text=PARTIAL, tool_calls=[ToolCall(name="LS", input={})]), turn=0),
        sub_step(desc, Reply(text="never"), turn=1, latency_ms=30_000),
        main_step(1, Reply(text="went on"), last_user_contains="stopped (cancelled)"),
    )
    h = make()
    run = asyncio.create_task(h.run())
    await server.wait_until_async(lambda s: len(requests_for(s, sub(desc))) == 2)
    task_id = only_task(h).task_id
    assert await h.runner.cancel(task_id, reason="cancelled by the person")
    outcome = await run
    assert outcome.result == "went on"
    await assert_stopped_with(h, "cancelled", "cancelled by the person")
    server.assert_done()


async def test_cancelling_the_parents_turn_cancels_the_child_everywhere(server: ScriptedLLM, make: Make) -> None:
    desc = "Hanging search job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look")])),
        sub_step(desc, Reply(text="never"), latency_ms=30_000),
    )
    h = make()
    run = asyncio.create_task(h.run())
    await server.wait_until_async(lambda s: len(requests_for(s, sub(desc))) == 1)
    await h.wait_for(lambda: any(isinstance(e, SubagentBlockAddedEvent) for e in h.events))
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    record = only_task(h)
    found = await statuses(h, record)
    assert found == dict.fromkeys(found, "cancelled")
    parent = h.store.get_session(h.session.id)
    assert parent is not None and parent.status == "cancelled"
    server.assert_done()
