"""Read queries over a (read) connection: sessions, messages, tool calls, tasks, usage roll-ups."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from agentcli.llm.base import Message
from agentcli.store.records import SessionRecord, TaskRecord, ToolCallRecord, UsageRollup
from agentcli.store.writes import task_from_row


class AmbiguousIdError(LookupError):
    """An id prefix matches more than one row."""

    def __init__(self, kind: str, prefix: str, matches: list[str]) -> None:
        shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
        super().__init__(f"'{prefix}' matches several {kind}s ({shown}): give more characters")
        self.prefix = prefix
        self.matches = matches


def _session(row: sqlite3.Row) -> SessionRecord:
    data = dict(row)
    data.pop("pid_started", None)
    return SessionRecord.model_validate(data)


def _resolve(conn: sqlite3.Connection, table: str, key: str, ref: str, kind: str) -> sqlite3.Row | None:
    """The row whose key is `ref`, or the one whose key starts with it; raises if several do."""
    if not ref:
        return None
    row: sqlite3.Row | None = conn.execute(f"SELECT * FROM {table} WHERE {key} = ?", (ref,)).fetchone()
    if row is not None:
        return row
    rows = conn.execute(
        f"SELECT * FROM {table} WHERE substr({key}, 1, ?) = ? ORDER BY {key} LIMIT 6", (len(ref), ref)
    ).fetchall()
    if len(rows) > 1:
        raise AmbiguousIdError(kind, ref, [r[key] for r in rows])
    return rows[0] if rows else None


def list_sessions(
    conn: sqlite3.Connection,
    limit: int = 20,
    include_subagents: bool = False,
    parent_session_id: str | None = None,
) -> list[SessionRecord]:
    """Newest first; top-level sessions only unless `include_subagents`, or the children of one session."""
    where, params = "", []
    if parent_session_id is not None:
        where, params = "WHERE parent_session_id = ?", [parent_session_id]
    elif not include_subagents:
        where = "WHERE parent_session_id IS NULL"
    rows = conn.execute(
        f"SELECT * FROM sessions {where} ORDER BY created_at DESC, id DESC LIMIT ?", (*params, limit)
    ).fetchall()
    return [_session(r) for r in rows]


def get_session(conn: sqlite3.Connection, ref: str) -> SessionRecord | None:
    """A session by id or unique id prefix; None when nothing matches."""
    row = _resolve(conn, "sessions", "id", ref, "session")
    return _session(row) if row is not None else None


def get_messages(conn: sqlite3.Connection, session_id: str) -> list[Message]:
    """A session's history in order."""
    rows = conn.execute("SELECT content FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))
    return [Message.model_validate_json(r[0]) for r in rows]


def _tool_call(row: sqlite3.Row) -> ToolCallRecord:
    data: dict[str, Any] = dict(row)
    data["args"] = json.loads(data["args"] or "{}")
    data["files_modified"] = json.loads(data["files_modified"] or "[]")
    data["is_error"] = bool(data["is_error"])
    return ToolCallRecord.model_validate(data)


def get_tool_calls(conn: sqlite3.Connection, session_id: str) -> list[ToolCallRecord]:
    """A session's tool calls in the order they started."""
    rows = conn.execute("SELECT * FROM tool_calls WHERE session_id = ? ORDER BY rowid", (session_id,))
    return [_tool_call(r) for r in rows]


def list_tasks(
    conn: sqlite3.Connection,
    parent_session_id: str | None = None,
    status: str | None = None,
    limit: int = 50,
) -> list[TaskRecord]:
    """Tasks newest first, optionally of one parent session and/or in one status."""
    clauses, params = [], []
    if parent_session_id is not None:
        clauses.append("parent_session_id = ?")
        params.append(parent_session_id)
    if status is not None:
        clauses.append("status = ?")
        params.append(status)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = conn.execute(
        f"SELECT * FROM tasks {where} ORDER BY created_at DESC, task_id DESC LIMIT ?", (*params, limit)
    ).fetchall()
    return [task_from_row(r) for r in rows]


def get_task(conn: sqlite3.Connection, ref: str) -> TaskRecord | None:
    """A task by id or unique id prefix; None when nothing matches."""
    row = _resolve(conn, "tasks", "task_id", ref, "task")
    return task_from_row(row) if row is not None else None


def session_usage_rollup(conn: sqlite3.Connection, session_id: str) -> UsageRollup | None:
    """Usage of a session plus every descendant session (via parent_session_id); None if unknown."""
    row = conn.execute(
        """WITH RECURSIVE tree(id) AS (
             SELECT id FROM sessions WHERE id = ?
             UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_session_id = t.id)
           SELECT count(*), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
                  sum(cache_write_tokens), sum(cost_usd), sum(turns)
           FROM sessions JOIN tree USING (id)""",
        (session_id,),
    ).fetchone()
    if not row or not row[0]:
        return None
    return UsageRollup(
        session_id=session_id,
        sessions=row[0],
        input_tokens=row[1] or 0,
        output_tokens=row[2] or 0,
        cache_read_tokens=row[3] or 0,
        cache_write_tokens=row[4] or 0,
        cost_usd=row[5],
        turns=row[6] or 0,
    )
