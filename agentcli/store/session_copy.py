"""A stored session copied under a new id (Claude Code's `--fork-session`): its row, its messages, its
compactions and its checkpoints, so the copy resumes with the same history while the original stays as it was."""

from __future__ import annotations

import sqlite3

from agentcli.store.jobs import WriteJob, now_iso
from agentcli.store.processes import own_identity


def copy_session(source: str, copy: str) -> WriteJob[None]:
    """Store `source`'s history under `copy`, owned by this process (nothing when `source` is not stored)."""
    now = now_iso()
    pid, started = own_identity()

    def job(conn: sqlite3.Connection) -> None:
        done = conn.execute(
            """INSERT INTO sessions (id, parent_session_id, task_id, depth, agent, agent_type, workspace, model,
                                     provider, status, title, created_at, updated_at, pid, pid_started)
               SELECT ?, parent_session_id, task_id, depth, agent, agent_type, workspace, model, provider, 'running',
                      title, ?, ?, ?, ? FROM sessions WHERE id = ?""",
            (copy, now, now, pid, started, source),
        )
        if not done.rowcount:
            return
        conn.execute("""INSERT INTO messages (session_id, seq, role, content, created_at, rewound_at)
                        SELECT ?, seq, role, content, created_at, rewound_at FROM messages WHERE session_id = ?""",
                     (copy, source))
        conn.execute("""INSERT INTO compactions (session_id, kept_from_seq, summary, trigger, tokens_before,
                                                 tokens_after, created_at, rewound_at)
                        SELECT ?, kept_from_seq, summary, trigger, tokens_before, tokens_after, created_at, rewound_at
                        FROM compactions WHERE session_id = ? ORDER BY id""", (copy, source))
        conn.execute("""INSERT INTO checkpoints (session_id, seq, kind, message_id, prompt, workspace, before_tree,
                                                 after_tree, files, skipped, mode, rewound_at, created_at,
                                                 finished_at)
                        SELECT ?, seq, kind, message_id, prompt, workspace, before_tree, after_tree, files, skipped,
                               mode, rewound_at, created_at, finished_at
                        FROM checkpoints WHERE session_id = ? ORDER BY id""", (copy, source))

    return job
