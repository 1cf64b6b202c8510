"""Delegation limits: the concurrency queue, glob overlap, write leases, depth and cycle texts."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.subagents.limits import (
    ConcurrencyLimiter,
    LimitReachedError,
    Slot,
    WriteLeases,
    cycle_error,
    depth_error,
    globs_overlap,
)


async def _until(condition: object, timeout: float = 2.0) -> None:
    """Bounded wait for a condition (a zero-argument callable) while other tasks run."""
    assert callable(condition)
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0)


# --- ConcurrencyLimiter -----------------------------------------------------------------------


async def test_never_more_than_limit_running_and_all_finish() -> None:
    limiter = ConcurrencyLimiter(3)
    running = peak = 0
    finished = 0

    async def worker() -> None:
        nonlocal running, peak, finished
        slot = Slot(priority=1)
        await limiter.acquire(slot)
        running += 1
        peak = max(peak, running)
        for _ in range(3):  # give the others every chance to overtake
            await asyncio.sleep(0)
        running -= 1
        limiter.release(slot)
        finished += 1

    async with asyncio.timeout(5):
        await asyncio.gather(*(worker() for _ in range(10)))
    assert peak == 3
    assert finished == 10
    assert limiter.running == 0 and limiter.queued == 0


async def test_waiters_are_served_deeper_first_then_in_arrival_order() -> None:
    limiter = ConcurrencyLimiter(1)
    holder = Slot(priority=0)
    assert limiter.try_acquire(holder)
    order: list[str] = []
    slots = {name: Slot(priority=depth) for name, depth in [("a1", 1), ("b2", 2), ("c1", 1), ("d2", 2), ("e3", 3)]}

    async def wait(name: str) -> None:
        await limiter.acquire(slots[name])
        order.append(name)

    async def queued(n: int) -> None:
        await _until(lambda: limiter.queued == n)

    async def served(n: int) -> None:
        await _until(lambda: len(order) == n)

    tasks = []
    for name in slots:  # queue them one by one, so arrival order is known
        tasks.append(asyncio.create_task(wait(name)))
        await queued(len(tasks))
    limiter.release(holder)
    for n in range(1, 6):
        await served(n)
        assert limiter.running == 1
        limiter.release(slots[order[-1]])
    await asyncio.gather(*tasks)
    assert order == ["e3", "b2", "d2", "a1", "c1"]
    assert limiter.running == 0


async def test_on_limit_error_raises_with_the_spec_text() -> None:
    limiter = ConcurrencyLimiter(1, on_limit="error")
    await limiter.acquire(Slot(priority=1))
    with pytest.raises(LimitReachedError, match=r"^Maximum concurrent tasks limit reached$"):
        await limiter.acquire(Slot(priority=1))
    assert limiter.running == 1 and limiter.queued == 0


async def test_cancel_while_queued_does_not_leak_a_slot() -> None:
    limiter = ConcurrencyLimiter(1)
    holder = Slot(priority=1)
    await limiter.acquire(holder)
    queued = Slot(priority=1)
    waiter = asyncio.create_task(limiter.acquire(queued))
    await _until(lambda: limiter.queued == 1)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert limiter.queued == 0 and not queued.held
    limiter.release(holder)
    assert limiter.running == 0
    assert limiter.try_acquire(Slot(priority=1))  # the slot is free again
    assert limiter.running == 1


async def test_slot_granted_as_its_waiter_is_cancelled_passes_on() -> None:
    limiter = ConcurrencyLimiter(1)
    holder = Slot(priority=1)
    await limiter.acquire(holder)
    first, second = Slot(priority=1), Slot(priority=1)
    t1 = asyncio.create_task(limiter.acquire(first))
    await _until(lambda: limiter.queued == 1)
    t2 = asyncio.create_task(limiter.acquire(second))
    await _until(lambda: limiter.queued == 2)
    limiter.release(holder)  # grants the slot to `first`...
    t1.cancel()  # ...which is cancelled before it could wake up
    with pytest.raises(asyncio.CancelledError):
        await t1
    async with asyncio.timeout(2):
        await t2  # the slot went on to the next waiter
    assert second.held and not first.held
    assert limiter.running == 1
    limiter.release(second)
    assert limiter.running == 0 and limiter.queued == 0


async def test_suspend_frees_the_slot_and_resume_takes_one_again() -> None:
    limiter = ConcurrencyLimiter(1)
    parent, other = Slot(priority=1), Slot(priority=1)
    await limiter.acquire(parent)
    other_task = asyncio.create_task(limiter.acquire(other))
    await _until(lambda: limiter.queued == 1)
    limiter.suspend(parent)
    await asyncio.wait_for(other_task, 2)  # the parent's slot went to the waiter
    assert not parent.held and other.held and limiter.running == 1
    limiter.suspend(parent)  # a second child: nothing more to free
    resume_first = asyncio.create_task(limiter.resume(parent))
    await asyncio.wait_for(resume_first, 2)  # one child still runs: no slot needed yet
    assert not parent.held
    resume_last = asyncio.create_task(limiter.resume(parent))
    await _until(lambda: limiter.queued == 1)  # the last child finished: the parent queues for a slot
    limiter.release(other)
    await asyncio.wait_for(resume_last, 2)
    assert parent.held and limiter.running == 1 and parent.suspended == 0


async def test_resume_under_on_limit_error_queues_without_changing_the_policy() -> None:
    limiter = ConcurrencyLimiter(1, on_limit="error")
    parent, child = Slot(priority=1), Slot(priority=2)
    await limiter.acquire(parent)
    limiter.suspend(parent)
    await limiter.acquire(child)
    resume = asyncio.create_task(limiter.resume(parent))  # work already admitted waits, never fails
    await _until(lambda: limiter.queued == 1)
    # Meanwhile a new task still meets the configured policy: it is refused, not queued.
    with pytest.raises(LimitReachedError):
        await asyncio.wait_for(limiter.acquire(Slot(priority=1)), 1)
    assert limiter.on_limit == "error"
    limiter.release(child)
    await asyncio.wait_for(resume, 2)
    assert parent.held and limiter.on_limit == "error"


async def test_overlapping_resumes_restore_the_error_policy() -> None:
    limiter = ConcurrencyLimiter(1, on_limit="error")
    a, b, child = Slot(priority=1), Slot(priority=1), Slot(priority=2)
    await limiter.acquire(a)
    limiter.suspend(a)
    await limiter.acquire(b)
    limiter.suspend(b)
    await limiter.acquire(child)
    resume_a = asyncio.create_task(limiter.resume(a))
    await _until(lambda: limiter.queued == 1)
    resume_b = asyncio.create_task(limiter.resume(b))
    await _until(lambda: limiter.queued == 2)
    limiter.release(child)
    await asyncio.wait_for(resume_a, 2)
    limiter.release(a)
    await asyncio.wait_for(resume_b, 2)
    limiter.release(b)
    assert limiter.on_limit == "error"
    assert limiter.running == 0


@pytest.mark.parametrize("on_limit", ["queue", "error"])
async def test_nested_parents_holding_every_slot_cannot_deadlock(on_limit: str) -> None:
    limiter = ConcurrencyLimiter(2, on_limit=on_limit)
    running = peak = 0
    done: list[str] = []

    async def child(name: str) -> None:
        nonlocal running, peak
        slot = Slot(priority=2)
        await limiter.acquire(slot)
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        running -= 1
        limiter.release(slot)
        done.append(name)

    async def parent(name: str, parent_has_slot: asyncio.Event, both: asyncio.Event) -> None:
        nonlocal running
        slot = Slot(priority=1)
        await limiter.acquire(slot)
        running += 1
        parent_has_slot.set()
        await both.wait()  # every slot is held by a parent now
        running -= 1
        limiter.suspend(slot)  # waits on its child: gives the slot back
        try:
            await child(f"{name}-child")
        finally:
            await limiter.resume(slot)
        assert slot.held
        limiter.release(slot)
        done.append(name)

    e1, e2, both = asyncio.Event(), asyncio.Event(), asyncio.Event()
    tasks = [asyncio.create_task(parent("p1", e1, both)), asyncio.create_task(parent("p2", e2, both))]
    await asyncio.wait_for(asyncio.gather(e1.wait(), e2.wait()), 2)
    assert limiter.running == 2
    both.set()
    async with asyncio.timeout(2):
        await asyncio.gather(*tasks)
    assert sorted(done) == ["p1", "p1-child", "p2", "p2-child"]
    assert peak <= 2 and limiter.running == 0


# --- glob overlap and write leases ------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("src/**", "src/api/*.py", True),
        ("src/api/*.py", "src/**", True),
        ("docs/*.md", "src/**", False),
        ("a.py", "b.py", False),
        ("a.py", "a.py", True),
        ("./src/x.py", "src/x.py", True),
        ("src/**", "src/x.py", True),
        ("src/**/*.py", "src/api/x.md", False),  # a plain path is checked against the glob exactly
        # `*` does not cross `/`: a top-level *.py never names src/x.py ...
        ("*.py", "src/x.py", False),
        # ... but two globs are compared by their literal directories only (unsure means overlap).
        ("*.py", "src/*.py", True),
        ("src/*.py", "src/*.md", True),
        ("src/a/**", "src/b/**", False),
        ("**", "docs/readme.md", True),
    ],
)
def test_globs_overlap(a: str, b: str, overlap: bool) -> None:
    assert globs_overlap(a, b) is overlap
    assert globs_overlap(b, a) is overlap


def test_write_leases_conflict_and_release() -> None:
    leases = WriteLeases()
    assert leases.acquire("t1", ["src/**"]) == []
    conflicts = leases.acquire("t2", ["docs/*.md", "src/api/*.py"])
    assert conflicts == ["src/api/*.py overlaps src/** (held by t1)"]
    assert leases.acquire("t3", ["docs/*.md"]) == []  # t2 leased nothing, so docs/ is still free
    leases.release("t1")
    assert leases.acquire("t2", ["src/api/*.py"]) == []
    assert leases.acquire("t4", ["src/api/auth.py"]) == ["src/api/auth.py overlaps src/api/*.py (held by t2)"]
    leases.release("t2")
    leases.release("t2")  # idempotent
    assert leases.acquire("t4", ["src/api/auth.py"]) == []


# --- depth and cycles -------------------------------------------------------------------------


def test_depth_error_text() -> None:
    assert depth_error(0, 2) is None
    assert depth_error(1, 2) is None
    assert depth_error(2, 2) == "Maximum sub-agent depth exceeded (max_depth=2)"
    assert depth_error(0, 0) == "Maximum sub-agent depth exceeded (max_depth=0)"


def test_cycle_error_text() -> None:
    chain = ("main", "reviewer")
    lineage = (("reviewer", "review the diff"),)
    assert cycle_error(chain, lineage, "reviewer", "something else") == (
        "Circular delegation prevented: main → reviewer → reviewer"
    )
    assert cycle_error(("main", "a", "b"), (("a", "x"), ("b", "y")), "a", "z") == (
        "Circular delegation prevented: main → a → b → a"
    )
    assert cycle_error(chain, lineage, "explore", "review the diff") is None
    assert cycle_error(("main",), (), "explore", "anything") is None
