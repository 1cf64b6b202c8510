"""Read queries over a (read) connection: sessions, messages, tool calls, tasks, usage roll-ups."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from agentcli.llm import Message
from agentcli.store.records import (
    AgentMessageRecord,
    SessionRecord,
    SpendSums,
    StoredContext,
    TaskRecord,
    ToolCallRecord,
    TreeSpend,
    UsageRollup,
)
from agentcli.store.schema import StoreError
from agentcli.store.task_writes import task_from_row


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
    workspace: str | None = None,
) -> list[SessionRecord]:
    """Newest first; top-level sessions only unless `include_subagents`, or the children of one session;
    with `workspace`, only that workspace's, most recently used first."""
    clauses: list[str] = []
    params: list[object] = []
    if parent_session_id is not None:
        clauses.append("parent_session_id = ?")
        params.append(parent_session_id)
    elif not include_subagents:
        clauses.append("parent_session_id IS NULL")
    if workspace is not None:
        clauses.append("workspace = ?")
        params.append(workspace)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    order = "updated_at DESC, id DESC" if workspace is not None else "created_at DESC, id DESC"
    rows = conn.execute(f"SELECT * FROM sessions {where} ORDER BY {order} LIMIT ?", (*params, limit)).fetchall()
    return [_session(r) for r in rows]


def latest_session(conn: sqlite3.Connection, workspace: str) -> SessionRecord | None:
    """The top-level session of `workspace` used last (`agentcli --continue`), None when it has none."""
    found = list_sessions(conn, limit=1, workspace=workspace)
    return found[0] if found else None


def get_session(conn: sqlite3.Connection, ref: str) -> SessionRecord | None:
    """A session by id or unique id prefix; None when nothing matches."""
    row = _resolve(conn, "sessions", "id", ref, "session")
    return _session(row) if row is not None else None


def get_messages(conn: sqlite3.Connection, session_id: str) -> list[Message]:
    """A session's history in order (without what a rewind took back)."""
    rows = conn.execute(
        "SELECT seq, content FROM messages WHERE session_id = ? AND rewound_at IS NULL ORDER BY seq", (session_id,)
    )
    return [_message(session_id, seq, content) for seq, content in rows]


def _message(session_id: str, seq: int, content: str) -> Message:
    """A stored message; a row that no longer reads as one is a `StoreError` saying which (one line)."""
    try:
        return Message.model_validate_json(content)
    except ValueError as exc:
        from agentcli.text import one_line

        problem = one_line(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 200)
        raise StoreError(f"message {seq} of session {session_id} in the store is damaged ({problem})") from None


