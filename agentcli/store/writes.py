"""Typed write jobs: each helper returns a job for `Store.submit` (fire-and-forget) or `await Store.write`.

A job is a callable run by the store's writer thread with the write connection, inside a transaction
the writer manages (jobs never commit). Arguments are captured, and serialized, when the helper is
called, so a job records the state at that moment and its timestamps are the caller's.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from agentcli.events import AgentMessageEvent, HookRunEvent
from agentcli.llm.base import Message, Usage
from agentcli.store.records import TaskRecord

T = TypeVar("T")
WriteJob = Callable[[sqlite3.Connection], T]

TITLE_MAX = 80
_TASK_FIELDS = tuple(TaskRecord.model_fields)
_TASK_JSON = {"chain", "tool_summary", "files_modified", "files_merged", "files_conflicted"}
_TASK_TIMES = {"started_at", "finished_at"}


def now_iso() -> str:
    """Now in UTC, ISO-8601 with microseconds (a fixed width, so text order is time order)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def to_iso(value: datetime | None) -> str | None:
    """A datetime as the store's UTC text; a naive one is taken as local time."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def title_of(text: str) -> str | None:
    """First non-empty line of a prompt, at most 80 characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1] + "…"
    return None


# --- process identity: which rows belong to a process that is gone -------------------------------


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


# --- sessions, messages, tool calls, usage ------------------------------------------------------------


def _ensure_session(conn: sqlite3.Connection, session_id: str, now: str) -> None:
    """A stub row so a child row never fails its foreign key when the session's start was missed."""
    pid, started = own_identity()
    conn.execute(
        "INSERT OR IGNORE INTO sessions (id, created_at, updated_at, pid, pid_started) VALUES (?, ?, ?, ?, ?)",
        (session_id, now, now, pid, started),
    )


def create_session(
    session_id: str,
    *,
    model: str = "",
    workspace: str = "",
    agent: str = "main",
    depth: int = 0,
    parent_session_id: str | None = None,
    task_id: str | None = None,
    agent_type: str | None = None,
    provider: str | None = None,
) -> WriteJob[None]:
    """Start (or restart, when resumed) a session: status `running`, owned by this process."""
    now = now_iso()
    pid, started = own_identity()
    row = (session_id, parent_session_id, task_id, depth, agent, agent_type, workspace, model, provider)

    def job(conn: sqlite3.Connection) -> None:
        conn.execute(
            """INSERT INTO sessions (id, parent_session_id, task_id, depth, agent, agent_type, workspace, model,
                                     provider, status, created_at, updated_at, pid, pid_started)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)
               ON CONFLICT (id) DO UPDATE SET
                 parent_session_id = coalesce(excluded.parent_session_id, parent_session_id),
                 task_id = coalesce(excluded.task_id, task_id),
                 depth = excluded.depth, agent = excluded.agent,
                 agent_type = coalesce(excluded.agent_type, agent_type),
                 workspace = excluded.workspace,
                 model = CASE WHEN excluded.provider IS NOT NULL OR provider IS NULL THEN excluded.model
                              ELSE model END,
                 provider = coalesce(excluded.provider, provider),
                 status = 'running', finished_at = NULL, error = NULL, updated_at = excluded.updated_at,
                 pid = excluded.pid, pid_started = excluded.pid_started""",
            (*row, now, now, pid, started),
        )

    return job


def _message_json(message: Message) -> str:
    try:
        return message.model_dump_json()
    except ValueError:  # text that is not valid Unicode (a lone surrogate from the model): stored as U+FFFD
        from agentcli.safe_text import scrub_deep

        return json.dumps(scrub_deep(message.model_dump(mode="json")), ensure_ascii=False, separators=(",", ":"))


def add_inherited_messages(session_id: str, messages: Sequence[Message]) -> WriteJob[None]:
    """Store the messages a fork's session starts with (its parent's, from seq 0), so the stored context
    resumes as it ran; they neither title the session nor count as its turns."""
    now = now_iso()
    rows = [(session_id, seq, m.role, _message_json(m), now) for seq, m in enumerate(messages)]

    def job(conn: sqlite3.Connection) -> None:
        _ensure_session(conn, session_id, now)
        conn.executemany(
            "INSERT OR IGNORE INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)", rows
        )

    return job


def add_message(session_id: str, seq: int, message: Message) -> WriteJob[None]:
    """Store message `seq` of a session; a user prompt titles the session and reopens a finished one."""
    now = now_iso()
    content = _message_json(message)
    role = message.role
    title = title_of(message.text()) if role == "user" else None

    def job(conn: sqlite3.Connection) -> None:
        _ensure_session(conn, session_id, now)
        inserted = conn.execute(
            "INSERT OR IGNORE INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
            (session_id, seq, role, content, now),
        ).rowcount
        if not inserted:
            conn.execute(
                "UPDATE messages SET role = ?, content = ? WHERE session_id = ? AND seq = ?",
                (role, content, session_id, seq),
            )
        if title is not None:  # a new prompt: the session is running (again)
            conn.execute(
                """UPDATE sessions SET title = coalesce(title, ?), status = 'running', finished_at = NULL,
                   error = NULL, updated_at = ? WHERE id = ?""",
                (title, now, session_id),
            )
        else:
            turns = 1 if role == "assistant" and inserted else 0
            conn.execute("UPDATE sessions SET turns = turns + ?, updated_at = ? WHERE id = ?", (turns, now, session_id))

    return job


