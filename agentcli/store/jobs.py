"""What every write job shares: its type, the store's timestamps, and JSON text for its columns.

A job is a callable run by the store's writer thread with the write connection, inside a transaction
the writer manages (jobs never commit). Arguments are captured, and serialized, when the helper that
makes the job is called, so a job records the state at that moment and its timestamps are the caller's.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

T = TypeVar("T")
WriteJob = Callable[[sqlite3.Connection], T]


def now_iso() -> str:
    """Now in UTC, ISO-8601 with microseconds (a fixed width, so text order is time order)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def to_iso(value: datetime | None) -> str | None:
    """A datetime as the store's UTC text; a naive one is taken as local time."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def json_text(value: Any) -> str:
    """A column's JSON text (non-ASCII kept; anything JSON has no type for as its `str`)."""
    return json.dumps(value, ensure_ascii=False, default=str)