def get_context(conn: sqlite3.Connection, session_id: str) -> StoredContext:
    """What a resumed session sends next: after a summary compaction, the summary (as the opening user
    message) and the messages it kept; else the whole history. `next_seq` continues the stored numbering."""
    last = conn.execute("SELECT max(seq) FROM messages WHERE session_id = ?", (session_id,)).fetchone()[0]
    compaction = conn.execute(
        "SELECT kept_from_seq, summary FROM compactions WHERE session_id = ? AND rewound_at IS NULL "
        "ORDER BY id DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    kept_from = compaction[0] if compaction is not None else 0
    rows = conn.execute(
        "SELECT seq, content FROM messages WHERE session_id = ? AND seq >= ? AND rewound_at IS NULL ORDER BY seq",
        (session_id, kept_from),
    )
    messages = [_message(session_id, seq, content) for seq, content in rows]
    if compaction is not None:
        messages.insert(0, Message.user(compaction[1]))
    next_seq = last + 1 if last is not None else 0
    return StoredContext(messages=messages, next_seq=next_seq, compacted=compaction is not None)


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


def task_messages(conn: sqlite3.Connection, task_id: str) -> list[AgentMessageRecord]:
    """The messages a task received, sent, or was started by (a message that continued a finished task)."""
    rows = conn.execute(
        "SELECT * FROM agent_messages WHERE recipient_task_id = ? OR sender_task_id = ? OR continued_as = ? "
        "ORDER BY id",
        (task_id, task_id, task_id),
    )
    return [AgentMessageRecord.model_validate(dict(r)) for r in rows]


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


def tree_tasks(conn: sqlite3.Connection, session_id: str) -> list[TaskRecord]:
    """Every task of a session's delegation tree (its own and its subagents'), oldest first."""
    rows = conn.execute(
        """WITH RECURSIVE tree(id) AS (
             SELECT ? UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_session_id = t.id)
           SELECT * FROM tasks WHERE parent_session_id IN (SELECT id FROM tree)
           ORDER BY created_at, task_id""",
        (session_id,),
    ).fetchall()
    return [task_from_row(r) for r in rows]


def get_task(conn: sqlite3.Connection, ref: str, workspace: str | None = None) -> TaskRecord | None:
    """A task by id or unique id prefix; None when nothing matches. With `workspace`, only the tasks of that
    workspace's sessions are looked at (and named when a prefix is ambiguous)."""
    if workspace is None:
        row = _resolve(conn, "tasks", "task_id", ref, "task")
        return task_from_row(row) if row is not None else None
    if not ref:
        return None
    scoped = "SELECT t.* FROM tasks t JOIN sessions s ON s.id = t.parent_session_id WHERE s.workspace = ? AND "
    found = conn.execute(scoped + "t.task_id = ?", (workspace, ref)).fetchone()
    if found is None:
        rows = conn.execute(scoped + "substr(t.task_id, 1, ?) = ? ORDER BY t.task_id LIMIT 6",
                            (workspace, len(ref), ref)).fetchall()
        if len(rows) > 1:
            raise AmbiguousIdError("task", ref, [r["task_id"] for r in rows])
        found = rows[0] if rows else None
    return task_from_row(found) if found is not None else None


_SPEND_COLUMNS = (
    "requests", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
)


def session_spend(conn: sqlite3.Connection, session_id: str) -> TreeSpend | None:
    """A session's own requests and those of every session below it (via parent_session_id); None if unknown.

    Summed from the per-request `usage` rows in one statement, so both halves are of one snapshot.
    """
    return sessions_spend(conn, [session_id]).get(session_id)


def sessions_spend(conn: sqlite3.Connection, session_ids: Sequence[str]) -> dict[str, TreeSpend]:
    """`session_spend` of many sessions in one statement (a listing's): exact ids in, the known ones out.

    Each session's tree is walked on its own (a listed session may also sit in another listed one's
    tree), and each tree's rows are split into the session's own and the ones below it.
    """
    if not session_ids:
        return {}
    rows = conn.execute(
        """WITH RECURSIVE tree(root, id) AS (
             SELECT id, id FROM sessions WHERE id IN (SELECT value FROM json_each(?1))
             UNION SELECT t.root, s.id FROM sessions s JOIN tree t ON s.parent_session_id = t.id),
           per AS (
             SELECT session_id, count(*) AS requests, sum(input_tokens) AS input_tokens,
                    sum(output_tokens) AS output_tokens, sum(cache_read_tokens) AS cache_read_tokens,
                    sum(cache_write_tokens) AS cache_write_tokens, sum(reasoning_tokens) AS reasoning_tokens,
                    sum(cost_usd) AS cost_usd
             FROM usage WHERE session_id IN (SELECT id FROM tree) GROUP BY session_id)
           SELECT t.root, s.id = t.root AS own, count(*) AS sessions, sum(s.turns) AS turns,
                  sum(per.requests), sum(per.input_tokens), sum(per.output_tokens), sum(per.cache_read_tokens),
                  sum(per.cache_write_tokens), sum(per.reasoning_tokens), sum(per.cost_usd)
           FROM tree t JOIN sessions s ON s.id = t.id LEFT JOIN per ON per.session_id = s.id
           GROUP BY t.root, own""",
        (json.dumps(list(session_ids)),),
    ).fetchall()
    by_root: dict[str, list[sqlite3.Row]] = {}
    for row in rows:
        by_root.setdefault(row[0], []).append(row)
    return {root: _tree_spend(root, found) for root, found in by_root.items()}


def _tree_spend(session_id: str, rows: list[sqlite3.Row]) -> TreeSpend:
    """One tree's rows of `sessions_spend` (one for its own session, one for those below, if any)."""
    sessions, turns = sum(r[2] for r in rows), sum(r[3] or 0 for r in rows)
    halves: dict[bool, SpendSums] = {}
    for row in rows:
        counts = {name: row[4 + i] or 0 for i, name in enumerate(_SPEND_COLUMNS)}
        halves[bool(row[1])] = SpendSums(**counts, cost_usd=row[10])  # sum() of no known price is NULL
    return TreeSpend(
        session_id=session_id,
        sessions=sessions,
        turns=turns,
        own=halves.get(True, SpendSums()),
        delegated=halves.get(False, SpendSums()),
    )


def session_usage_rollup(conn: sqlite3.Connection, session_id: str) -> UsageRollup | None:
    """Usage of a session plus every descendant session: `session_spend`'s own and delegated added."""
    spent = session_spend(conn, session_id)
    return usage_rollup(spent) if spent is not None else None


def usage_rollup(spent: TreeSpend) -> UsageRollup:
    """A session tree's split spend as one rollup: own and delegated added."""
    session_id, own, delegated = spent.session_id, spent.own, spent.delegated
    cost = delegated.cost_usd if own.cost_usd is None else own.cost_usd + (delegated.cost_usd or 0.0)
    return UsageRollup(
        session_id=session_id,
        sessions=spent.sessions,
        input_tokens=own.input_tokens + delegated.input_tokens,
        output_tokens=own.output_tokens + delegated.output_tokens,
        cache_read_tokens=own.cache_read_tokens + delegated.cache_read_tokens,
        cache_write_tokens=own.cache_write_tokens + delegated.cache_write_tokens,
        cost_usd=cost,
        turns=spent.turns,
    )
