"""Task records in the `tasks` table: a record as its row (and back), and the jobs that save one."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from agentcli.store.jobs import WriteJob, json_text, now_iso, to_iso
from agentcli.store.processes import own_identity
from agentcli.store.records import TaskRecord

_TASK_FIELDS = tuple(TaskRecord.model_fields)
_TASK_JSON = {"chain", "tool_summary", "files_modified", "files_merged", "files_conflicted"}
_TASK_TIMES = {"started_at", "finished_at"}


def task_row(record: TaskRecord) -> tuple[Any, ...]:
    """The record's column values (in `TaskRecord` field order) as they are now: one explicit snapshot.

    Cheap on purpose (a task is saved three times): no copy and no validation, only the three list
    fields become JSON text and the two times ISO text.
    """
    values: list[Any] = []
    for name in _TASK_FIELDS:
        value = getattr(record, name)
        if name == "tool_summary":
            value = json_text([{"tool": t.tool, "count": t.count} for t in value])
        elif name in _TASK_JSON:
            value = json_text(list(value))
        elif name in _TASK_TIMES:
            value = to_iso(value)
        values.append(value)
    return tuple(values)


def task_from_row(row: Mapping[str, Any] | sqlite3.Row) -> TaskRecord:
    """A `tasks` row as a TaskRecord."""
    data = {key: row[key] for key in _TASK_FIELDS}
    for key in _TASK_JSON:
        data[key] = json.loads(data[key]) if data[key] else []
    return TaskRecord.model_validate(data)


_TASK_COLUMNS = (*_TASK_FIELDS, "created_at", "pid", "pid_started")
_UPSERT_TASK = (
    f"INSERT INTO tasks ({', '.join(_TASK_COLUMNS)}) VALUES ({', '.join('?' * len(_TASK_COLUMNS))}) "
    f"ON CONFLICT (task_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*_TASK_FIELDS[1:], "pid", "pid_started"))
)


def save_task(record: TaskRecord) -> WriteJob[None]:
    """Insert or replace a task record as it is now (`task_row`), reading nothing back: the runner's
    writes: running and finished (and queued first, for a task that waits for a slot or runs in the background)."""
    values = (*task_row(record), now_iso(), *own_identity())

    def job(conn: sqlite3.Connection) -> None:
        conn.execute(_UPSERT_TASK, values)

    return job


def upsert_task(record: TaskRecord | Mapping[str, Any]) -> WriteJob[TaskRecord]:
    """Insert or replace a task record; a mapping updates only its keys on the stored record.

    A full record is snapshotted now (`task_row`): later changes to it are not part of this write.
    The job returns the record as written.
    """
    now = now_iso()
    pid, started = own_identity()
    row = task_row(record) if isinstance(record, TaskRecord) else None
    patch = dict(record) if not isinstance(record, TaskRecord) else {}
    if row is None:
        unknown = sorted(set(patch) - set(_TASK_FIELDS))
        if unknown or "task_id" not in patch:
            raise ValueError(f"not a task record: unknown fields {unknown}" if unknown else "task_id is required")

    def job(conn: sqlite3.Connection) -> TaskRecord:
        values = row
        if values is None:
            old = conn.execute("SELECT * FROM tasks WHERE task_id = ?", (patch["task_id"],)).fetchone()
            base = task_from_row(old).model_dump() if old is not None else {}
            values = task_row(TaskRecord.model_validate({**base, **patch}))
        conn.execute(_UPSERT_TASK, (*values, now, pid, started))
        return task_from_row(dict(zip(_TASK_FIELDS, values, strict=True)))

    return job
