"""The SQLite store: one writer thread that owns the write connection, per-thread read connections.

Every write is a job (see `agentcli.store.writes`) queued to the writer thread, which runs the jobs in
submission order, many to one transaction, each inside its own savepoint: a job that raises is rolled
back alone, logged, and re-raised to whoever awaits it; the writer goes on. A job's future resolves
only after its transaction committed, so `await store.write(job)` means "on disk" (WAL,
synchronous=NORMAL: survives a crash of the process). Reads run on a separate connection per calling
thread beside the writer (WAL).

Records of the event stream (`record`) do not wake the writer one by one: the first one arms a short
timer (`BATCH_DELAY`) and the writer commits everything queued by then in one batch, so a burst of
events (fifty subagents starting) costs the event loop a list append each and the writer one wake,
not fifty thread switches. Anything awaited (`write`, `flush`, `submit`) wakes the writer at once and
takes the records queued before it along, in order; `close` (and the interpreter's exit) drains all.

    store = Store.open()                      # data_dir()/agentcli.db, migrated
    store.record(add_message(sid, 0, msg))    # hot path: an append, never blocks
    await store.write(upsert_task(record))    # stored before the caller goes on
    store.close()                             # drains the queue
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentcli.llm import Message
from agentcli.paths import data_dir, ensure_private_dir
from agentcli.store import queries
from agentcli.store.cancellation import cancel_session_tree, mark_running_cancelled
from agentcli.store.jobs import WriteJob
from agentcli.store.processes import claim_session, release_session
from agentcli.store.queries import AmbiguousIdError
from agentcli.store.records import (
    AgentMessageRecord,
    SessionRecord,
    StoredContext,
    TaskRecord,
    ToolCallRecord,
    TreeSpend,
    UsageRollup,
)
from agentcli.store.schema import StoreError, connect, migrate
from agentcli.store.task_writes import upsert_task
from agentcli.store.writes import (
    add_message,
    add_usage,
    create_session,
    finish_session,
    tool_call_finished,
    tool_call_started,
)

if TYPE_CHECKING:
    from agentcli.store.checkpoint_rows import CheckpointRecord

__all__ = [
    "AmbiguousIdError",
    "Store",
    "StoreClosedError",
    "StoreError",
    "WriteJob",
    "add_message",
    "add_usage",
    "cancel_session_tree",
    "claim_session",
    "create_session",
    "default_path",
    "finish_session",
    "mark_running_cancelled",
    "release_session",
    "tool_call_finished",
    "tool_call_started",
    "upsert_task",
]

log = logging.getLogger("agentcli.store")
T = TypeVar("T")
DB_NAME = "agentcli.db"
MAX_BATCH = 256  # jobs per transaction
BATCH_DELAY = 0.2  # seconds a record waits for others to share its commit (an awaited write goes at once)
_NOW, _SOON, _STOP = 0, 1, 2  # what wakes the writer


class StoreClosedError(StoreError):
    """A write was submitted after `close()`."""


def default_path() -> Path:
    """`$XDG_DATA_HOME/agentcli/agentcli.db`."""
    return data_dir() / DB_NAME


def _private_files(path: Path) -> None:
    """Create the database file 0600 (SQLite gives its -wal and -shm the same mode); tighten looser ones."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            if file.stat().st_mode & 0o077:
                file.chmod(0o600)
        except FileNotFoundError:
            continue


def _noop(conn: sqlite3.Connection) -> None:
    """A job that marks a point in the queue (flush)."""


class _Job:
    __slots__ = ("fn", "future")

    def __init__(self, fn: WriteJob[Any], future: Future[Any] | None) -> None:
        self.fn = fn
        self.future = future  # None for a record: nobody waits for it


