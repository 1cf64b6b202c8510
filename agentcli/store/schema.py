"""Connection settings and the ordered schema migrations (`PRAGMA user_version` = migrations applied)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agentcli.status import MERGE_OUTCOMES, SESSION_STATUSES, TASK_STATUSES, TOOL_CALL_STATUSES

BUSY_TIMEOUT_MS = 10_000


class StoreError(Exception):
    """The database cannot be used; `str()` is a one-line message for the person."""


def _in(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


_V1 = f"""
CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    parent_session_id  TEXT,
    task_id            TEXT,
    depth              INTEGER NOT NULL DEFAULT 0,
    agent              TEXT NOT NULL DEFAULT 'main',
    agent_type         TEXT,
    workspace          TEXT NOT NULL DEFAULT '',
    model              TEXT NOT NULL DEFAULT '',
    provider           TEXT,
    status             TEXT NOT NULL DEFAULT 'running' CHECK (status IN ({_in(SESSION_STATUSES)})),
    title              TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    finished_at        TEXT,
    error              TEXT,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL,
    turns              INTEGER NOT NULL DEFAULT 0,
    pid                INTEGER,
    pid_started        INTEGER
);
CREATE INDEX sessions_by_created ON sessions (created_at DESC);
CREATE INDEX sessions_by_parent ON sessions (parent_session_id);
CREATE INDEX sessions_live ON sessions (status) WHERE status = 'running';

