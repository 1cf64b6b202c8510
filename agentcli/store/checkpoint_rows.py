"""Checkpoint rows (`agentcli.checkpoints`): the trees before and after each prompt and each rewind of a session,
and a rewind of the conversation (its later messages and compactions marked, never deleted) and its undoing."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

from agentcli.store.jobs import WriteJob, json_text, now_iso
from agentcli.store.writes import ensure_session


@dataclass(frozen=True, slots=True)
class CheckpointRecord:
    """One checkpoint: the files before (and, once it ended, after) one prompt or rewind of a session."""

    id: int
    session_id: str
    seq: int  # the stored number of the prompt's message (a rewind: the session's next number then)
    kind: str  # prompt | rewind
    message_id: str | None
    prompt: str
    workspace: str
    before_tree: str
    after_tree: str | None
    files: list[str] = field(default_factory=list)  # what changed between before and after
    skipped: list[str] = field(default_factory=list)  # "path: why", what the before snapshot left out
    target_id: int | None = None  # a rewind: the checkpoint it went back to
    mode: str | None = None  # a rewind: both | conversation | code
    rewound_at: str | None = None  # a rewind of the conversation: the mark on the messages it took back
    created_at: str = ""
    finished_at: str | None = None


def add_checkpoint(session_id: str, *, seq: int, kind: str, workspace: str, before_tree: str, prompt: str = "",
                   message_id: str | None = None, skipped: list[str] | None = None, target_id: int | None = None,
                   mode: str | None = None) -> WriteJob[int]:
    """Record a checkpoint taken before a prompt or a rewind; its row id."""
    now = now_iso()

    def job(conn: sqlite3.Connection) -> int:
        ensure_session(conn, session_id, now)
        cursor = conn.execute(
            """INSERT INTO checkpoints (session_id, seq, kind, message_id, prompt, workspace, before_tree, skipped,
                                        target_id, mode, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (session_id, seq, kind, message_id, prompt, workspace, before_tree, json_text(skipped or []), target_id,
             mode, now),
        )
        return int(cursor.lastrowid or 0)

    return job


def finish_checkpoint(checkpoint_id: int, after_tree: str, files: list[str],
                      rewound_at: str | None = None) -> WriteJob[None]:
    """Record the tree after the prompt or rewind, the files that changed meanwhile, and the mark a rewind of the
    conversation left on its messages."""
    now = now_iso()

    def job(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE checkpoints SET after_tree = ?, files = ?, rewound_at = ?, finished_at = ? WHERE id = ?",
                     (after_tree, json_text(files), rewound_at, now, checkpoint_id))

    return job


def rewind_messages(session_id: str, from_seq: int) -> WriteJob[tuple[str, int]]:
    """Take the session's messages from `from_seq` on (and the compactions made since that message) out of its
    history, marked with this rewind's time so it can be undone: (the mark, how many messages)."""
    now = now_iso()

    def job(conn: sqlite3.Connection) -> tuple[str, int]:
        first = conn.execute("SELECT created_at FROM messages WHERE session_id = ? AND seq = ?",
                             (session_id, from_seq)).fetchone()
        cursor = conn.execute(
            "UPDATE messages SET rewound_at = ? WHERE session_id = ? AND seq >= ? AND rewound_at IS NULL",
            (now, session_id, from_seq))
        if first is not None:
            conn.execute("""UPDATE compactions SET rewound_at = ? WHERE session_id = ? AND created_at >= ?
                            AND rewound_at IS NULL""", (now, session_id, first[0]))
        return now, cursor.rowcount

    return job


def unrewind_messages(session_id: str, stamp: str) -> WriteJob[int]:
    """Put back what the rewind marked `stamp` took out of the session's history; how many messages came back."""

    def job(conn: sqlite3.Connection) -> int:
        cursor = conn.execute("UPDATE messages SET rewound_at = NULL WHERE session_id = ? AND rewound_at = ?",
                              (session_id, stamp))
        conn.execute("UPDATE compactions SET rewound_at = NULL WHERE session_id = ? AND rewound_at = ?",
                     (session_id, stamp))
        return cursor.rowcount

    return job


def list_checkpoints(conn: sqlite3.Connection, session_id: str) -> list[CheckpointRecord]:
    """A session's checkpoints, oldest first."""
    rows = conn.execute(
        """SELECT id, session_id, seq, kind, message_id, prompt, workspace, before_tree, after_tree, files, skipped,
                  target_id, mode, rewound_at, created_at, finished_at
           FROM checkpoints WHERE session_id = ? ORDER BY id""", (session_id,))
    return [CheckpointRecord(**{**dict(row), "files": _list(row["files"]), "skipped": _list(row["skipped"])})
            for row in rows]


def _list(text: str) -> list[str]:
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [str(item) for item in value] if isinstance(value, list) else []
