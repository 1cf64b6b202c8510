"""StoreRecorder: a realistic event stream, subagent events included, becomes the right rows."""

from __future__ import annotations

import pytest

from agentcli.events import EventBus, MessageAddedEvent, SessionStartedEvent
from agentcli.llm.base import Message
from agentcli.store.db import Store
from agentcli.store.recorder import StoreRecorder, split_model
from tests.store.sample_events import CHILD, GRAND, MAIN, sample_events


async def test_recorder_persists_the_stream(store: Store) -> None:
    bus = EventBus()
    bus.subscribe(StoreRecorder(store))
    for event in sample_events():
        bus(event)
    await store.flush()

    sessions = {s.id: s for s in store.list_sessions(include_subagents=True)}
    assert set(sessions) == {MAIN, CHILD, GRAND}
    main, child, grand = sessions[MAIN], sessions[CHILD], sessions[GRAND]

    assert (main.parent_session_id, main.depth, main.agent, main.agent_type) == (None, 0, "main", "main")
    assert main.title == "Find the auth code and summarize it"
    assert (main.status, main.turns, main.workspace) == ("completed", 2, "/ws")
    assert (main.provider, main.model) == ("anthropic", "claude-sonnet-4-5")
    assert (main.input_tokens, main.output_tokens, main.cache_read_tokens) == (300, 50, 10)
    assert main.cost_usd == pytest.approx(0.003)

    assert (child.parent_session_id, child.task_id, child.depth) == (MAIN, "tsk_1", 1)
    assert (child.agent, child.agent_type, child.title) == ("explore#1", "explore", "Find login")
    assert (child.provider, child.model, child.status, child.turns) == ("anthropic", "claude-haiku-4-5", "completed", 2)
    assert (child.input_tokens, child.output_tokens) == (110, 13)

    assert (grand.parent_session_id, grand.task_id, grand.depth) == (CHILD, "tsk_2", 2)
    assert (grand.agent, grand.agent_type, grand.status) == ("summary#1", "summary", "completed")

    assert [m.role for m in store.get_messages(MAIN)] == ["user", "assistant", "user", "assistant"]
    assert len(store.get_messages(CHILD)) == 4 and len(store.get_messages(GRAND)) == 2
    assert store.get_messages(CHILD)[3].text() == "login is in auth.py:3"

    assert [(c.id, c.status) for c in store.get_tool_calls(MAIN)] == [("tc_task", "ok")]
    child_calls = store.get_tool_calls(CHILD)
    assert [(c.id, c.name, c.status) for c in child_calls] == [("tc_grep", "Grep", "ok"), ("tc_inner", "Task", "ok")]
    assert child_calls[0].output is not None and child_calls[0].output.count("\n") == 21  # full output kept

    usage_rows = store._reader().execute("SELECT session_id FROM usage ORDER BY id").fetchall()
    assert [r[0] for r in usage_rows] == [MAIN, CHILD, GRAND, CHILD, MAIN]
    rollup = store.session_usage_rollup(MAIN)
    assert rollup is not None and (rollup.sessions, rollup.input_tokens, rollup.output_tokens) == (3, 440, 66)
    assert rollup.cost_usd == pytest.approx(0.00335)


def test_recorder_never_raises_after_close(db_path: object, store: Store) -> None:
    recorder = StoreRecorder(store)
    store.close()
    recorder(SessionStartedEvent(session_id="ses_late", model="main", workspace="/"))
    recorder(MessageAddedEvent(session_id="ses_late", seq=0, message=Message.user("hi")))


def test_split_model() -> None:
    assert split_model("anthropic:claude-haiku-4-5") == ("anthropic", "claude-haiku-4-5")
    assert split_model("openai-compatible:llama3:8b") == ("openai-compatible", "llama3:8b")
    assert split_model("main") == (None, "main")
    assert split_model("ollama:llama3") == (None, "ollama:llama3")


async def test_context_after_a_summary_compaction_is_the_summary_and_what_it_kept(store: Store) -> None:
    from agentcli.events import CompactionEvent

    bus = EventBus()
    bus.subscribe(StoreRecorder(store))
    bus(SessionStartedEvent(session_id="ses_c", model="main", workspace="/ws"))
    for seq, text in enumerate(["q1", "a1", "q2", "a2", "q3", "a3"]):
        role = "user" if seq % 2 == 0 else "assistant"
        bus(
            MessageAddedEvent(
                session_id="ses_c", seq=seq, message=Message(role=role, content=[{"type": "text", "text": text}])
            )
        )
    await store.flush()
    whole = store.get_context("ses_c")
    assert [m.text() for m in whole.messages] == ["q1", "a1", "q2", "a2", "q3", "a3"]
    assert (whole.next_seq, whole.compacted) == (6, False)

    bus(CompactionEvent(session_id="ses_c", mode="prune", tokens_before=9, tokens_after=5, window=10))
    bus(
        CompactionEvent(
            session_id="ses_c",
            mode="summary",
            tokens_before=9,
            tokens_after=3,
            window=10,
            kept_from_seq=3,
            summary="earlier: q1, q2",
        )
    )
    bus(MessageAddedEvent(session_id="ses_c", seq=6, message=Message.user("q4")))
    await store.flush()
    context = store.get_context("ses_c")
    assert [m.text() for m in context.messages] == ["earlier: q1, q2", "a2", "q3", "a3", "q4"]
    assert (context.next_seq, context.compacted) == (7, True)
    assert len(store.get_messages("ses_c")) == 7  # the full history stays
    assert store.get_context("ses_none").messages == [] and store.get_context("ses_none").next_seq == 0
