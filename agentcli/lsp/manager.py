"""The session's language servers: one per (server, root), started on first need, shared by every agent of the
session tree, restarted with backoff after a crash, all shut down when the session closes.

Each agent's `ToolContext.code_intel` is a `RootIntel` (`lsp.intel`) over these for its root: the session's
workspace for most, its worktree for an isolated subagent (a server of its own for that root, started lazily and
counted against `max_servers` like any other).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.lsp.specs import ServerSpec, configured_servers, root_for, server_for, with_plugin_servers

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.lsp.client import ServerConnection
    from agentcli.plugins import Plugin
    from agentcli.tools import Sandbox

log = logging.getLogger(__name__)
MAX_STARTS = 4  # a server that keeps exiting is started at most this often per root
BACKOFF_SECONDS = (0.0, 1.0, 4.0, 15.0)  # before the 1st, 2nd, … start: a crash loop costs little


@dataclass(eq=False)
class Slot:
    """One (server, root): its connection while one runs, its starts, and whether its trouble was said."""

    spec: ServerSpec
    root: Path
    sandbox: Sandbox | None
    conn: ServerConnection | None = None
    starting: asyncio.Task[None] | None = None
    starts: int = 0
    last_start: float = 0.0
    noted: bool = False  # a note about it was given (once per server)
    stalled_at: int | None = None  # the publish count when it last failed to answer in time
    failure: str = ""  # why it is not running (could not start, exited)

    def stalled(self) -> bool:
        """It failed to answer in time and has published nothing since: edits go on without it."""
        if self.stalled_at is None or self.conn is None or self.conn.dead:
            return False
        # -1: it was still starting (cleared once it is ready); else the publish count it had then
        cleared = self.conn.ready.is_set() if self.stalled_at < 0 else self.conn.seq > self.stalled_at
        if cleared:
            self.stalled_at = None
        return not cleared

    def note(self, text: str) -> str:
        """`text` the first time this server has something to say, then nothing."""
        if self.noted:
            return ""
        self.noted = True
        return text


class LanguageServers:
    """The language servers of one session tree (`[lsp]`)."""

    def __init__(self, settings: Settings, env: Mapping[str, str], sandbox: Sandbox | None = None,
                 specs: list[ServerSpec] | None = None, *, trusted: bool = True) -> None:
        cfg = settings.lsp
        self.enabled = cfg.enabled
        self.wait_seconds = cfg.wait_seconds
        self.first_wait_seconds = cfg.first_wait_seconds
        self.max_servers = cfg.max_servers
        self.specs = specs if specs is not None else configured_servers(settings)
        self.tables = cfg.servers  # `[lsp.servers.NAME]`: a plugin server's name changes it too
        self.env = dict(env)
        self.sandbox = sandbox
        self.trusted = trusted  # the workspace is trusted: servers that may run its code start unsandboxed too
        self.slots: dict[tuple[str, Path], Slot] = {}
        self.backoff = BACKOFF_SECONDS  # seconds before each start of a slot's server
        self._closed = False
        self._background: set[asyncio.Task[None]] = set()

    def add_plugin_servers(self, plugins: Iterable[Plugin]) -> None:
        """The plugins' language servers join (`specs.with_plugin_servers`)."""
        self.specs = with_plugin_servers(self.specs, plugins, self.tables)

    def slot_for(self, path: Path, workspace: Path, sandbox: Sandbox | None) -> Slot | None:
        """The slot of the server for `path` (made, not started), or None: no server for it, or `max_servers`."""
        if not self.enabled or self._closed:
            return None
        spec = server_for(self.specs, path, self.trusted or (sandbox is not None and sandbox.active))
        if spec is None:
            return None
        root = root_for(spec, path, workspace)
        slot = self.slots.get((spec.name, root))
        if slot is None:
            if self.max_servers <= len(self.slots):
                return None
            slot = self.slots[(spec.name, root)] = Slot(spec, root, sandbox)
        return slot

    def running(self) -> list[Slot]:
        """The slots whose server is up."""
        return [slot for slot in self.slots.values() if slot.conn is not None and not slot.conn.dead]

    async def connection(self, slot: Slot, timeout: float) -> ServerConnection | None:
        """`slot`'s initialized server, started (or restarted, after its backoff) if need be, waiting at most
        `timeout` for it to be ready; None when it is not (`slot.failure` says why, when it is gone)."""
        conn = slot.conn
        if conn is None or (conn.dead and slot.starting is None):
            if not self._may_start(slot):
                return None
            conn = self._start(slot)
        if conn.ready.is_set() and not conn.dead:
            return conn
        starting = slot.starting
        if starting is not None:
            await asyncio.wait({starting}, timeout=max(timeout, 0))
        return conn if conn.ready.is_set() and not conn.dead else None

    def _may_start(self, slot: Slot) -> bool:
        if self._closed:
            return False
        if slot.starts >= MAX_STARTS:
            gave_up = f"not started again ({MAX_STARTS} starts)"
            if gave_up not in slot.failure:
                slot.failure = f"{slot.failure or 'it keeps exiting'}; {gave_up}"
            return False
        wait = self.backoff[min(slot.starts, len(self.backoff) - 1)]
        return time.monotonic() - slot.last_start >= wait

    def _start(self, slot: Slot) -> ServerConnection:
        from agentcli.lsp.client import ServerConnection

        argv = slot.spec.argv()
        assert argv is not None  # server_for chose a found one
        env = {**self.env, **slot.spec.env}
        conn = ServerConnection(slot.spec, slot.root, argv, env, slot.sandbox)
        slot.conn, slot.starts, slot.last_start, slot.failure = conn, slot.starts + 1, time.monotonic(), ""
        slot.starting = asyncio.create_task(self._run_start(slot, conn))
        log.info("starting language server %s in %s (start %d)", slot.spec.name, slot.root, slot.starts)
        return conn

    async def _run_start(self, slot: Slot, conn: ServerConnection) -> None:
        try:
            await conn.start()
        except Exception as exc:  # cannot start, or the handshake failed: it is stopped, said once
            slot.failure = f"could not start: {exc}" if not conn.dead else _exit_words(conn)
            log.warning("language server %s (%s): %s", slot.spec.name, slot.root, slot.failure)
            await conn.close()
        finally:
            slot.starting = None

    def spawn(self, job: asyncio.Task[None]) -> None:
        """Keep a background job (a touch's sync) until it ends."""
        self._background.add(job)
        job.add_done_callback(self._background.discard)

    async def aclose(self) -> None:
        """Shut every server down (shutdown/exit, then the process group stopped); none is started after."""
        self._closed = True
        for job in list(self._background):
            job.cancel()
        slots = list(self.slots.values())
        for slot in slots:
            if slot.starting is not None:
                slot.starting.cancel()
        await asyncio.gather(*(slot.conn.close() for slot in slots if slot.conn is not None),
                             return_exceptions=True)


def _exit_words(conn: ServerConnection) -> str:
    return f"exited (code {conn.exit_code})" if conn.exit_code is not None else "exited"
