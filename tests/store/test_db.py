"""Store: schema and migrations, the writer thread, every write helper, reads."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentcli.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentcli.llm.usage import Usage
from agentcli.store import schema
from agentcli.store.db import (
    AmbiguousIdError,
    Store,
    StoreClosedError,
    StoreError,
    add_message,
    add_usage,
    create_session,
    default_path,
    finish_session,
    tool_call_finished,
    tool_call_started,
    upsert_task,
)
from agentcli.store.records import TaskRecord, ToolCount
from agentcli.store.writes import title_of

TABLES = {"sessions", "messages", "tool_calls", "usage", "tasks", "compactions", "checkpoints"}


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _pragma(path: Path, name: str) -> object:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()


# --- schema ---------------------------------------------------------------------------------------


def test_open_creates_dirs_schema_and_wal(db_path: Path) -> None:
    store = Store.open(db_path)
    store.close()
    assert db_path.is_file()
    assert _tables(db_path) >= TABLES | {"hook_runs", "agent_messages"}
    assert _pragma(db_path, "user_version") == schema.schema_version() == 11
    assert _pragma(db_path, "journal_mode") == "wal"


def test_connection_pragmas(store: Store) -> None:
    conn = store._reader()
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == schema.BUSY_TIMEOUT_MS
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_default_path_is_under_xdg_data_home(isolated_env: Path) -> None:
    assert default_path() == isolated_env / ".local/share/agentcli/agentcli.db"
    store = Store.open()
    store.close()
    assert default_path().is_file()


def test_v0_database_migrates_and_reopen_is_a_noop(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)  # a v0 database: exists, user_version 0, rollback journal
    conn.execute("CREATE TABLE unrelated (x)")
    conn.commit()
    conn.close()
    assert _pragma(db_path, "user_version") == 0

    calls: list[int] = []
    real = schema.MIGRATIONS[0]

    def spy(c: sqlite3.Connection) -> None:
        calls.append(1)
        real(c)

    monkeypatch.setattr(schema, "MIGRATIONS", [spy])
    with Store.open(db_path) as store:
        store.submit(create_session("ses_keep", model="m"))
    assert calls == [1]
    assert _pragma(db_path, "user_version") == 1
    assert _tables(db_path) >= (TABLES - {"compactions", "checkpoints"}) | {"unrelated"}  # v1 only

    with Store.open(db_path) as store:
        assert store.get_session("ses_keep") is not None
    assert calls == [1]  # nothing re-applied
    assert _pragma(db_path, "user_version") == 1


def test_newer_schema_is_refused(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreError, match="schema version 99"):
        Store.open(db_path)


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot open"):
        Store.open(blocker / "agentcli.db")


def test_a_file_that_is_not_a_database_is_a_store_error(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError, match=r"cannot (open|use) the database .*not a database"):
        Store.open(db_path)


# --- the writer -----------------------------------------------------------------------------------


async def test_write_awaits_commit_and_reads_see_it(store: Store) -> None:
    await store.write(create_session("ses_a", model="main", workspace="/w"))
    session = store.get_session("ses_a")
    assert session is not None and session.status == "running" and session.workspace == "/w"


async def test_failing_job_does_not_kill_the_writer(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    def boom(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('ses_half', 'x', 'x')")
        raise ValueError("boom")

    before = store.submit(create_session("ses_before"))
    failing = store.submit(boom)
    after = store.submit(create_session("ses_after"))
    with caplog.at_level(logging.ERROR, logger="agentcli.store"):
        with pytest.raises(ValueError, match="boom"):
            await store.write(boom)
        await store.flush()
    assert before.result() is None and after.result() is None
    with pytest.raises(ValueError):
        failing.result()
    assert "boom" in caplog.text
    assert store.get_session("ses_before") and store.get_session("ses_after")
    assert store.get_session("ses_half") is None  # the failed job was rolled back alone
    with pytest.raises(sqlite3.IntegrityError):  # a constraint violation reaches the awaiter too
        await store.write(finish_session("ses_after", "bogus"))
    await store.write(finish_session("ses_after", "completed"))
    assert store.get_session("ses_after").status == "completed"  # type: ignore[union-attr]


async def test_cancelling_the_awaiter_does_not_cancel_the_write(store: Store) -> None:
    gate = threading.Event()

    def slow(conn: sqlite3.Connection) -> None:
        gate.wait(5)
        create_session("ses_slow")(conn)

    waiter = asyncio.create_task(store.write(slow))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    gate.set()
    await store.flush()
    assert store.get_session("ses_slow") is not None


def test_flush_sync_times_out_while_the_writer_is_busy(store: Store) -> None:
    gate = threading.Event()
    store.submit(lambda conn: gate.wait(5))
    with pytest.raises(TimeoutError):
        store.flush_sync(timeout=0.05)
    gate.set()
    store.flush_sync(timeout=5)


def test_close_drains_the_queue_and_refuses_later_writes(db_path: Path) -> None:
    store = Store.open(db_path)
    store.submit(create_session("ses_q"))
    for seq in range(300):
        store.submit(add_message("ses_q", seq, Message.user(f"m{seq}")))
    store.close()
    store.close()  # idempotent
    assert store.closed
    with pytest.raises(StoreClosedError):
        store.submit(create_session("ses_late"))
    with pytest.raises(StoreClosedError):
        store.list_sessions()
    with Store.open(db_path) as again:
        assert len(again.get_messages("ses_q")) == 300


# --- write helpers --------------------------------------------------------------------------------


async def test_session_message_tool_call_usage_and_finish(store: Store) -> None:
    await store.write(create_session("ses_1", model="main", workspace="/ws", agent="main"))
    prompt = Message.user("\n  Fix the login bug in auth.py " + "x" * 100 + "\nsecond line")
    call = ToolUseBlock(id="tc_1", name="Read", input={"path": "auth.py"})
    store.submit(add_message("ses_1", 0, prompt))
    store.submit(add_message("ses_1", 1, Message(role="assistant", content=[TextBlock(text="Looking."), call])))
    store.submit(tool_call_started("ses_1", "tc_1", "Read", {"path": "auth.py"}, "Read auth.py"))
    store.submit(
        tool_call_finished("ses_1", "tc_1", "Read", is_error=False, output="def login(): ...", duration_ms=4.5)
    )
    store.submit(tool_call_started("ses_1", "tc_2", "Edit", {"path": "auth.py"}, "Edit auth.py"))
    store.submit(
        tool_call_finished(
            "ses_1", "tc_2", "Edit", is_error=True, output="no match", duration_ms=1, files_modified=["auth.py"]
        )
    )
    results = Message(role="user", content=[ToolResultBlock(tool_use_id="tc_1", content="def login(): ...")])
    store.submit(add_message("ses_1", 2, results))
    store.submit(add_usage("ses_1", "anthropic", "claude-sonnet-4-5", Usage(100, 20, 5, 7), 0.002))
    store.submit(add_usage("ses_1", "anthropic", "claude-sonnet-4-5", Usage(50, 10), None))
    await store.write(finish_session("ses_1", "completed", turns=2))

    s = store.get_session("ses_1")
    assert s is not None
    assert s.title == title_of(prompt.text()) and s.title is not None
    assert s.title.startswith("Fix the login bug") and len(s.title) == 80 and s.title.endswith("…")
    assert (s.input_tokens, s.output_tokens, s.cache_read_tokens, s.cache_write_tokens) == (150, 30, 5, 7)
    assert s.cost_usd == pytest.approx(0.002)
    assert (s.provider, s.model) == ("anthropic", "claude-sonnet-4-5")  # the label `main` resolved by usage
    assert (s.status, s.turns, s.error) == ("completed", 2, None)
    assert s.finished_at is not None and s.finished_at >= s.created_at

    messages = store.get_messages("ses_1")
    assert messages == [prompt, Message(role="assistant", content=[TextBlock(text="Looking."), call]), results]

    calls = store.get_tool_calls("ses_1")
    assert [(c.id, c.status, c.is_error) for c in calls] == [("tc_1", "ok", False), ("tc_2", "error", True)]
    assert calls[0].args == {"path": "auth.py"} and calls[0].summary == "Read auth.py"
    assert calls[0].output == "def login(): ..." and calls[0].duration_ms == 4.5
    assert calls[1].files_modified == ["auth.py"]

    rows = store._reader().execute("SELECT provider, model, input_tokens, cost_usd FROM usage").fetchall()
    assert [tuple(r) for r in rows] == [
        ("anthropic", "claude-sonnet-4-5", 100, 0.002),
        ("anthropic", "claude-sonnet-4-5", 50, None),
    ]


async def test_unknown_prices_keep_cost_unknown(store: Store) -> None:
    store.submit(create_session("ses_free", model="openai-compatible:llama"))
    await store.write(add_usage("ses_free", "openai-compatible", "llama", Usage(10, 10), None))
    assert store.get_session("ses_free").cost_usd is None  # type: ignore[union-attr]


async def test_new_prompt_reopens_a_finished_session_and_keeps_its_title(store: Store) -> None:
    store.submit(create_session("ses_r"))
    store.submit(add_message("ses_r", 0, Message.user("first")))
    store.submit(finish_session("ses_r", "completed", turns=1))
    await store.write(add_message("ses_r", 1, Message.user("second")))
    s = store.get_session("ses_r")
    assert s is not None and (s.status, s.finished_at, s.title) == ("running", None, "first")


async def test_rows_for_an_unannounced_session_get_a_stub(store: Store) -> None:
    await store.write(add_message("ses_stub", 0, Message.user("hi")))
    s = store.get_session("ses_stub")
    assert s is not None and s.title == "hi" and s.status == "running"
    await store.write(create_session("ses_stub", model="anthropic:claude-haiku-4-5", agent="explore#1", depth=1))
    s = store.get_session("ses_stub")
    assert s is not None and (s.agent, s.depth, s.title) == ("explore#1", 1, "hi")


async def test_finish_marks_unfinished_tool_calls_cancelled(store: Store) -> None:
    store.submit(create_session("ses_c"))
    store.submit(tool_call_started("ses_c", "tc", "Bash", {"command": "sleep 9"}, "sleep 9"))
    await store.write(finish_session("ses_c", "cancelled", error="cancelled", turns=1))
    assert [c.status for c in store.get_tool_calls("ses_c")] == ["cancelled"]
    s = store.get_session("ses_c")
    assert s is not None and (s.status, s.error) == ("cancelled", "cancelled")


async def test_upsert_task_record_and_patch(store: Store) -> None:
    started = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    record = TaskRecord(
        task_id="tsk_1",
        parent_session_id="ses_p",
        parent_tool_call_id="tc_9",
        child_session_id="ses_c",
        depth=1,
        chain=["main", "explore"],
        subagent_type="explore",
        description="Find auth code",
        prompt="Find where login happens",
        model_used="anthropic:claude-haiku-4-5",
        status="running",
        started_at=started,
    )
    stored = await store.write(upsert_task(record))
    assert stored == record
    assert store.get_task("tsk_1") == record

    done = record.model_copy(
        update={
            "status": "completed",
            "result": "login is in auth.py:3\n" * 500,
            "tool_summary": [ToolCount(tool="Grep", count=2), ToolCount(tool="Read", count=1)],
            "files_modified": ["a.py"],
            "time_ms": 1234.5,
            "tool_calls": 3,
            "input_tokens": 900,
            "output_tokens": 80,
            "cost_usd": 0.0012,
            "finished_at": datetime(2026, 11, 1, 12, 0, 2, tzinfo=UTC),
        }
    )
    await store.write(upsert_task(done))
    assert store.get_task("tsk_1") == done  # the full result, not a cut

    patched = await store.write(upsert_task({"task_id": "tsk_1", "status": "failed", "error": "oops"}))
    got = store.get_task("tsk_1")
    assert got == patched and got is not None
    assert (got.status, got.error, got.result, got.chain) == ("failed", "oops", done.result, ["main", "explore"])

    with pytest.raises(ValueError, match="unknown fields"):
        upsert_task({"task_id": "tsk_1", "bogus": 1})
    with pytest.raises(ValueError, match="task_id"):
        upsert_task({"status": "failed"})


async def test_list_tasks_filters_and_prefix_lookup(store: Store) -> None:
    for i, parent in enumerate(["ses_a", "ses_a", "ses_b"]):
        store.submit(upsert_task(TaskRecord(task_id=f"tsk_{i}x", parent_session_id=parent, subagent_type="plan")))
    await store.write(upsert_task({"task_id": "tsk_2x", "status": "completed"}))
    assert [t.task_id for t in store.list_tasks()] == ["tsk_2x", "tsk_1x", "tsk_0x"]
    assert [t.task_id for t in store.list_tasks(parent_session_id="ses_a")] == ["tsk_1x", "tsk_0x"]
    assert [t.task_id for t in store.list_tasks(status="completed")] == ["tsk_2x"]
    assert store.get_task("tsk_1").task_id == "tsk_1x"  # type: ignore[union-attr]
    assert store.get_task("nope") is None
    with pytest.raises(AmbiguousIdError, match="tsk_0x, tsk_1x"):
        store.get_task("tsk_")


async def test_list_sessions_and_prefix_lookup(store: Store) -> None:
    store.submit(create_session("ses_aa1"))
    store.submit(create_session("ses_aa2"))
    store.submit(create_session("ses_bb1", parent_session_id="ses_aa1", task_id="tsk_1", depth=1))
    await store.flush()
    assert [s.id for s in store.list_sessions()] == ["ses_aa2", "ses_aa1"]
    assert [s.id for s in store.list_sessions(include_subagents=True)] == ["ses_bb1", "ses_aa2", "ses_aa1"]
    assert [s.id for s in store.list_sessions(limit=1)] == ["ses_aa2"]
    assert [s.id for s in store.list_sessions(parent_session_id="ses_aa1")] == ["ses_bb1"]
    assert store.get_session("ses_b").id == "ses_bb1"  # type: ignore[union-attr]
    assert store.get_session("") is None and store.get_session("zzz") is None
    with pytest.raises(AmbiguousIdError) as info:
        store.get_session("ses_aa")
    assert info.value.matches == ["ses_aa1", "ses_aa2"]


def test_v1_database_gains_codes_and_cache_columns(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
    Store.open(db_path).close()  # a database as the previous release left it
    conn = sqlite3.connect(db_path)
    conn.execute(
        "INSERT INTO tasks (task_id, subagent_type, input_tokens, created_at) VALUES ('tsk_old', 'explore', 5, 'x')"
    )
    conn.commit()
    conn.close()
    assert _pragma(db_path, "user_version") == 1
    monkeypatch.undo()
    with Store.open(db_path) as store:
        old = store.get_task("tsk_old")
        assert old is not None and (old.input_tokens, old.cache_read_tokens, old.cache_write_tokens) == (5, 0, 0)
        store.submit(tool_call_finished("ses_x", "tc_1", "Task", is_error=True, output="no", code="NOT_FOUND",
                                        short_result="Task delegation failed"))
        store.flush_sync()
        (call,) = store.get_tool_calls("ses_x")
        assert (call.code, call.short_result) == ("NOT_FOUND", "Task delegation failed")
    assert _pragma(db_path, "user_version") == schema.schema_version()
