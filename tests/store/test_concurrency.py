"""Store under concurrent writers, crash recovery, cancellation and the usage roll-up."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentcli.llm.base import Message
from agentcli.llm.usage import Usage
from agentcli.store.db import (
    Store,
    WriteJob,
    add_message,
    add_usage,
    cancel_session_tree,
    create_session,
    mark_running_cancelled,
    tool_call_started,
    upsert_task,
)
from agentcli.store.processes import own_identity, process_alive, process_start
from agentcli.store.records import TaskRecord

SESSIONS, MESSAGES = 20, 50


def _count(store: Store, table: str) -> int:
    return int(store._reader().execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def _check_complete(store: Store, prefix: str) -> None:
    assert _count(store, "messages") == SESSIONS * MESSAGES
    for i in range(SESSIONS):
        session = store.get_session(f"{prefix}{i:02d}")
        assert session is not None
        assert session.input_tokens == MESSAGES * 3 and session.output_tokens == MESSAGES
        texts = [m.text() for m in store.get_messages(session.id)]
        assert texts == [f"s{i} m{j}" for j in range(MESSAGES)]


def test_concurrent_threads_lose_nothing(store: Store) -> None:
    def worker(i: int) -> None:
        sid = f"thr_{i:02d}"
        store.submit(create_session(sid, model="light", depth=1, agent=f"explore#{i}"))
        for j in range(MESSAGES):
            store.submit(add_message(sid, j, Message.user(f"s{i} m{j}")))
            store.submit(add_usage(sid, "anthropic", "claude-haiku-4-5", Usage(3, 1), 0.0001))

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(worker, range(SESSIONS)))
    store.flush_sync(timeout=30)
    assert _count(store, "usage") == SESSIONS * MESSAGES
    _check_complete(store, "thr_")


async def test_concurrent_asyncio_tasks_and_threads_lose_nothing(store: Store) -> None:
    async def agent(i: int) -> None:
        sid = f"aio_{i:02d}"
        await store.write(create_session(sid, model="main"))
        for j in range(MESSAGES):
            job = add_message(sid, j, Message.user(f"s{i} m{j}"))
            if j % 2:
                store.submit(job)  # the hot path: fire and forget
            else:
                await store.write(job)  # stored before going on
            store.submit(add_usage(sid, "openai", "gpt-5", Usage(3, 1), None))
            await asyncio.sleep(0)

    def thread_agent(i: int) -> None:
        asyncio.run(agent(i))  # another loop in another thread, same store

    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = [loop.run_in_executor(pool, thread_agent, i) for i in range(SESSIONS // 2, SESSIONS)]
        async with asyncio.TaskGroup() as group:
            for i in range(SESSIONS // 2):
                group.create_task(agent(i))
        await asyncio.gather(*threaded)
    await store.flush()
    _check_complete(store, "aio_")


def test_two_stores_on_one_file_both_land(db_path: Path) -> None:
    """Two writers on one database (as two agentcli processes would be): busy_timeout serializes them."""
    with Store.open(db_path) as one, Store.open(db_path) as two:
        for j in range(200):
            one.submit(add_message("ses_one", j, Message.user(f"{j}")))
            two.submit(add_message("ses_two", j, Message.user(f"{j}")))
    with Store.open(db_path) as store:
        assert len(store.get_messages("ses_one")) == len(store.get_messages("ses_two")) == 200


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def _set_owner(table: str, key: str, ident: str, pid: int | None, started: int | None) -> WriteJob[None]:
    def job(conn: sqlite3.Connection) -> None:
        conn.execute(f"UPDATE {table} SET pid = ?, pid_started = ? WHERE {key} = ?", (pid, started, ident))

    return job


async def test_mark_running_cancelled_spares_live_processes(store: Store) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        dead = _dead_pid()
        me, my_start = own_identity()
        for sid in ("ses_mine", "ses_other_live", "ses_dead", "ses_reused_pid", "ses_done"):
            store.submit(create_session(sid))
        store.submit(tool_call_started("ses_dead", "tc", "Bash", {}, "sleep"))
        store.submit(upsert_task(TaskRecord(task_id="tsk_dead", subagent_type="explore", status="running")))
        store.submit(upsert_task(TaskRecord(task_id="tsk_queued_dead", subagent_type="explore")))
        store.submit(upsert_task(TaskRecord(task_id="tsk_mine", subagent_type="explore", status="running")))
        store.submit(upsert_task(TaskRecord(task_id="tsk_done", subagent_type="explore", status="completed")))
        for job in (
            _set_owner("sessions", "id", "ses_other_live", other.pid, process_start(other.pid)),
            _set_owner("sessions", "id", "ses_dead", dead, None),
            _set_owner("sessions", "id", "ses_reused_pid", me, (my_start or 0) + 1),  # same pid, other process
            _set_owner("sessions", "id", "ses_done", dead, None),
            _set_owner("tasks", "task_id", "tsk_dead", dead, None),
            _set_owner("tasks", "task_id", "tsk_queued_dead", None, None),
            _set_owner("tasks", "task_id", "tsk_done", dead, None),
        ):
            store.submit(job)
        await store.write(add_message("ses_done", 0, Message.user("x")))
        store.submit(lambda conn: conn.execute("UPDATE sessions SET status = 'completed' WHERE id = 'ses_done'"))

        assert await store.write(mark_running_cancelled()) == (2, 2)
        status = {s.id: s.status for s in store.list_sessions(include_subagents=True)}
        assert status == {
            "ses_mine": "running",
            "ses_other_live": "running",
            "ses_dead": "cancelled",
            "ses_reused_pid": "cancelled",
            "ses_done": "completed",
        }
        assert {t.task_id: t.status for t in store.list_tasks()} == {
            "tsk_dead": "cancelled",
            "tsk_queued_dead": "cancelled",
            "tsk_mine": "running",
            "tsk_done": "completed",
        }
        assert store.get_session("ses_dead").error.startswith("interrupted")  # type: ignore[union-attr]
        assert [c.status for c in store.get_tool_calls("ses_dead")] == ["cancelled"]
        assert store.mark_running_cancelled().result(5) == (0, 0)  # idempotent
    finally:
        other.communicate(b"")


def test_process_alive() -> None:
    me, start = own_identity()
    assert process_alive(me, start) and process_alive(me, None)
    assert not process_alive(None, None)
    assert not process_alive(_dead_pid(), None)


async def test_cancel_session_tree_and_rollup_over_three_levels(store: Store) -> None:
    tree = {  # id: (parent, input, output, cost)
        "ses_root": (None, 100, 10, 0.01),
        "ses_a": ("ses_root", 50, 5, 0.005),
        "ses_a1": ("ses_a", 20, 2, None),
        "ses_b": ("ses_root", 30, 3, 0.003),
        "ses_other": (None, 999, 999, 9.0),
    }
    for sid, (parent, inp, out, cost) in tree.items():
        depth = 0 if parent is None else (1 if parent == "ses_root" else 2)
        store.submit(create_session(sid, parent_session_id=parent, depth=depth))
        store.submit(add_usage(sid, "anthropic", "m", Usage(inp, out, 1, 2), cost))
    for task, parent, child in (
        ("tsk_a", "ses_root", "ses_a"),
        ("tsk_a1", "ses_a", "ses_a1"),
        ("tsk_b", "ses_root", "ses_b"),
    ):
        record = TaskRecord(
            task_id=task, parent_session_id=parent, child_session_id=child, subagent_type="general", status="running"
        )
        store.submit(upsert_task(record))
    await store.flush()

    rollup = store.session_usage_rollup("ses_root")
    assert rollup is not None
    assert (rollup.sessions, rollup.input_tokens, rollup.output_tokens) == (4, 200, 20)
    assert (rollup.cache_read_tokens, rollup.cache_write_tokens, rollup.total_tokens) == (4, 8, 232)
    assert rollup.cost_usd == pytest.approx(0.018)
    mid = store.session_usage_rollup("ses_a")
    assert mid is not None and (mid.sessions, mid.input_tokens) == (2, 70)
    assert mid.cost_usd == pytest.approx(0.005)
    leaf = store.session_usage_rollup("ses_a1")
    assert leaf is not None and (leaf.sessions, leaf.cost_usd) == (1, None)
    assert store.session_usage_rollup("ses_missing") is None

    assert await store.write(cancel_session_tree("ses_a")) == (2, 2)
    status = {s.id: s.status for s in store.list_sessions(include_subagents=True)}
    assert status == {
        "ses_root": "running",
        "ses_a": "cancelled",
        "ses_a1": "cancelled",
        "ses_b": "running",
        "ses_other": "running",
    }
    assert {t.task_id: t.status for t in store.list_tasks()} == {
        "tsk_a": "cancelled",
        "tsk_a1": "cancelled",
        "tsk_b": "running",
    }
    assert store.cancel_session_tree("ses_root").result(5) == (2, 1)


CRASHER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from agentcli.llm.base import Message
    from agentcli.llm.usage import Usage
    from agentcli.store.db import Store, add_message, add_usage, create_session, upsert_task
    from agentcli.store.records import TaskRecord

    store = Store.open(Path(sys.argv[1]))
    store.submit(create_session("ses_crash", model="main", workspace="/w"))
    for seq in range(40):
        store.submit(add_message("ses_crash", seq, Message.user(f"message {seq}")))
    store.submit(add_usage("ses_crash", "anthropic", "claude-sonnet-4-5", Usage(7, 3), 0.5))
    store.submit(upsert_task(TaskRecord(task_id="tsk_crash", parent_session_id="ses_crash",
                                        subagent_type="explore", status="running")))
    store.flush_sync(10)
    print("flushed", flush=True)
    os._exit(1)  # mid-run: no close, no atexit, the writer thread still alive
    """
)


def test_crash_keeps_flushed_rows_and_marks_the_session_cancelled(db_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, str(db_path)], capture_output=True, text=True, timeout=60, env=os.environ
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.strip() == "flushed"
    with Store.open(db_path) as store:
        session = store.get_session("ses_crash")
        assert session is not None and session.status == "running"
        assert [m.text() for m in store.get_messages("ses_crash")] == [f"message {i}" for i in range(40)]
        assert session.input_tokens == 7 and session.cost_usd == 0.5
        assert store.mark_running_cancelled().result(5) == (1, 1)
        session = store.get_session("ses_crash")
        assert session is not None and session.status == "cancelled" and session.finished_at is not None
        task = store.get_task("tsk_crash")
        assert task is not None and task.status == "cancelled" and task.finished_at is not None
