"""Delegation limits: the session's concurrency queue, sibling Task calls' turns, depth and cycle checks,
write-glob leases."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import heapq
import itertools
import re
from dataclasses import dataclass, field

from agentcli.tools import match_glob


class LimitReachedError(Exception):
    """No free slot and `on_limit = "error"`."""


@dataclass(slots=True)
class Slot:
    """One subagent's claim on the concurrency limit; released while it waits on its own children."""

    priority: int
    held: bool = False
    suspended: int = 0


@dataclass(order=True, slots=True)
class _Waiter:
    priority: int
    seq: int
    future: asyncio.Future[None] = field(compare=False)


class ConcurrencyLimiter:
    """At most `limit` subagents run at once in one session tree.

    Waiters are served by priority (deeper delegations first, so work already under way
    finishes), then in arrival order. A parent that waits on its children gives its slot back
    meanwhile (`suspend`/`resume`), so nested delegation cannot deadlock the queue.
    """

    def __init__(self, limit: int, on_limit: str = "queue") -> None:
        self.limit = limit
        self.on_limit = on_limit
        self.running = 0
        self._waiters: list[_Waiter] = []
        self._seq = itertools.count()

    @property
    def queued(self) -> int:
        """How many subagents wait for a slot."""
        return sum(1 for w in self._waiters if not w.future.done())

    def try_acquire(self, slot: Slot) -> bool:
        """Take a slot now if one is free and nobody waits."""
        if self.running < self.limit and not self.queued:
            self.running += 1
            slot.held = True
            return True
        return False

    async def acquire(self, slot: Slot) -> None:
        """Take a slot, waiting in the queue when `on_limit` is queue; raise `LimitReachedError` otherwise."""
        await self._acquire(slot, wait=self.on_limit != "error")

    async def acquire_unless(self, slot: Slot, cancelled: asyncio.Event) -> bool:
        """Take a slot (`acquire`: it may wait in the queue); False when `cancelled` is set first (a task
        cancelled while it was queued)."""
        if self.try_acquire(slot):
            return True
        acquire = asyncio.ensure_future(self.acquire(slot))
        cancel = asyncio.ensure_future(cancelled.wait())
        try:
            await asyncio.wait({acquire, cancel}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel.cancel()
            if not acquire.done():
                acquire.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await acquire
        if acquire.cancelled():
            return False
        acquire.result()  # re-raise LimitReachedError
        return True

    async def _acquire(self, slot: Slot, *, wait: bool) -> None:
        if self.try_acquire(slot):
            return
        if not wait:
            raise LimitReachedError("Maximum concurrent tasks limit reached")
        waiter = _Waiter(-slot.priority, next(self._seq), asyncio.get_running_loop().create_future())
        heapq.heappush(self._waiters, waiter)
        try:
            await waiter.future
        except asyncio.CancelledError:
            if waiter.future.done() and not waiter.future.cancelled():
                self._hand_back()  # granted just as we were cancelled: pass it on
            raise
        slot.held = True

    def release(self, slot: Slot) -> None:
        """Give the slot back (no-op when not held)."""
        if not slot.held:
            return
        slot.held = False
        self._hand_back()

    def _hand_back(self) -> None:
        while self._waiters:
            waiter = heapq.heappop(self._waiters)
            if not waiter.future.done():
                waiter.future.set_result(None)  # the slot passes straight to the waiter
                return
        self.running -= 1

    def suspend(self, slot: Slot) -> None:
        """The slot's owner starts waiting on a child: free the slot for others."""
        slot.suspended += 1
        if slot.suspended == 1:
            self.release(slot)

    async def resume(self, slot: Slot) -> None:
        """The owner's last child finished: take a slot again before it goes on."""
        slot.suspended -= 1
        if slot.suspended == 0 and not slot.held:
            await self._acquire(slot, wait=True)  # resuming work already admitted never fails


# --- depth and cycles -------------------------------------------------------------------------


class Turns:
    """Sibling Task calls take turns at their first step: a call that starts while another's first step has the
    turn waits for the loop's next pass, so each subagent's first step (its request) runs before the next
    sibling's set-up instead of after all of them. Without it a fan-out of N set up N subagents before the first
    request went out, and their N answers came back at once, to be read one after the other.

    A turn is handed on by the loop itself (`call_soon`), whatever its holder waits for: nothing is held across a
    wait (a slot, a worktree, a hook), so no call ever waits on another's progress.
    """

    def __init__(self) -> None:
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._held = False

    async def take(self) -> None:
        """Wait for this call's turn; it passes on at the loop's next pass."""
        if self._held:
            mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.append(mine)
            try:
                await mine
            except asyncio.CancelledError:
                if mine.done() and not mine.cancelled():
                    self._pass()  # handed the turn as it was cancelled: hand it on
                raise
        self._held = True
        asyncio.get_running_loop().call_soon(self._pass)

    def _pass(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)  # held on, for it
                return
        self._held = False


def normalize_prompt(prompt: str) -> str:
    """Whitespace- and case-insensitive form used to detect identical delegations."""
    return re.sub(r"\s+", " ", prompt).strip().lower()


def depth_error(caller_depth: int, max_depth: int) -> str | None:
    """A Task call needs caller depth < max_depth (the main agent is depth 0)."""
    if caller_depth >= max_depth:
        return f"Maximum sub-agent depth exceeded (max_depth={max_depth})"
    return None


def cycle_error(
    chain: tuple[str, ...], lineage: tuple[tuple[str, str], ...], subagent_type: str, prompt: str
) -> str | None:
    """Refuse a type already in the caller's ancestor chain, or a delegation identical to an ancestor's."""
    repeated_type = subagent_type in chain[1:]  # chain[0] is the root agent ("main")
    repeated_call = (subagent_type, normalize_prompt(prompt)) in lineage
    if repeated_type or repeated_call:
        return "Circular delegation prevented: " + " → ".join((*chain, subagent_type))
    return None


# --- write leases -----------------------------------------------------------------------------


def _static_prefix(glob: str) -> str:
    """The literal leading directories of a glob: `src/api/*.py` → `src/api/`."""
    head = re.split(r"[*?\[{]", glob, maxsplit=1)[0]
    return head[: head.rfind("/") + 1] if "/" in head else ""


def globs_overlap(a: str, b: str) -> bool:
    """Whether some path could match both globs (conservative: unsure means overlap)."""
    a, b = a.strip().removeprefix("./"), b.strip().removeprefix("./")
    if a == b or match_glob(a, b) or match_glob(b, a):
        return True
    pa, pb = _static_prefix(a), _static_prefix(b)
    literal_a, literal_b = not re.search(r"[*?\[{]", a), not re.search(r"[*?\[{]", b)
    if literal_a and literal_b:
        return False  # two different plain paths
    if literal_a:
        return match_glob(b, a)
    if literal_b:
        return match_glob(a, b)
    return pa.startswith(pb) or pb.startswith(pa)


class WriteLeases:
    """Running subagents' `write_paths`; a second subagent whose globs overlap is refused."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[str, ...]] = {}

    def acquire(self, task_id: str, globs: list[str], ignore: set[str] | frozenset[str] = frozenset()) -> list[str]:
        """Lease `globs` to a task; returns the conflicts (nothing is leased when there are any).

        `ignore`: the task's ancestors, whose leases contain their descendants' (a child works inside them).
        """
        conflicts = [
            f"{mine} overlaps {theirs} (held by {holder})"
            for holder, held in self._held.items()
            if holder not in ignore
            for mine in globs
            for theirs in held
            if globs_overlap(mine, theirs)
        ]
        if not conflicts:
            self._held[task_id] = tuple(globs)
        return conflicts

    def release(self, task_id: str) -> None:
        """Give a task's lease back."""
        self._held.pop(task_id, None)
