"""The event bus: every subscriber sees every event, whatever another subscriber does."""

from __future__ import annotations

import logging

import pytest

from agentcli.events import Event, EventBus, NoticeEvent, UsageEvent
from agentcli.llm.usage import Usage


def test_a_failing_subscriber_does_not_keep_the_others_from_an_event(caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    seen: list[Event] = []

    def broken(event: Event) -> None:
        raise BrokenPipeError("stdout went away")

    bus.subscribe(broken)  # e.g. a printer whose terminal hung up, subscribed before the store and the budget
    bus.subscribe(seen.append)
    event = NoticeEvent(session_id="s", message="hello")
    with caplog.at_level(logging.ERROR, logger="agentcli.events"):
        bus(event)
    assert seen == [event]
    assert any("failed on notice" in r.getMessage() for r in caplog.records)


def test_a_usage_event_reads_as_the_ledgers_usage() -> None:
    event = UsageEvent(session_id="s", provider="anthropic", model="m", input_tokens=10, output_tokens=5,
                       cache_read_tokens=3, cache_write_tokens=2, reasoning_tokens=1)
    assert event.usage == Usage(10, 5, 3, 2, 1)
