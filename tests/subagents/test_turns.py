"""Sibling Task calls take turns at their first step: each one's child starts before the next sibling sets up."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.subagents.limits import Turns


async def _sibling(turns: Turns, name: str, log: list[str], hold: asyncio.Event | None = None) -> None:
    await turns.take()
    log.append(f"set up {name}")
    child = asyncio.create_task(_child(name, log))  # as the runner starts a subagent's loop
    if hold is not None:
        await hold.wait()  # a wait inside its turn (a slot, a worktree): the turn still passes on
    await child


async def _child(name: str, log: list[str]) -> None:
    log.append(f"request {name}")


async def test_each_child_starts_before_the_next_sibling_sets_up() -> None:
    turns, log = Turns(), []
    async with asyncio.TaskGroup() as tg:
        for name in "abc":
            tg.create_task(_sibling(turns, name, log))
    assert log == ["set up a", "request a", "set up b", "request b", "set up c", "request c"]


async def test_a_turn_passes_on_while_its_holder_waits() -> None:
    turns, log, hold = Turns(), [], asyncio.Event()
    async with asyncio.TaskGroup() as tg:
        tg.create_task(_sibling(turns, "a", log, hold))
        b = tg.create_task(_sibling(turns, "b", log))
        await asyncio.wait_for(asyncio.shield(b), 5)  # b ran while a still waits
        hold.set()
    assert log[:4] == ["set up a", "request a", "set up b", "request b"]


async def test_cancelled_waiters_never_keep_the_turn() -> None:
    turns, log = Turns(), []
    first, second = asyncio.create_task(turns.take()), asyncio.create_task(turns.take())
    await turns.take()  # held until the loop's next pass: both wait behind it, then it is handed to `first`
    await asyncio.sleep(0)
    assert not first.done() and not second.done()
    first.cancel()  # handed the turn, not yet resumed: it hands it on
    second.cancel()  # still waiting: skipped
    for waiter in (first, second):
        with pytest.raises(asyncio.CancelledError):
            await waiter
    await asyncio.wait_for(_sibling(turns, "next", log), 5)  # the turn is free again
    assert log == ["set up next", "request next"]
