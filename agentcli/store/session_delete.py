"""Deleting a stored session for good (`agentcli sessions delete`): its row and every subagent session below it,
with their messages, tool calls, usage, compactions, hook runs, agent messages and checkpoint rows (the foreign
keys cascade), and the task records of the tree."""

from __future__ import annotations

import sqlite3

from agentcli.store.jobs import WriteJob

_TREE = """WITH RECURSIVE tree(id) AS (
    SELECT id FROM sessions WHERE id = ?
    UNION SELECT s.id FROM sessions s JOIN tree ON s.parent_session_id = tree.id
) SELECT id FROM tree"""


def delete_session_tree(session_id: str) -> WriteJob[list[str]]:
    """Delete the session and its subagents' sessions; the ids deleted (empty when there was none)."""

    def job(conn: sqlite3.Connection) -> list[str]:
        ids = [row[0] for row in conn.execute(_TREE, (session_id,))]
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ", ".join("?" * len(chunk))
            conn.execute(f"DELETE FROM tasks WHERE parent_session_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
        return ids

    return job
