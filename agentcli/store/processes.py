"""Which process holds a row: each live session and task row names the process that wrote it (pid and start
time), so a row of a process that is gone can be told apart, and a stored session is resumed by one process at
a time."""

from __future__ import annotations

import os
import sqlite3
from functools import cache
from pathlib import Path

from agentcli.store.jobs import WriteJob


def _proc_stat(pid: int) -> list[str] | None:
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return data.rsplit(")", 1)[-1].split()  # fields after the command name: state, ppid, ...


def process_start(pid: int) -> int | None:
    """Start time of a process in clock ticks since boot (Linux), to tell a reused pid apart."""
    fields = _proc_stat(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


@cache
def own_identity() -> tuple[int, int | None]:
    """(pid, start time) of this process, stored in every live row it writes."""
    pid = os.getpid()
    return pid, process_start(pid)


def process_alive(pid: int | None, started: int | None) -> bool:
    """Whether the process that wrote a row still runs (same pid and, where known, same start time)."""
    if pid is None:
        return False
    if pid == os.getpid():
        return started is None or started == own_identity()[1]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    except OSError:
        return False
    fields = _proc_stat(pid)
    if fields is None:
        return True  # no /proc: trust the signal probe
    if fields[0] in ("Z", "X"):
        return False  # exited, not yet reaped
    return started is None or len(fields) <= 19 or int(fields[19]) == started


def claim_session(session_id: str) -> WriteJob[int | None]:
    """Take a stored session for this process (resume): None once it is ours, else the pid of the live
    process that holds it. In the writer's transaction, so two processes never both get it."""
    pid, started = own_identity()

    def job(conn: sqlite3.Connection) -> int | None:
        row = conn.execute("SELECT pid, pid_started FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            return None
        holder, holder_started = row
        if holder is not None and (holder, holder_started) != (pid, started) and process_alive(holder, holder_started):
            return int(holder)
        conn.execute("UPDATE sessions SET pid = ?, pid_started = ? WHERE id = ?", (pid, started, session_id))
        return None

    return job


def release_session(session_id: str) -> WriteJob[None]:
    """This process is done with a session (it started or resumed another): anyone may resume it now."""
    pid, started = own_identity()

    def job(conn: sqlite3.Connection) -> None:
        conn.execute(
            "UPDATE sessions SET pid = NULL, pid_started = NULL WHERE id = ? AND pid = ? AND pid_started IS ?",
            (session_id, pid, started),
        )

    return job
