"""Input first: flushes of streamed output wait while keys arrive (but never long), full collections wait for a
pause in typing (but not forever), and a burst of new entries is mounted over several frames, in order."""

from __future__ import annotations

import gc

import pytest
from textual.app import App, ComposeResult

from agentcli.ui import pacing
from agentcli.ui.model import NoteItem
from agentcli.ui.pacing import (
    GC_QUIET_SECONDS,
    KEY_FLUSH_SECONDS,
    KEY_QUIET_SECONDS,
    MAX_HOLD_SECONDS,
    MOUNTS_WHILE_TYPING,
    TYPING_SECONDS,
    CollectorPacer,
    InputFirst,
)
from agentcli.ui.views import EntryViews
from agentcli.ui.widgets.message_list import MessageList, NoteLine


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_key_holds_the_next_flush_back_but_never_longer_than_the_hold() -> None:
    clock = Clock()
    pace = InputFirst(clock)
    assert pace.flush_due() and pace.quiet(GC_QUIET_SECONDS)  # nobody typed: flush at every frame
    assert pace.mount_budget() is None  # and mount everything queued
    clock.now += 0.05
    pace.key()
    clock.now += KEY_QUIET_SECONDS / 2
    assert not pace.flush_due() and not pace.quiet(GC_QUIET_SECONDS)
    assert pace.mount_budget() == MOUNTS_WHILE_TYPING
    clock.now += KEY_QUIET_SECONDS
    assert pace.flush_due()  # the key is old enough
    held = 0
    for _ in range(40):  # a key every 25 ms, a frame every 50 ms: flushes come at least every MAX_HOLD_SECONDS
        clock.now += 0.025
        after_key = pace.key()  # a flush right after this key's frame...
        clock.now += 0.025
        if after_key | pace.flush_due():  # ...or at a frame
            assert held * 0.05 <= MAX_HOLD_SECONDS + 1e-9
            assert held * 0.05 <= MAX_HOLD_SECONDS + 1e-9
            held = 0
        else:
            held += 1
    assert held < MAX_HOLD_SECONDS / 0.05
    clock.now += TYPING_SECONDS
    assert pace.mount_budget() is None


def test_a_key_after_a_while_without_a_flush_asks_for_one_right_after_its_own_frame() -> None:
    clock = Clock()
    pace = InputFirst(clock)
    assert pace.key()  # nothing flushed yet: flush once this key is painted (noted as flushed)
    clock.now += KEY_FLUSH_SECONDS / 3
    assert not pace.key() and not pace.flush_due()  # just flushed, a key just came: both wait
    clock.now += KEY_FLUSH_SECONDS
    assert pace.key()  # long enough: the next flush follows this key's frame, not a timer tick
    assert not pace.flush_due()


def test_full_collections_run_at_a_pause_and_are_forced_when_overdue(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = [0, 0, 0]
    collected: list[int] = []
    monkeypatch.setattr(gc, "get_count", lambda: tuple(counts))
    monkeypatch.setattr(gc, "collect", lambda generation=2: collected.append(generation) or 0)
    before = gc.get_threshold()
    pacer = CollectorPacer()
    pacer.start()
    try:
        assert gc.get_threshold()[2] == pacing.HELD_THRESHOLD  # CPython starts none itself
        assert gc.get_threshold()[:2] == before[:2]  # the young generations are collected as before
        due = before[2]
        counts[2] = due - 1
        assert not pacer.tick(quiet=True) and collected == []  # not due yet
        counts[2] = due
        assert not pacer.tick(quiet=False)  # due, but keys are arriving
        assert pacer.tick(quiet=True) and collected == [2]  # a pause: now
        counts[2] = due * pacing.FORCE_AFTER
        assert pacer.tick(quiet=False) and collected == [2, 2]  # overdue: even while typing
    finally:
        pacer.stop()
    assert gc.get_threshold() == before and not pacer.active
    assert not pacer.tick(quiet=True)  # stopped: CPython's own again


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield MessageList()


async def test_a_burst_of_entries_is_mounted_over_frames_in_order_while_keys_arrive() -> None:
    app = Host()
    async with app.run_test() as pilot:
        views = EntryViews(app.query_one(MessageList))
        notes = [NoteItem(f"note {i}") for i in range(MOUNTS_WHILE_TYPING * 2 + 1)]
        for note in notes:
            views.queue(None, note)
        frames = 0
        while not views.settled:
            views.flush(mounts=MOUNTS_WHILE_TYPING)
            frames += 1
            await pilot.pause()
            assert len(app.query(NoteLine)) == min(len(notes), frames * MOUNTS_WHILE_TYPING)
        assert frames == 3
        assert [line.item.text for line in app.query(NoteLine)] == [note.text for note in notes]
        for note in (more := [NoteItem(f"later {i}") for i in range(MOUNTS_WHILE_TYPING * 2)]):
            views.queue(None, note)
        views.flush()  # nobody typing: all at once
        await pilot.pause()
        assert [line.item.text for line in app.query(NoteLine)][-len(more):] == [note.text for note in more]
