"""The store under bad conditions: text SQLite cannot encode, and writes that fail as on a full disk."""

from __future__ import annotations

import sqlite3

import pytest

from agentcli.llm.base import Message
from agentcli.store.db import Store, add_message, create_session, finish_session


async def test_lone_surrogates_are_stored_as_replacement_characters(store: Store) -> None:
    await store.write(create_session("ses_u", model="main", workspace="/w\udcff"))
    await store.write(add_message("ses_u", 0, Message.user("half \ud800 a pair")))
    await store.write(finish_session("ses_u", "failed", "bad \udcfe byte"))
    session = store.get_session("ses_u")
    assert session is not None
    assert session.workspace == "/w\ufffd" and session.error == "bad \ufffd byte"
    assert store.get_messages("ses_u")[0].text() == "half \ufffd a pair"
    assert store.failure is None


async def test_a_write_failing_like_a_full_disk_is_remembered_and_the_writer_goes_on(store: Store) -> None:
    def full(conn: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    assert store.failure is None
    with pytest.raises(sqlite3.OperationalError):
        await store.write(full)
    await store.write(create_session("ses_after"))
    assert store.get_session("ses_after") is not None
    assert store.failure is not None and "database or disk is full" in store.failure
    assert str(store.path) in store.failure


async def test_sqlite_refusing_a_write_is_remembered_and_the_next_write_commits(store: Store) -> None:
    # SQLite itself fails the statement (a progress handler that interrupts every step stands in for
    # an I/O error), the job is rolled back, the failure remembered, and the writer goes on.
    store._conn.set_progress_handler(lambda: 1, 1)
    with pytest.raises(sqlite3.OperationalError):
        await store.write(create_session("ses_lost"))
    store._conn.set_progress_handler(None, 1)
    assert store.failure is not None
    await store.write(create_session("ses_next"))
    assert store.get_session("ses_next") is not None
    assert store.get_session("ses_lost") is None


async def test_a_non_storage_error_is_not_a_persistence_failure(store: Store) -> None:
    def bug(conn: sqlite3.Connection) -> None:
        raise ValueError("a bug, not a disk")

    with pytest.raises(ValueError):
        await store.write(bug)
    assert store.failure is None