CREATE TABLE messages (
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

CREATE TABLE tool_calls (
    id              TEXT NOT NULL,
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    args            TEXT NOT NULL DEFAULT '{{}}',
    summary         TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT 'running' CHECK (status IN ({_in(TOOL_CALL_STATUSES)})),
    output          TEXT,
    is_error        INTEGER NOT NULL DEFAULT 0,
    duration_ms     REAL,
    files_modified  TEXT NOT NULL DEFAULT '[]',
    started_at      TEXT,
    finished_at     TEXT,
    PRIMARY KEY (session_id, id)
);

CREATE TABLE usage (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id         TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    provider           TEXT NOT NULL,
    model              TEXT NOT NULL,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL,
    created_at         TEXT NOT NULL
);
CREATE INDEX usage_by_session ON usage (session_id);

CREATE TABLE tasks (
    task_id              TEXT PRIMARY KEY,
    parent_session_id    TEXT,
    parent_task_id       TEXT,
    parent_tool_call_id  TEXT,
    child_session_id     TEXT,
    depth                INTEGER NOT NULL DEFAULT 1,
    chain                TEXT NOT NULL DEFAULT '[]',
    subagent_type        TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    prompt               TEXT NOT NULL DEFAULT '',
    model_used           TEXT,
    status               TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ({_in(TASK_STATUSES)})),
    result               TEXT,
    error                TEXT,
    tool_summary         TEXT NOT NULL DEFAULT '[]',
    files_modified       TEXT NOT NULL DEFAULT '[]',
    time_ms              REAL,
    tool_calls           INTEGER NOT NULL DEFAULT 0,
    input_tokens         INTEGER NOT NULL DEFAULT 0,
    output_tokens        INTEGER NOT NULL DEFAULT 0,
    cost_usd             REAL,
    started_at           TEXT,
    finished_at          TEXT,
    created_at           TEXT NOT NULL,
    pid                  INTEGER,
    pid_started          INTEGER
);
CREATE INDEX tasks_by_parent ON tasks (parent_session_id, created_at);
CREATE INDEX tasks_by_created ON tasks (created_at DESC);
CREATE INDEX tasks_by_child ON tasks (child_session_id);
CREATE INDEX tasks_live ON tasks (status) WHERE status IN ('queued', 'running');
"""


def _execute_all(conn: sqlite3.Connection, script: str) -> None:
    """Run each statement of `script` (inside the migration's transaction: no `executescript`, which commits)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v1(conn: sqlite3.Connection) -> None:
    _execute_all(conn, _V1)


_V2 = """
ALTER TABLE tool_calls ADD COLUMN code TEXT;
ALTER TABLE tool_calls ADD COLUMN short_result TEXT;
ALTER TABLE tasks ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0
"""


def _v2(conn: sqlite3.Connection) -> None:
    """A tool call's SPEC §4 error code and short result; a task's cache tokens apart from its input tokens."""
    _execute_all(conn, _V2)


def _v3(conn: sqlite3.Connection) -> None:
    """A request's reasoning tokens (the part of its output a provider reports as reasoning), as the ledger has them."""
    conn.execute("ALTER TABLE usage ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0")


_V4 = """
CREATE TABLE compactions (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    kept_from_seq  INTEGER NOT NULL,
    summary        TEXT NOT NULL,
    trigger        TEXT NOT NULL DEFAULT 'auto',
    tokens_before  INTEGER NOT NULL DEFAULT 0,
    tokens_after   INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL
);
CREATE INDEX compactions_by_session ON compactions (session_id, id)
"""


def _v4(conn: sqlite3.Connection) -> None:
    """Summary compactions: a resumed session's context is the latest summary plus the messages it kept."""
    _execute_all(conn, _V4)


_V5 = """
CREATE TABLE hook_runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    event         TEXT NOT NULL,
    command       TEXT NOT NULL,
    source        TEXT NOT NULL DEFAULT '',
    matcher       TEXT NOT NULL DEFAULT '',
    tool_name     TEXT,
    tool_call_id  TEXT,
    outcome       TEXT NOT NULL CHECK (outcome IN ('ok', 'blocked', 'error', 'timeout')),
    exit_code     INTEGER,
    reason        TEXT NOT NULL DEFAULT '',
    stdout        TEXT NOT NULL DEFAULT '',
    stderr        TEXT NOT NULL DEFAULT '',
    duration_ms   REAL,
    created_at    TEXT NOT NULL
);
CREATE INDEX hook_runs_by_session ON hook_runs (session_id, id)
"""


def _v5(conn: sqlite3.Connection) -> None:
    """Hook runs (`agentcli.hooks`): every configured command that ran, what it said and decided."""
    _execute_all(conn, _V5)


def _v6(conn: sqlite3.Connection) -> None:
    """A usage row counted from what streamed before its request was cut off (no provider count): 1."""
    conn.execute("ALTER TABLE usage ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0")


_V7 = """
CREATE TABLE agent_messages (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id         TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    recipient_task_id  TEXT,
    sender             TEXT NOT NULL,
    sender_task_id     TEXT,
    text               TEXT NOT NULL,
    delivery           TEXT NOT NULL CHECK (delivery IN ('queued', 'continued')),
    continued_as       TEXT,
    created_at         TEXT NOT NULL
);
CREATE INDEX agent_messages_by_recipient ON agent_messages (recipient_task_id, id);
CREATE INDEX agent_messages_by_sender ON agent_messages (sender_task_id, id)
"""


def _v7(conn: sqlite3.Connection) -> None:
    """Messages between the agents of a tree (SendMessage, the person's /msg): who sent what to whom."""
    _execute_all(conn, _V7)


def _v8(conn: sqlite3.Connection) -> None:
    """A fork (`fork_context`): how many of its parent's messages the task started from (0: not a fork)."""
    conn.execute("ALTER TABLE tasks ADD COLUMN inherited_messages INTEGER NOT NULL DEFAULT 0")


def _v9(conn: sqlite3.Connection) -> None:
    """A task answered from an earlier task's stored result (`subagents.result_cache`): that task's id."""
    conn.execute("ALTER TABLE tasks ADD COLUMN cached_from TEXT")


def _v10(conn: sqlite3.Connection) -> None:
    """A task isolated in a git worktree: how its merge back ended, its branch, the files merged and in conflict."""
    _execute_all(conn, f"""
ALTER TABLE tasks ADD COLUMN merge TEXT CHECK (merge IS NULL OR merge IN ({_in(MERGE_OUTCOMES)}));
ALTER TABLE tasks ADD COLUMN branch TEXT;
ALTER TABLE tasks ADD COLUMN files_merged TEXT NOT NULL DEFAULT '[]';
ALTER TABLE tasks ADD COLUMN files_conflicted TEXT NOT NULL DEFAULT '[]'
""")


_V11 = """
CREATE TABLE checkpoints (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('prompt', 'rewind')),
    message_id   TEXT,
    prompt       TEXT NOT NULL DEFAULT '',
    workspace    TEXT NOT NULL,
    before_tree  TEXT NOT NULL,
    after_tree   TEXT,
    files        TEXT NOT NULL DEFAULT '[]',
    skipped      TEXT NOT NULL DEFAULT '[]',
    target_id    INTEGER,
    mode         TEXT,
    rewound_at   TEXT,
    created_at   TEXT NOT NULL,
    finished_at  TEXT
);
CREATE INDEX checkpoints_by_session ON checkpoints (session_id, id);
ALTER TABLE messages ADD COLUMN rewound_at TEXT;
ALTER TABLE compactions ADD COLUMN rewound_at TEXT
"""


def _v11(conn: sqlite3.Connection) -> None:
    """Checkpoints (`agentcli.checkpoints`): the workspace's files before and after each prompt and each rewind; a
    message or compaction a rewind of the conversation took back keeps its row, marked with the rewind's time."""
    _execute_all(conn, _V11)


Migration = Callable[[sqlite3.Connection], None]
# Append only: migration N (1-based) brings the database from user_version N-1 to N.
MIGRATIONS: list[Migration] = [_v1, _v2, _v3, _v4, _v5, _v6, _v7, _v8, _v9, _v10, _v11]


def schema_version() -> int:
    """The version this code writes."""
    return len(MIGRATIONS)


def _scrubbed(params: Any) -> Any:
    from agentcli.safe_text import scrub_deep

    return scrub_deep(params)


class SafeTextConnection(sqlite3.Connection):
    """A connection that stores text SQLite cannot encode (lone surrogates) with U+FFFD instead of failing.

    The common case pays nothing: parameters are only rewritten after sqlite3 refused them.
    """

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except UnicodeEncodeError:
            return super().execute(sql, _scrubbed(parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        rows = list(parameters)
        try:
            return super().executemany(sql, rows)
        except UnicodeEncodeError:
            return super().executemany(sql, [_scrubbed(row) for row in rows])


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with the store's pragmas."""
    conn = sqlite3.connect(
        path,
        isolation_level=None,
        check_same_thread=False,
        timeout=BUSY_TIMEOUT_MS / 1000,
        factory=SafeTextConnection,
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    if readonly:
        conn.execute("PRAGMA query_only = ON")
    return conn


def migrate(conn: sqlite3.Connection, path: Path) -> int:
    """Put the database in WAL mode and apply pending migrations in one transaction; returns the version."""
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise StoreError(f"cannot put {path} in WAL mode (journal_mode is {mode})")
    target = schema_version()
    if conn.execute("PRAGMA user_version").fetchone()[0] == target:
        return target  # the common case: nothing to do, no write lock taken
    conn.execute("BEGIN IMMEDIATE")  # another process may be migrating: read the version under the lock
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > target:
            raise StoreError(
                f"{path} has schema version {version}, newer than this agentcli knows ({target}): upgrade agentcli"
            )
        for number in range(version + 1, target + 1):
            MIGRATIONS[number - 1](conn)
        conn.execute(f"PRAGMA user_version = {target}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return target