def add_compaction(
    session_id: str, kept_from_seq: int, summary: str, *, trigger: str, tokens_before: int, tokens_after: int
) -> WriteJob[None]:
    """Record a summary compaction: from now on the session's context opens with `summary`."""
    now = now_iso()

    def job(conn: sqlite3.Connection) -> None:
        _ensure_session(conn, session_id, now)
        conn.execute(
            """INSERT INTO compactions (session_id, kept_from_seq, summary, trigger, tokens_before, tokens_after,
                                        created_at) VALUES (?, ?, ?, ?, ?, ?, ?)""",
            (session_id, kept_from_seq, summary, trigger, tokens_before, tokens_after, now),
        )

    return job


def tool_call_started(
    session_id: str, tool_call_id: str, name: str, args: Mapping[str, Any], summary: str = ""
) -> WriteJob[None]:
    """A tool call began: a `running` row."""
    now = now_iso()
    args_json = _json(dict(args))

    def job(conn: sqlite3.Connection) -> None:
        _ensure_session(conn, session_id, now)
        conn.execute(
            """INSERT INTO tool_calls (id, session_id, name, args, summary, status, started_at)
               VALUES (?, ?, ?, ?, ?, 'running', ?)
               ON CONFLICT (session_id, id) DO UPDATE SET name = excluded.name, args = excluded.args,
                 summary = excluded.summary, status = 'running', started_at = excluded.started_at""",
            (tool_call_id, session_id, name, args_json, summary, now),
        )

    return job


def tool_call_finished(
    session_id: str,
    tool_call_id: str,
    name: str,
    *,
    is_error: bool,
    output: str,
    duration_ms: float | None = None,
    files_modified: list[str] | None = None,
    code: str | None = None,
    short_result: str | None = None,
) -> WriteJob[None]:
    """A tool call ended: status `ok` or `error`, the full output, its SPEC §4 code and short result."""
    now = now_iso()
    status = "error" if is_error else "ok"
    files = _json(list(files_modified or []))

    def job(conn: sqlite3.Connection) -> None:
        _ensure_session(conn, session_id, now)
        conn.execute(
            """INSERT INTO tool_calls (id, session_id, name, status, output, is_error, duration_ms, files_modified,
                                       code, short_result, started_at, finished_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (session_id, id) DO UPDATE SET status = excluded.status, output = excluded.output,
                 is_error = excluded.is_error, duration_ms = excluded.duration_ms,
                 files_modified = excluded.files_modified, code = excluded.code,
                 short_result = excluded.short_result, finished_at = excluded.finished_at""",
            (tool_call_id, session_id, name, status, output, int(is_error), duration_ms, files, code, short_result,
             now, now),
        )

    return job


