"""Records of the event stream are batched off the event loop, and none is lost at the end."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentcli.events import EventBus, MessageAddedEvent, SessionStartedEvent
from agentcli.llm.base import Message
from agentcli.store import db
from agentcli.store.db import Store
from agentcli.store.recorder import StoreRecorder
from agentcli.store.writes import add_message


def _stream(bus: EventBus, sessions: int, messages: int) -> None:
    for s in range(sessions):
        bus(SessionStartedEvent(session_id=f"ses_{s}", model="main", workspace="/ws"))
        for seq in range(messages):
            text = f"message {seq} of session {s}"
            bus(MessageAddedEvent(session_id=f"ses_{s}", seq=seq, message=Message.user(text)))


def _counts(path: Path) -> tuple[int, int]:
    with Store.open(path) as again:
        reader = again._reader()
        sessions = reader.execute("SELECT count(*) FROM sessions").fetchone()[0]
        messages = reader.execute("SELECT count(*) FROM messages").fetchone()[0]
    return sessions, messages


def test_close_right_after_a_burst_commits_every_queued_row(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db, "BATCH_DELAY", 60.0)  # the timer never fires: only the end can commit them
    store = Store.open(db_path)
    bus = EventBus()
    bus.subscribe(StoreRecorder(store))
    _stream(bus, sessions=20, messages=40)  # 820 records: more than one transaction (MAX_BATCH)
    store.close()
    assert _counts(db_path) == (20, 800)


def test_a_burst_of_records_is_committed_in_few_batches(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batches: list[int] = []
    real = Store._execute

    def counted(self: Store, batch: list[db._Job]) -> None:
        batches.append(len(batch))
        real(self, batch)

    monkeypatch.setattr(Store, "_execute", counted)
    monkeypatch.setattr(db, "BATCH_DELAY", 60.0)
    store = Store.open(db_path)
    for seq in range(100):
        store.record(add_message("ses_b", seq, Message.user(f"m{seq}")))
    store.flush_sync(timeout=30)  # an awaited write goes at once and takes the queued records along
    store.close()
    assert sum(batches) == 101 and len(batches) <= 2  # not one wake and one commit per record
    assert _counts(db_path) == (1, 100)


async def test_an_awaited_write_never_waits_for_the_batch_timer(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db, "BATCH_DELAY", 60.0)
    store.record(add_message("ses_w", 0, Message.user("first")))
    await asyncio.sleep(0.05)  # the writer is now waiting out the timer
    await asyncio.wait_for(store.flush(), timeout=30)  # a hang guard, not a timing: 60 s would fail it
    assert [m.text() for m in store.get_messages("ses_w")] == ["first"]


def test_the_interpreter_ending_without_close_commits_every_record(tmp_path: Path) -> None:
    path = tmp_path / "exit.db"
    script = textwrap.dedent(
        f"""
        from pathlib import Path

        from agentcli.llm.base import Message
        from agentcli.store import db
        from agentcli.store.db import Store
        from agentcli.store.writes import add_message

        db.BATCH_DELAY = 60.0
        store = Store.open(Path({str(path)!r}))
        for seq in range(300):
            store.record(add_message("ses_x", seq, Message.user(f"m{{seq}}")))
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert _counts(path) == (1, 300)


def test_a_record_after_close_is_refused(store: Store) -> None:
    store.close()
    with pytest.raises(db.StoreClosedError):
        store.record(add_message("ses_late", 0, Message.user("late")))
