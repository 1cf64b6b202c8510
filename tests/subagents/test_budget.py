"""Budgets, enforced: per subagent (task_tool), per Task call, per session ([budget]), and unknown prices.

The scripted model sets each reply's token counts; costs come from an injected price function
(`price` below), or are unknown when the harness has none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.events import NoticeEvent, RunFinishedEvent, unwrap
from agentcli.llm.base import ToolResultBlock
from agentcli.testing.fake_llm_models import Usage
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from tests.subagents.harness import MAIN, Harness, Make, main_step, price, requests_for, sub, task_call


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "a.py").write_text("x = 1\n")
    return workspace


def sub_step(description: str, reply: Reply, step: dict[str, Any] | None = None, **match: Any) -> Step:
    return Step(match=Match(system_contains=sub(description), **match), reply=reply, **(step or {}))


def results_of(h: Harness) -> list[ToolResultBlock]:
    """Every tool result the main agent received, in order."""
    return [b for m in h.session.messages for b in m.content if isinstance(b, ToolResultBlock)]


def notices(h: Harness) -> list[str]:
    """Every notice of the tree (wrapped or not), in order."""
    found = []
    for event in h.events:
        _, inner = unwrap(event)
        if isinstance(inner, NoticeEvent):
            found.append(inner.message)
    return found


SMALL = Usage(input_tokens=10, output_tokens=5)  # $0.06 at `price`, 15 tokens
HALF = Reply(text="Looked at half of it.", tool_calls=[ToolCall(name="LS", input={})],
             usage=Usage(input_tokens=500, output_tokens=20))  # $0.70, 520 tokens


# --- per subagent (task_tool) ------------------------------------------------------------------------


async def test_cost_budget_stops_a_subagent_with_its_partial_result(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Costly search job", "look")], usage=SMALL)),
        sub_step("Costly search job", HALF),
        main_step(1, Reply(text="ok", usage=SMALL), last_user_contains="cost budget exceeded"),
    )
    h = make({"task_tool.max_cost_usd": 0.1}, price=price)
    outcome = await h.run()
    assert outcome.status == "completed"  # the parent goes on
    (record,) = h.runner.records()
    assert record.status == "budget_exceeded"
    assert record.error == "cost budget exceeded: $0.7000 > $0.1000"
    assert record.result == "Looked at half of it."
    assert record.tool_calls == 0  # the stop came with the answer: its tool call never ran
    (result,) = results_of(h)
    assert result.is_error and "Looked at half of it." in result.content
    assert record.cost_usd == pytest.approx(0.7)
    server.assert_done()


async def test_the_task_budget_counts_the_subagents_own_subagents(server: ScriptedLLM, make: Make) -> None:
    """A task's cost budget holds its whole subtree: a grandchild's spending stops the child too."""
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Outer planning job", "plan", "general")], usage=SMALL)),
        sub_step("Outer planning job", Reply(text="delegating", tool_calls=[task_call("Inner search job", "look")],
                                             usage=SMALL), turn=0),
        sub_step("Inner search job", HALF),
        main_step(1, Reply(text="ok", usage=SMALL)),
    )
    h = make({"task_tool.max_cost_usd": 0.5}, price=price)
    await h.run()
    by_type = {r.subagent_type: r for r in h.runner.records()}
    assert by_type["explore"].status == "budget_exceeded"  # its own subtree: $0.70 > $0.50
    assert by_type["general"].status == "budget_exceeded"  # its subtree: $0.06 + $0.70 > $0.50
    assert by_type["general"].error is not None and by_type["general"].error.startswith("cost budget exceeded: $0.76")
    server.assert_done()


# --- per Task call -----------------------------------------------------------------------------------


async def test_a_calls_max_tokens_narrows_its_budget(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[
            task_call("Narrow search job", "look", max_tokens=100),
            task_call("Wide search job", "look"),
        ], usage=SMALL)),
        sub_step("Narrow search job", HALF),
        sub_step("Wide search job", HALF.model_copy(update={"tool_calls": []})),
        main_step(1, Reply(text="ok", usage=SMALL)),
    )
    h = make()
    await h.run()
    records = {r.description: r for r in h.runner.records()}
    assert records["Narrow search job"].status == "budget_exceeded"
    assert records["Narrow search job"].error == "token budget exceeded: 520 > 100 tokens"
    assert records["Narrow search job"].result == "Looked at half of it."
    assert records["Wide search job"].status == "completed"  # the same spend, under task_tool.max_tokens
    server.assert_done()


async def test_a_calls_max_cost_usd_narrows_its_budget(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Costly search job", "look", max_cost_usd=0.25)], usage=SMALL)),
        sub_step("Costly search job", HALF),
        main_step(1, Reply(text="ok", usage=SMALL)),
    )
    h = make({"task_tool.max_cost_usd": 1.0}, price=price)
    await h.run()
    (record,) = h.runner.records()
    assert record.status == "budget_exceeded"
    assert record.error == "cost budget exceeded: $0.7000 > $0.2500"
    assert record.result == "Looked at half of it."
    server.assert_done()


async def test_a_calls_limits_above_the_configured_ones_are_refused(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[
            task_call("Greedy search job", "look", max_tokens=60_000),
            task_call("Pricey search job", "look", max_cost_usd=2),
            task_call("Silly search job", "look", max_tokens=0, max_cost_usd=-1),
        ], usage=SMALL)),
        main_step(1, Reply(text="ok", usage=SMALL)),
    )
    h = make({"task_tool.max_cost_usd": 1.0})
    await h.run()
    greedy, pricey, silly = results_of(h)
    assert greedy.is_error and greedy.content == (
        "Invalid parameters: max_tokens: must be between 1 and 50000 (task_tool.max_tokens)"
    )
    assert pricey.is_error and pricey.content == (
        "Invalid parameters: max_cost_usd: must be at most 1 (task_tool.max_cost_usd)"
    )
    assert silly.is_error and silly.content == (
        "Invalid parameters: max_tokens: must be between 1 and 50000 (task_tool.max_tokens); "
        "max_cost_usd: must be more than 0"
    )
    assert h.runner.records() == []  # no subagent ran
    server.assert_done()


# --- per session ([budget]) --------------------------------------------------------------------------


def run_status(h: Harness) -> str:
    (finished,) = [e for e in h.events if isinstance(e, RunFinishedEvent) and e.session_id == h.session.id]
    return finished.status


async def test_session_token_budget_stops_the_turn_and_its_subagents(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(text="Delegating the search.",
                           tool_calls=[task_call("Long search job", "look")], usage=SMALL)),
        sub_step("Long search job", Reply(text="Found two of five.", tool_calls=[ToolCall(name="LS", input={})],
                                          usage=Usage(input_tokens=1000, output_tokens=30))),
    )
    h = make({"budget.session_max_tokens": 1000})
    outcome = await h.run()
    reason = "session token budget exceeded: 1045 > 1000 tokens (budget.session_max_tokens)"
    assert (outcome.status, outcome.error) == ("budget_exceeded", reason)
    assert outcome.result == "Delegating the search."  # the partial result: what the main agent said so far
    (record,) = h.runner.records()
    assert (record.status, record.error, record.result) == ("budget_exceeded", reason, "Found two of five.")
    assert record.tool_calls == 0
    assert h.session.ledger.total.usage.total_tokens == 1045
    assert run_status(h) == "budget_exceeded"
    await h.store.flush()
    stored = h.store.get_session(h.session.id)
    assert stored is not None and stored.status == "budget_exceeded"
    stored_task = h.store.get_task(record.task_id)
    assert stored_task is not None and stored_task.status == "budget_exceeded"
    assert len(requests_for(server, MAIN)) == 1  # no request after the limit
    server.assert_done()


async def test_session_cost_budget_stops_the_main_agents_own_turn(server: ScriptedLLM, make: Make) -> None:
    """The main agent's own request passes the budget: its tool calls never run, and nothing follows."""
    server.add_steps(
        main_step(0, Reply(text="Listing first.", tool_calls=[ToolCall(name="LS", input={})],
                           usage=Usage(input_tokens=600, output_tokens=10))),  # $0.70
    )
    h = make({"budget.session_max_usd": 0.5}, price=price)
    outcome = await h.run()
    assert outcome.status == "budget_exceeded"
    assert outcome.error == "session cost budget exceeded: $0.7000 > $0.5000 (budget.session_max_usd)"
    assert outcome.result == "Listing first."
    (result,) = results_of(h)
    assert result.is_error and result.content.startswith("Cancelled")  # LS never ran
    assert run_status(h) == "budget_exceeded"
    server.assert_done()