def add_hook_run(event: HookRunEvent) -> WriteJob[None]:
    """A hook command ran (`HookRunEvent`): one `hook_runs` row of the session it ran for."""
    now = now_iso()
    row = (event.session_id, event.hook_event, event.command, event.source, event.matcher, event.tool_name,
           event.tool_call_id, event.outcome, event.exit_code, event.reason, event.stdout, event.stderr,
           event.duration_ms, now)

    def job(conn: sqlite3.Connection) -> None:
        _ensure_session(conn, event.session_id, now)
        conn.execute(
            """INSERT INTO hook_runs (session_id, event, command, source, matcher, tool_name, tool_call_id, outcome,
                                      exit_code, reason, stdout, stderr, duration_ms, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            row,
        )

    return job


def add_agent_message(event: AgentMessageEvent) -> WriteJob[None]:
    """A message to an agent of the tree (`AgentMessageEvent`): one `agent_messages` row of the recipient's session
    (the sender's, when the message continued a finished task)."""
    now = now_iso()
    row = (event.session_id, event.recipient_task_id, event.sender, event.sender_task_id, event.text, event.delivery,
           event.continued_as, now)

    def job(conn: sqlite3.Connection) -> None:
        _ensure_session(conn, event.session_id, now)
        conn.execute(
            """INSERT INTO agent_messages (session_id, recipient_task_id, sender, sender_task_id, text, delivery,
                                           continued_as, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            row,
        )

    return job


def add_usage(
    session_id: str, provider: str, model: str, usage: Usage, cost_usd: float | None = None, estimated: bool = False
) -> WriteJob[None]:
    """One request's usage: a ledger row, added to the session's running totals (cost None = unknown;
    `estimated`: counted from what streamed before the request was cut off)."""
    now = now_iso()
    tokens = (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens)

    def job(conn: sqlite3.Connection) -> None:
        _ensure_session(conn, session_id, now)
        conn.execute(
            """INSERT INTO usage (session_id, provider, model, input_tokens, output_tokens, cache_read_tokens,
                                  cache_write_tokens, reasoning_tokens, cost_usd, estimated, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (session_id, provider, model, *tokens, usage.reasoning_tokens, cost_usd, int(estimated), now),
        )
        conn.execute(
            """UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
                 cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
                 cost_usd = CASE WHEN ? IS NULL THEN cost_usd ELSE coalesce(cost_usd, 0) + ? END,
                 model = CASE WHEN provider IS NULL THEN ? ELSE model END,
                 provider = coalesce(provider, ?), updated_at = ?
               WHERE id = ?""",
            (*tokens, cost_usd, cost_usd, model, provider, now, session_id),
        )

    return job


def finish_session(session_id: str, status: str, error: str | None = None, turns: int | None = None) -> WriteJob[None]:
    """A run ended with `status`; tool calls still marked running are marked cancelled."""
    now = now_iso()

    def job(conn: sqlite3.Connection) -> None:
        conn.execute(
            """UPDATE sessions SET status = ?, error = ?, finished_at = ?, updated_at = ?, turns = coalesce(?, turns)
               WHERE id = ?""",
            (status, error, now, now, turns, session_id),
        )
        conn.execute(
            "UPDATE tool_calls SET status = 'cancelled', finished_at = ? WHERE session_id = ? AND status = 'running'",
            (now, session_id),
        )

    return job


# --- tasks ----------------------------------------------------------------------------------------


def task_row(record: TaskRecord) -> tuple[Any, ...]:
    """The record's column values (in `TaskRecord` field order) as they are now: one explicit snapshot.

    Cheap on purpose (a task is saved three times): no copy and no validation, only the three list
    fields become JSON text and the two times ISO text.
    """
    values: list[Any] = []
    for name in _TASK_FIELDS:
        value = getattr(record, name)
        if name == "tool_summary":
            value = _json([{"tool": t.tool, "count": t.count} for t in value])
        elif name in _TASK_JSON:
            value = _json(list(value))
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
    writes, three per task."""
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


# --- cancellation ---------------------------------------------------------------------------------


def _cancel(conn: sqlite3.Connection, session_ids: list[str], task_ids: list[str], error: str) -> None:
    now = now_iso()
    conn.executemany(
        """UPDATE sessions SET status = 'cancelled', finished_at = ?, updated_at = ?, error = coalesce(error, ?)
           WHERE id = ? AND status IN ('running', 'queued')""",
        [(now, now, error, sid) for sid in session_ids],
    )
    conn.executemany(
        "UPDATE tool_calls SET status = 'cancelled', finished_at = ? WHERE session_id = ? AND status = 'running'",
        [(now, sid) for sid in session_ids],
    )
    conn.executemany(
        """UPDATE tasks SET status = 'cancelled', finished_at = coalesce(finished_at, ?), error = coalesce(error, ?)
           WHERE task_id = ? AND status IN ('running', 'queued')""",
        [(now, error, tid) for tid in task_ids],
    )


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


INTERRUPTED = "interrupted: the agentcli process ended"  # the error of rows a process left running when it died


def mark_running_cancelled() -> WriteJob[tuple[int, int]]:
    """Mark running/queued sessions and tasks whose process is gone as cancelled; returns (sessions, tasks)."""

    def job(conn: sqlite3.Connection) -> tuple[int, int]:
        live = "status IN ('running', 'queued')"
        sessions = conn.execute(f"SELECT id, pid, pid_started FROM sessions WHERE {live}").fetchall()
        tasks = conn.execute(f"SELECT task_id, pid, pid_started FROM tasks WHERE {live}").fetchall()
        dead_sessions = [r[0] for r in sessions if not process_alive(r[1], r[2])]
        dead_tasks = [r[0] for r in tasks if not process_alive(r[1], r[2])]
        _cancel(conn, dead_sessions, dead_tasks, INTERRUPTED)
        return len(dead_sessions), len(dead_tasks)

    return job


def cancel_session_tree(session_id: str, error: str = "cancelled") -> WriteJob[tuple[int, int]]:
    """Cancel a session, every session below it and their running tasks; returns (sessions, tasks)."""

    def job(conn: sqlite3.Connection) -> tuple[int, int]:
        tree = [
            r[0]
            for r in conn.execute(
                """WITH RECURSIVE tree(id) AS (
                     SELECT ? UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_session_id = t.id)
                   SELECT id FROM tree""",
                (session_id,),
            )
        ]
        marks = ",".join("?" * len(tree))
        tasks = [
            r[0]
            for r in conn.execute(
                f"""SELECT task_id FROM tasks WHERE status IN ('running', 'queued')
                    AND (parent_session_id IN ({marks}) OR child_session_id IN ({marks}))""",
                (*tree, *tree),
            )
        ]
        live = [
            r[0]
            for r in conn.execute(
                f"SELECT id FROM sessions WHERE status IN ('running', 'queued') AND id IN ({marks})", tree
            )
        ]
        _cancel(conn, live, tasks, error)
        return len(live), len(tasks)

    return job
