"""`bench/tui_stream.py --diagnose`: where a slow keystroke echo comes from.

While the turn runs it notes (through patches undone afterwards) every event-loop callback over 12 ms, every
screen layout-and-paint over 8 ms with the number of widgets laid out, each cyclic-GC pass over 5 ms, and every
message the screen handles. After the run it prints, in the streaming window: the keys echoed after more than
50 ms, the gaps of more than 40 ms between painted frames with the messages the screen handled meanwhile (a
screen paints only once its queue is empty: a stream of refresh messages holds frames back although no single
callback is slow), and the slow callbacks, paints and collections, each at its offset in the window.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import itertools
import time
from collections.abc import Iterator
from typing import Any
from unittest.mock import patch

from textual.screen import Screen

SLOW_CALLBACK = 0.012
SLOW_PAINT = 0.008
SLOW_GC = 0.005
SLOW_KEY = 0.050
FRAME_GAP = 0.040


class Diagnosis:
    """Notes taken during one run; `report` prints those in the streaming window."""

    def __init__(self) -> None:
        self.slow: list[tuple[float, float, str]] = []  # (start, duration, what)
        self.screen_messages: list[tuple[float, str]] = []
        self._gc_started = 0.0

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        took = time.perf_counter() - self._gc_started
        if took > SLOW_GC:
            self.slow.append((self._gc_started, took, f"GC of generation {info['generation']}"))

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Observe the event loop, the screen and the collector while the block runs."""
        run = asyncio.events.Handle._run
        refresh_layout = Screen._refresh_layout
        dispatch = Screen._dispatch_message
        notes = self

        def timed_run(handle: Any) -> None:
            start = time.perf_counter()
            run(handle)
            took = time.perf_counter() - start
            if took > SLOW_CALLBACK:
                notes.slow.append((start, took, f"callback {handle._callback!r:.100}"))

        def timed_layout(screen: Any, *args: Any, **kwargs: Any) -> None:
            start = time.perf_counter()
            refresh_layout(screen, *args, **kwargs)
            took = time.perf_counter() - start
            if took > SLOW_PAINT:
                notes.slow.append((start, took, f"layout and paint of {len(screen._compositor.full_map)} widgets"))

        async def noted_dispatch(screen: Any, message: Any) -> Any:
            widget = getattr(message, "widget", None)
            notes.screen_messages.append(
                (time.perf_counter(), f"{type(message).__name__}{':' + type(widget).__name__ if widget else ''}"))
            return await dispatch(screen, message)

        gc.callbacks.append(self._gc)
        try:
            with (patch.object(asyncio.events.Handle, "_run", timed_run),
                  patch.object(Screen, "_refresh_layout", timed_layout),
                  patch.object(Screen, "_dispatch_message", noted_dispatch)):
                yield
        finally:
            gc.callbacks.remove(self._gc)

    def report(self, start: float, end: float, sent: list[float], echoed: list[float], frames: list[float]) -> None:
        """Print what was noted between `start` and `end` (perf_counter times), at offsets from `start`."""
        def at(when: float) -> str:
            return f"+{(when - start) * 1000:.0f} ms"

        for key_sent, shown in zip(sent, echoed, strict=False):
            if start <= key_sent <= end and shown - key_sent > SLOW_KEY:
                print(f"    slow echo: key at {at(key_sent)} shown after {(shown - key_sent) * 1000:.0f} ms")
        for before, after in itertools.pairwise(frames):
            if start <= before <= end and after - before > FRAME_GAP:
                handled = collections.Counter(m for t, m in self.screen_messages if before <= t <= after)
                print(f"    no frame painted from {at(before)} for {(after - before) * 1000:.0f} ms; the screen"
                      f" handled {sum(handled.values())} messages meanwhile: {handled.most_common(6)}")
        for when, took, what in sorted(self.slow):
            if start <= when <= end:
                print(f"    {what} at {at(when)}: {took * 1000:.1f} ms")