async def test_a_final_answer_over_the_session_budget_is_marked(server: ScriptedLLM, make: Make) -> None:
    """Like a subagent's, a session's run whose last request passed the budget ends budget_exceeded, answer kept."""
    server.add_steps(main_step(0, Reply(text="The whole answer.", usage=Usage(input_tokens=90, output_tokens=20))))
    h = make({"budget.session_max_tokens": 100})
    outcome = await h.run()
    assert (outcome.status, outcome.result) == ("budget_exceeded", "The whole answer.")
    assert outcome.error == "session token budget exceeded: 110 > 100 tokens (budget.session_max_tokens)"
    assert run_status(h) == "budget_exceeded"
    server.assert_done()


async def test_session_budget_stops_foreground_and_background_subagents(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Background scan job", "scan", run_in_background=True)],
                           usage=SMALL)),
        sub_step("Background scan job", Reply(text="scanning", tool_calls=[ToolCall(name="LS", input={})],
                                              usage=SMALL), turn=0),
        sub_step("Background scan job", Reply(text="still scanning", usage=SMALL),
                 {"latency_ms": 5000, "optional": True}, turn=1),
        main_step(1, Reply(text="Meanwhile, a search.", tool_calls=[task_call("Costly search job", "look")],
                           usage=SMALL)),
        sub_step("Costly search job", HALF),
    )
    h = make({"budget.session_max_usd": 0.5}, price=price)
    outcome = await h.run()
    assert outcome.status == "budget_exceeded"
    assert outcome.result == "Meanwhile, a search."
    await h.wait_for(lambda: all(r.status not in ("queued", "running") for r in h.runner.records()))
    assert {r.description: r.status for r in h.runner.records()} == {
        "Background scan job": "budget_exceeded",
        "Costly search job": "budget_exceeded",
    }


