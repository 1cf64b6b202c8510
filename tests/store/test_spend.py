"""`Store.session_spend`: a stored session's own requests and its delegated subtree's, as the ledger splits them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentcli.events import SubagentEvent, UsageEvent, unwrap
from agentcli.llm.usage import Usage
from agentcli.store import schema
from agentcli.store.db import Store
from agentcli.store.recorder import StoreRecorder
from agentcli.store.records import SpendSums
from agentcli.store.writes import add_usage, create_session
from tests.store.sample_events import CHILD, GRAND, MAIN, sample_events


def _sums(events: list[UsageEvent]) -> SpendSums:
    """What the requests add up to, computed from the events themselves (not from the store)."""
    costs = [e.cost_usd for e in events if e.cost_usd is not None]
    return SpendSums(
        input_tokens=sum(e.input_tokens for e in events),
        output_tokens=sum(e.output_tokens for e in events),
        cache_read_tokens=sum(e.cache_read_tokens for e in events),
        cache_write_tokens=sum(e.cache_write_tokens for e in events),
        reasoning_tokens=sum(e.reasoning_tokens for e in events),
        cost_usd=sum(costs) if costs else None,
        requests=len(events),
    )


def _usage_events() -> list[UsageEvent]:
    found = []
    for event in sample_events():
        inner = unwrap(event)[1] if isinstance(event, SubagentEvent) else event
        if isinstance(inner, UsageEvent):
            found.append(inner)
    return found


def _close(a: SpendSums, b: SpendSums) -> None:
    assert a.model_dump(exclude={"cost_usd"}) == b.model_dump(exclude={"cost_usd"})
    assert (a.cost_usd is None) == (b.cost_usd is None)
    if a.cost_usd is not None:
        assert a.cost_usd == pytest.approx(b.cost_usd)


async def test_split_of_a_recorded_tree_matches_its_requests(store: Store) -> None:
    recorder = StoreRecorder(store)
    for event in sample_events():
        recorder(event)
    await store.flush()
    usage = _usage_events()
    spent = store.session_spend(MAIN)
    assert spent is not None and (spent.sessions, spent.turns) == (3, 2 + 2 + 1)
    _close(spent.own, _sums([e for e in usage if e.session_id == MAIN]))
    _close(spent.delegated, _sums([e for e in usage if e.session_id != MAIN]))
    assert spent.own.cache_read_tokens == 10 and spent.own.requests == 2 and spent.delegated.requests == 3
    # A subagent's session splits the same way: its own requests, and its subagent's below it.
    child = store.session_spend(CHILD[:8])  # an exact id only: a prefix is not a session
    assert child is None
    child = store.session_spend(CHILD)
    assert child is not None and child.sessions == 2
    _close(child.own, _sums([e for e in usage if e.session_id == CHILD]))
    _close(child.delegated, _sums([e for e in usage if e.session_id == GRAND]))
    # The rollup is the same computation's total.
    rollup = store.session_usage_rollup(MAIN)
    assert rollup is not None
    assert rollup.input_tokens == spent.own.input_tokens + spent.delegated.input_tokens
    assert rollup.cache_read_tokens == spent.own.cache_read_tokens + spent.delegated.cache_read_tokens
    assert rollup.cost_usd == pytest.approx((spent.own.cost_usd or 0) + (spent.delegated.cost_usd or 0))


async def test_unknown_prices_reasoning_tokens_and_sessions_without_requests(store: Store) -> None:
    await store.write(create_session("ses_top", model="main"))
    await store.write(create_session("ses_sub", model="light", parent_session_id="ses_top", depth=1))
    await store.write(create_session("ses_idle", model="main"))
    store.submit(add_usage("ses_top", "openai", "gpt-5", Usage(10, 40, 2, 0, 30), 0.01))
    store.submit(add_usage("ses_sub", "openai", "local-model", Usage(7, 3, 0, 1, 2), None))
    await store.flush()
    spent = store.session_spend("ses_top")
    assert spent is not None
    _close(spent.own, SpendSums(input_tokens=10, output_tokens=40, cache_read_tokens=2, reasoning_tokens=30,
                                cost_usd=0.01, requests=1))
    # No known price below: the subtree's cost is unknown (None), not $0.
    assert spent.delegated == SpendSums(input_tokens=7, output_tokens=3, cache_write_tokens=1, reasoning_tokens=2,
                                        cost_usd=None, requests=1)
    idle = store.session_spend("ses_idle")
    assert idle is not None and (idle.sessions, idle.own, idle.delegated) == (1, SpendSums(), SpendSums())
    assert store.session_spend("ses_missing") is None


async def test_many_sessions_spend_in_one_query_as_each_does_alone(store: Store, read_statements: list[str]) -> None:
    """A listing's spend is one statement; each tree (a listed child in its listed parent's too) as `session_spend`."""
    recorder = StoreRecorder(store)
    for event in sample_events():
        recorder(event)
    await store.write(create_session("ses_idle", model="main"))
    for n in range(4):
        await store.write(create_session(f"ses_top{n}", model="main"))
        store.submit(add_usage(f"ses_top{n}", "openai", "gpt-5", Usage(10 + n, 4, 1, 0, n), 0.01 * n or None))
    await store.flush()
    ids = [MAIN, CHILD, GRAND, "ses_idle", *(f"ses_top{n}" for n in range(4)), "ses_missing"]
    many = store.sessions_spend(ids)
    assert len(read_statements) == 1
    assert set(many) == set(ids) - {"ses_missing"}
    for session_id, spent in many.items():
        alone = store.session_spend(session_id)
        assert alone is not None
        assert spent.model_dump() == alone.model_dump()
    assert (many[MAIN].sessions, many[CHILD].sessions, many[GRAND].sessions) == (3, 2, 1)
    assert many[CHILD].delegated == many[GRAND].own  # GRAND counts in both its parent's tree and its own
    assert store.sessions_spend([]) == {}


def test_a_v2_database_gains_reasoning_tokens_and_keeps_its_usage(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:2])
    with Store.open(db_path) as store:  # a database as the previous release left it
        store.submit(create_session("ses_old", model="main"))
        store.submit(lambda conn: conn.execute(
            "INSERT INTO usage (session_id, provider, model, input_tokens, output_tokens, cost_usd, created_at)"
            " VALUES ('ses_old', 'anthropic', 'claude-sonnet-4-5', 12, 3, 0.5, 'x')"))
    monkeypatch.undo()
    with Store.open(db_path) as store:
        store.submit(add_usage("ses_old", "openai", "gpt-5", Usage(1, 9, 0, 0, 4), 0.25))
        store.flush_sync()
        spent = store.session_spend("ses_old")
    assert spent is not None
    _close(spent.own, SpendSums(input_tokens=13, output_tokens=12, reasoning_tokens=4, cost_usd=0.75, requests=2))
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.schema_version() == 11
    conn.close()


async def test_a_usage_estimated_from_a_cut_off_stream_is_stored_as_estimated(store: Store) -> None:
    recorder = StoreRecorder(store)
    counted = UsageEvent(session_id="ses_est", provider="anthropic", model="m", input_tokens=10, output_tokens=5)
    recorder(counted)
    recorder(counted.model_copy(update={"estimated": True, "output_tokens": 3}))
    await store.flush()
    with sqlite3.connect(store.path) as conn:
        rows = conn.execute("SELECT output_tokens, estimated FROM usage WHERE session_id = 'ses_est' ORDER BY id")
        assert rows.fetchall() == [(5, 0), (3, 1)]