class Store:
    """The persistence of sessions, messages, tool calls, usage and tasks. Thread- and asyncio-safe."""

    def __init__(self, path: Path, write_conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = write_conn
        self._jobs: collections.deque[_Job] = collections.deque()  # in submission order
        self._wake: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._armed = False  # a _SOON wake is on its way for the records queued
        self._lock = threading.Lock()
        self._closed = False
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self.failure: str | None = None  # the first write that could not be stored (disk full, I/O error)
        self._thread = threading.Thread(target=self._run, name="agentcli-store-writer", daemon=True)
        self._thread.start()
        atexit.register(self.close)  # a daemon thread: drain what is queued before the interpreter ends

    @classmethod
    def open(cls, path: Path | None = None) -> Store:
        """Open (creating directories and the file) and migrate the database; raises StoreError."""
        path = path or default_path()
        try:
            if path == default_path():
                ensure_private_dir(path.parent)  # agentcli's own data dir: 0700
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
            _private_files(path)
            conn = connect(path)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the database {path}: {exc}") from exc
        try:
            migrate(conn, path)
        except sqlite3.Error as exc:
            conn.close()
            raise StoreError(f"cannot use the database {path}: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return cls(path, conn)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writes ---------------------------------------------------------------------------------

    def submit(self, job: WriteJob[T]) -> Future[T]:
        """Queue a write job without blocking and wake the writer; the future resolves after it committed
        (or raises)."""
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise StoreClosedError(f"the store {self.path} is closed")
            self._jobs.append(_Job(job, future))
            self._wake.put(_NOW)
        return future

    def record(self, job: WriteJob[Any]) -> None:
        """Queue a write nobody waits for (an event's row): committed with the next batch, within
        `BATCH_DELAY`, at the next awaited write or at `close`, whichever comes first. A job that fails
        is logged and remembered (`failure`) like any other."""
        with self._lock:
            if self._closed:
                raise StoreClosedError(f"the store {self.path} is closed")
            self._jobs.append(_Job(job, None))
            if not self._armed:
                self._armed = True
                self._wake.put(_SOON)

    async def write(self, job: WriteJob[T]) -> T:
        """Queue a write job and wait until it committed; its exception is raised here.

        Cancelling the awaiting task does not cancel the write: the job still runs and commits.
        """
        return await asyncio.shield(asyncio.wrap_future(self.submit(job)))

    async def flush(self) -> None:
        """Wait until everything queued so far is committed."""
        await self.write(_noop)

    def flush_sync(self, timeout: float | None = None) -> None:
        """Block until everything queued so far is committed; TimeoutError after `timeout` seconds."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("flush_sync() called from a write job would wait for itself")
        self.submit(_noop).result(timeout)

    def close(self, timeout: float | None = None) -> None:
        """Commit everything queued, stop the writer and close every connection. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._wake.put(_STOP)
        atexit.unregister(self.close)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        with self._lock:
            readers, self._readers = self._readers, []
        for conn in readers:
            conn.close()

    def mark_running_cancelled(self) -> Future[tuple[int, int]]:
        """Queue `writes.mark_running_cancelled()` (rows of dead processes → cancelled); (sessions, tasks)."""
        return self.submit(mark_running_cancelled())

    def cancel_session_tree(self, session_id: str, error: str = "cancelled") -> Future[tuple[int, int]]:
        """Queue `writes.cancel_session_tree()` (a session and everything below it → cancelled)."""
        return self.submit(cancel_session_tree(session_id, error))

    def _failed(self, exc: BaseException) -> None:
        """Remember the first persistence failure (the caller reports it once, at the end)."""
        if self.failure is None and isinstance(exc, sqlite3.OperationalError | OSError):
            self.failure = f"cannot write to the database {self.path}: {exc}"

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._closed

    def _run(self) -> None:
        """The writer thread: on each wake, run every job waiting, up to MAX_BATCH per transaction."""
        try:
            stop = False
            while not stop:
                why = self._wake.get()
                if why == _SOON:  # records only: let more join them, unless something is awaited meanwhile
                    with contextlib.suppress(queue.Empty):
                        why = self._wake.get(timeout=BATCH_DELAY)
                stop = why == _STOP
                with self._lock:
                    self._armed = False  # records queued from now on arm a new wake
                self._drain()
            self._drain()
        finally:
            self._conn.close()

    def _drain(self) -> None:
        jobs = self._jobs
        while jobs:
            batch: list[_Job] = []
            with contextlib.suppress(IndexError):
                while len(batch) < MAX_BATCH:
                    batch.append(jobs.popleft())
            try:
                self._execute(batch)
            except BaseException as exc:  # never let the writer die with futures unresolved
                log.error("store writer: batch of %d writes failed: %s", len(batch), exc, exc_info=exc)
                self._failed(exc)
                if self._conn.in_transaction:  # whatever is left of it, so the next batch can begin
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                for job in batch:
                    if job.future is not None and not job.future.done():
                        job.future.set_exception(exc)

    def _execute(self, batch: list[_Job]) -> None:
        conn = self._conn
        for job in batch:
            if job.future is not None:
                job.future.set_running_or_notify_cancel()  # a cancelled future's job still runs
        outcomes: list[tuple[_Job, bool, Any]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for job in batch:
                conn.execute("SAVEPOINT job")
                try:
                    result = job.fn(conn)
                except Exception as exc:
                    conn.execute("ROLLBACK TO job")
                    conn.execute("RELEASE job")
                    log.error("store write %s failed: %s", getattr(job.fn, "__qualname__", job.fn), exc, exc_info=exc)
                    self._failed(exc)
                    outcomes.append((job, False, exc))
                else:
                    conn.execute("RELEASE job")
                    outcomes.append((job, True, result))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        for job, ok, value in outcomes:
            future = job.future
            if future is None or future.cancelled():
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    # --- reads ----------------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreClosedError(f"the store {self.path} is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            with self._lock:
                if self._closed:
                    raise StoreClosedError(f"the store {self.path} is closed")
                conn = connect(self.path, readonly=True)
                self._readers.append(conn)
            self._local.conn = conn
        return conn

    def list_sessions(
        self,
        limit: int = 20,
        include_subagents: bool = False,
        parent_session_id: str | None = None,
        workspace: str | None = None,
    ) -> list[SessionRecord]:
        """Newest first; top-level only unless `include_subagents`, or the children of one session;
        with `workspace`, that workspace's, most recently used first."""
        return queries.list_sessions(self._reader(), limit, include_subagents, parent_session_id, workspace)

    def latest_session(self, workspace: str) -> SessionRecord | None:
        """The top-level session of `workspace` used last (`--continue`)."""
        return queries.latest_session(self._reader(), workspace)

    def tree_tasks(self, session_id: str) -> list[TaskRecord]:
        """Every task of a session's delegation tree, oldest first."""
        return queries.tree_tasks(self._reader(), session_id)

    def get_session(self, ref: str) -> SessionRecord | None:
        """A session by id or unique prefix (None: no match; AmbiguousIdError: several)."""
        return queries.get_session(self._reader(), ref)

    def get_messages(self, session_id: str) -> list[Message]:
        """A session's messages in order."""
        return queries.get_messages(self._reader(), session_id)

    def get_context(self, session_id: str) -> StoredContext:
        """The context a resumed session sends next (the latest summary and what it kept, else everything)."""
        return queries.get_context(self._reader(), session_id)

    def get_tool_calls(self, session_id: str) -> list[ToolCallRecord]:
        """A session's tool calls in the order they started."""
        return queries.get_tool_calls(self._reader(), session_id)

    def list_tasks(
        self, parent_session_id: str | None = None, status: str | None = None, limit: int = 50
    ) -> list[TaskRecord]:
        """Tasks newest first, optionally of one parent session and/or one status."""
        return queries.list_tasks(self._reader(), parent_session_id, status, limit)

    def get_task(self, ref: str, workspace: str | None = None) -> TaskRecord | None:
        """A task by id or unique prefix, of `workspace`'s sessions only when given (None: no match;
        AmbiguousIdError: several)."""
        return queries.get_task(self._reader(), ref, workspace)

    def task_messages(self, task_id: str) -> list[AgentMessageRecord]:
        """The messages a task received, sent, or was continued by, oldest first."""
        return queries.task_messages(self._reader(), task_id)

    def session_spend(self, session_id: str) -> TreeSpend | None:
        """A session's own usage and its delegated subtree's, split as the ledger splits them."""
        return queries.session_spend(self._reader(), session_id)

    def sessions_spend(self, session_ids: Sequence[str]) -> dict[str, TreeSpend]:
        """`session_spend` of many sessions in one query (by exact id; unknown ids are left out)."""
        return queries.sessions_spend(self._reader(), session_ids)

    def session_usage_rollup(self, session_id: str) -> UsageRollup | None:
        """Usage of a session and all its descendant sessions."""
        return queries.session_usage_rollup(self._reader(), session_id)

    def checkpoints(self, session_id: str) -> list[CheckpointRecord]:
        """A session's checkpoints, oldest first."""
        from agentcli.store.checkpoint_rows import list_checkpoints

        return list_checkpoints(self._reader(), session_id)
