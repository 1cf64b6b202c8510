"""One usage ledger: a task's tokens and cost are its whole subtree; an agent's total is own + delegated.

Also: SPEC §4 error codes and short results travel from a tool result to the finished-call event
and into the store's tool_calls rows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from agentcli.agent.ledger import Ledger, Spend, add_cost
from agentcli.events import SubagentBlockUpdatedEvent, ToolCallFinishedEvent
from agentcli.llm.usage import Usage as LedgerUsage
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, Usage
from tests.subagents.harness import MAIN, Harness, build_harness, sub, task_call

Make = Callable[..., Harness]


def price(provider: str, model: str, usage: LedgerUsage) -> float:
    """A made-up price: a thousandth of a dollar per input token, a hundredth per output token."""
    return usage.input_tokens * 0.001 + usage.output_tokens * 0.01 + usage.cache_read_tokens * 0.0001


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(Script(steps=[])) as srv:
        yield srv


@pytest.fixture
async def make(server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Make]:
    made: list[Harness] = []
    ws = tmp_path / "ws"
    ws.mkdir()

    def factory(overrides: dict[str, object] | None = None) -> Harness:
        harness = build_harness(server, ws, monkeypatch, overrides)
        harness.runner.price = price
        harness.loop.price = price
        made.append(harness)
        return harness

    yield factory
    for harness in made:
        await harness.aclose()


def test_ledger_sums_and_unknown_prices() -> None:
    ledger = Ledger()
    assert ledger.total == Spend() and ledger.total.cost_usd is None
    ledger.add_own(LedgerUsage(10, 5, cache_read_tokens=3), None)
    ledger.add_delegated(LedgerUsage(100, 20, cache_write_tokens=7), 0.5)
    ledger.add_delegated(LedgerUsage(1, 1), None)
    total = ledger.total
    assert (total.usage.input_tokens, total.usage.output_tokens) == (111, 26)
    assert (total.usage.cache_read_tokens, total.usage.cache_write_tokens) == (3, 7)
    assert total.cost_usd == 0.5 and ledger.own.cost_usd is None
    assert add_cost(None, None) is None and add_cost(None, 1.0) == 1.0 and add_cost(2.0, None) == 2.0
    assert total.as_dict()["cache_write_tokens"] == 7 and total.as_dict()["cost_usd"] == 0.5


NESTED = [
    Step(match=Match(system_contains=MAIN, turn=0),
         reply=Reply(tool_calls=[task_call("Outer job", "do the outer part", "general")],
                     usage=Usage(input_tokens=10, output_tokens=5))),
    Step(match=Match(system_contains=sub("Outer job"), turn=0),
         reply=Reply(tool_calls=[task_call("Inner job", "look deeper", "explore")],
                     usage=Usage(input_tokens=100, output_tokens=20, cache_read_input_tokens=50))),
    Step(match=Match(system_contains=sub("Inner job")),
         reply=Reply(text="inner found it", usage=Usage(input_tokens=200, output_tokens=30))),
    Step(match=Match(system_contains=sub("Outer job"), turn=1),
         reply=Reply(text="outer done", usage=Usage(input_tokens=40, output_tokens=4))),
    Step(match=Match(system_contains=MAIN, turn=1),
         reply=Reply(text="all done", usage=Usage(input_tokens=30, output_tokens=7))),
]


async def test_a_task_reports_its_whole_subtree_in_tokens_and_cost(server: FakeLLMServer, make: Make) -> None:
    server.add_steps(*NESTED)
    h = make()
    outcome = await h.run()
    assert outcome.status == "completed"
    records = {r.description: r for r in h.runner.records()}
    outer, inner = records["Outer job"], records["Inner job"]
    assert (inner.input_tokens, inner.output_tokens, inner.cache_read_tokens) == (200, 30, 0)
    assert inner.cost_usd == pytest.approx(200 * 0.001 + 30 * 0.01)
    # The outer task's figures include the inner one's, for tokens AND cost; cache tokens apart.
    assert (outer.input_tokens, outer.output_tokens, outer.cache_read_tokens) == (340, 54, 50)
    outer_own = (100 + 40) * 0.001 + (20 + 4) * 0.01 + 50 * 0.0001
    assert outer.cost_usd == pytest.approx(outer_own + inner.cost_usd)
    # The main session: own + delegated = total, and delegated is exactly the outer task's subtree.
    ledger = h.session.ledger
    assert (ledger.own.usage.input_tokens, ledger.own.usage.output_tokens) == (40, 12)
    assert ledger.delegated.usage == LedgerUsage(340, 54, 50, 0)
    assert ledger.delegated.cost_usd == pytest.approx(outer.cost_usd)
    assert ledger.total.usage == ledger.own.usage + ledger.delegated.usage
    assert ledger.total.cost_usd == pytest.approx((ledger.own.cost_usd or 0) + outer.cost_usd)
    # The block counters the UI reads are the same figures, live.
    updates = [e for e in h.events if isinstance(e, SubagentBlockUpdatedEvent) and e.task_id == outer.task_id]
    last = updates[-1]
    assert (last.input_tokens, last.output_tokens, last.cache_read_tokens) == (340, 54, 50)
    assert last.cost_usd == pytest.approx(outer.cost_usd)
    # The store agrees: the rollup of the main session's tree is the main ledger's total.
    await h.store.flush()
    rollup = h.store.session_usage_rollup(h.session.id)
    assert rollup is not None and (rollup.sessions, rollup.input_tokens, rollup.output_tokens) == (3, 380, 66)
    assert rollup.cost_usd == pytest.approx(ledger.total.cost_usd)
    stored = h.store.get_task(outer.task_id)
    assert stored is not None and (stored.input_tokens, stored.cache_read_tokens) == (340, 50)
    server.assert_done()


async def test_token_budget_counts_the_subtree(server: FakeLLMServer, make: Make) -> None:
    server.add_steps(
        NESTED[0], NESTED[1], NESTED[2],
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="token budget exceeded"),
             reply=Reply(text="over budget")),
    )
    h = make({"task_tool.max_tokens": 300})  # the outer task alone (170) stays under; with its inner (400) not
    await h.run()
    outer = next(r for r in h.runner.records() if r.description == "Outer job")
    assert outer.status == "budget_exceeded"
    assert outer.error == "token budget exceeded: 400 > 300 tokens"
    server.assert_done()


async def test_error_codes_travel_to_events_and_store(server: FakeLLMServer, make: Make) -> None:
    server.add_steps(
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task_call("Unknown kind", "x", "quantum-physicist"),
                                     task_call("Find the code", "where")])),
        Step(match=Match(system_contains=sub("Find the code")), reply=Reply(text="here")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="ok")),
    )
    h = make()
    await h.run()
    finished = {e.tool_call_id: e for e in h.events if isinstance(e, ToolCallFinishedEvent)}
    failed, done = sorted(finished.values(), key=lambda e: not e.is_error)
    assert (failed.code, failed.short_result) == ("NOT_FOUND", "Task delegation failed")
    assert (done.code, done.short_result) == (None, "Task completed by explore")
    await h.store.flush()
    rows = {c.id: c for c in h.store.get_tool_calls(h.session.id)}
    assert (rows[failed.tool_call_id].code, rows[failed.tool_call_id].short_result) == (
        "NOT_FOUND", "Task delegation failed"
    )
    assert (rows[done.tool_call_id].code, rows[done.tool_call_id].short_result) == (None, "Task completed by explore")
    server.assert_done()

