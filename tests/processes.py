"""Whether a process still runs, as the tests that check nothing is left behind need it (Linux `/proc`)."""

from __future__ import annotations

import time


def alive(pid: int) -> bool:
    """Whether `pid` runs. A zombie (exited, not yet reaped by its parent) or a dead process does not."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def wait_dead(pid: int, seconds: float = 10) -> bool:
    """Poll until `pid` no longer runs; whether it stopped within `seconds`."""
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
