"""Cancelling stored rows: those a process left running when it died, and a session's whole tree."""

from __future__ import annotations

import sqlite3

from agentcli.store.jobs import WriteJob, now_iso
from agentcli.store.processes import process_alive


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
