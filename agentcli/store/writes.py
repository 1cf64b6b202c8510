"""Typed write jobs of a session's life: each helper returns a job for `Store.submit` (fire-and-forget) or
`await Store.write` (`store/jobs`: what a job is). Its messages, compactions, tool calls, hook runs, agent
messages and usage; tasks are in `store/task_writes`, cancellation in `store/cancellation`, which process holds
a session in `store/processes`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from agentcli.events import AgentMessageEvent, HookRunEvent
from agentcli.llm import Message, Usage
from agentcli.store.jobs import WriteJob, json_text, now_iso
from agentcli.store.processes import own_identity

TITLE_MAX = 80


def title_of(text: str) -> str | None:
    """First non-empty line of a prompt, at most 80 characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1] + "…"
    return None


# --- sessions, messages, tool calls, usage ------------------------------------------------------------


def ensure_session(conn: sqlite3.Connection, session_id: str, now: str) -> None:
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
        ensure_session(conn, session_id, now)
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
        ensure_session(conn, session_id, now)
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
        ensure_session(conn, session_id, now)
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
    args_json = json_text(dict(args))

    def job(conn: sqlite3.Connection) -> None:
        ensure_session(conn, session_id, now)
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
    files = json_text(list(files_modified or []))

    def job(conn: sqlite3.Connection) -> None:
        ensure_session(conn, session_id, now)
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
        ensure_session(conn, event.session_id, now)
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
        ensure_session(conn, event.session_id, now)
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
        ensure_session(conn, session_id, now)
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
