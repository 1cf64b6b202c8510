"""Input first: while the person types, streamed text and full garbage collections wait for a pause.

A frame that takes new streamed text re-renders the live Markdown and scrolls the view (tens of ms with a long
answer), and CPython's full collection of the oldest generation stops everything for as long; a key typed just
then waits for both before it shows. `InputFirst` holds the next push of streamed text back while keys are
arriving (never longer than `MAX_HOLD_SECONDS` since the last one, so output stays live at a few frames a
second) and has new entries mounted a few a frame meanwhile (headers are not held); `CollectorPacer` runs the
full collections at the next pause in typing instead of whenever CPython's counters say, forcing one only after
`FORCE_AFTER` times the usual wait (memory stays bounded).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

KEY_QUIET_SECONDS = 0.06  # a key this recent holds the next flush back...
MAX_HOLD_SECONDS = 0.25  # ...unless the last flush is this old
KEY_FLUSH_SECONDS = 0.15  # a key after this long without a flush: flush right after the key is painted
TYPING_SECONDS = 0.5  # a key this recent: new entries are mounted a few a frame...
MOUNTS_WHILE_TYPING = 6  # ...this many (twenty blocks at once took one frame of 40-60 ms: compose, styles, layout)
GC_QUIET_SECONDS = 0.3  # no key for this long: a full collection may run now
FORCE_AFTER = 10  # times CPython's own threshold: then a full collection runs even while keys arrive
HELD_THRESHOLD = 1 << 30  # the oldest generation's threshold while paced: CPython never starts one itself


class InputFirst:
    """When streamed text may be pushed to the screen, given when keys arrived."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last_key = float("-inf")
        self._last_flush = float("-inf")

    def key(self) -> bool:
        """A key arrived. True when the held text should be flushed right after this key's frame is painted (it
        is noted as flushed): a flush then has until the next key to draw, where one forced by the timer could
        fall just before a key and hold its echo back."""
        now = self._last_key = self._clock()
        if now - self._last_flush < KEY_FLUSH_SECONDS:
            return False
        self._last_flush = now
        return True

    def quiet(self, seconds: float) -> bool:
        """Whether no key arrived in the last `seconds`."""
        return self._clock() - self._last_key >= seconds

    def mount_budget(self) -> int | None:
        """How many new entries the next flush may mount: a few while the person types, else all."""
        return MOUNTS_WHILE_TYPING if not self.quiet(TYPING_SECONDS) else None

    def flush_due(self) -> bool:
        """Whether the next flush should run now (and it is noted as run)."""
        now = self._clock()
        if now - self._last_key < KEY_QUIET_SECONDS and now - self._last_flush < MAX_HOLD_SECONDS:
            return False
        self._last_flush = now
        return True


class CollectorPacer:
    """Full collections at pauses in typing. `start` takes them over from CPython, `stop` hands them back."""

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None
        self.collections = 0  # full collections it ran

    @property
    def active(self) -> bool:
        """Whether it holds CPython's own full collections back."""
        return self._saved is not None

    def start(self) -> None:
        """Hold CPython's full collections back (young generations are collected as before)."""
        if self._saved is None:
            self._saved = gc.get_threshold()
            gc.set_threshold(self._saved[0], self._saved[1], HELD_THRESHOLD)

    def stop(self) -> None:
        """Give full collections back to CPython."""
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def tick(self, quiet: bool) -> bool:
        """Run a full collection if one is due and it is quiet, or overdue; whether it ran."""
        if self._saved is None or not gc.isenabled():
            return False
        due = self._saved[2] or 1
        pending = gc.get_count()[2]  # collections of the middle generation since the last full one
        if pending < due or (not quiet and pending < due * FORCE_AFTER):
            return False
        gc.collect(2)
        self.collections += 1
        return True