# --- unknown prices ----------------------------------------------------------------------------------


async def test_unknown_prices_are_said_once_and_token_budgets_still_hold(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("First search job", "look")], usage=SMALL)),
        sub_step("First search job", Reply(text="first", usage=SMALL)),
        main_step(1, Reply(tool_calls=[task_call("Second search job", "look")], usage=SMALL)),
        sub_step("Second search job", HALF),
        main_step(2, Reply(text="ok", usage=SMALL)),
    )
    h = make({"budget.session_max_usd": 0.01, "task_tool.max_cost_usd": 0.01, "task_tool.max_tokens": 100})
    outcome = await h.run()
    assert outcome.status == "completed"  # no price: the dollar budgets cannot stop anything
    second = next(r for r in h.runner.records() if r.description == "Second search job")
    assert (second.status, second.error) == ("budget_exceeded", "token budget exceeded: 520 > 100 tokens")
    said = [n for n in notices(h) if n.startswith("no price is known")]
    # once per model and kind of budget, over five requests: the main model under the session's budget, the
    # subagents' light model under the session's and under the tasks' (both go unchecked, so both are named)
    assert len(said) == 3 and len(set(said)) == 3
    assert any("anthropic:m:" in n and "budget.session_max_usd" in n for n in said)
    assert any("anthropic:m-light:" in n and "budget.session_max_usd" in n for n in said)
    assert any("anthropic:m-light:" in n and "the cost budgets of tasks" in n for n in said)
    assert all("token budgets still hold" in n for n in said)
    server.assert_done()
