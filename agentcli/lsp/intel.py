"""`RootIntel`: the `CodeIntel` of the agents of one root (the session's workspace, or a worktree), over the
session's `LanguageServers`: syncing what they read, the findings an edit introduced, the LSP tool's questions."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.lsp.convert import diagnostic, read_text
from agentcli.tools import Diagnostic, EditDiagnostics

if TYPE_CHECKING:
    from agentcli.lsp.client import ServerConnection
    from agentcli.lsp.manager import LanguageServers, Slot
    from agentcli.tools import Sandbox

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Before:
    """`before_edit`'s token: per path, the version the server had and what it had published for it."""

    versions: dict[Path, int] = field(default_factory=dict)
    found: dict[Path, tuple[Diagnostic, ...]] = field(default_factory=dict)


class RootIntel:
    """The language servers as the tools of agents in `workspace` see them."""

    def __init__(self, servers: LanguageServers, workspace: Path, sandbox: Sandbox | None) -> None:
        self.servers = servers
        self.workspace = workspace
        self.sandbox = sandbox

    def slot(self, path: Path) -> Slot | None:
        """The server slot for `path`, or None."""
        return self.servers.slot_for(path, self.workspace, self.sandbox)

    def _bound(self, slot: Slot) -> float:
        """How long an edit waits for `slot`: longer while its server starts, not at all while it is stalled."""
        conn = slot.conn
        if slot.stalled():
            return 0.0
        if conn is None or conn.dead or not conn.ready.is_set() or conn.seq == 0:
            return self.servers.first_wait_seconds
        return self.servers.wait_seconds

    # ---- touch -------------------------------------------------------------------------------------------------

    def touch(self, path: Path) -> None:
        """Sync `path`'s text on the disk to its server in the background."""
        try:
            slot = self.slot(path)
            if slot is None:
                return
            self.servers.spawn(asyncio.get_running_loop().create_task(self._touch(slot, path)))
        except Exception:  # no loop, or anything else: a read never fails for this
            log.debug("lsp touch of %s failed", path, exc_info=True)

    async def _touch(self, slot: Slot, path: Path) -> None:
        try:
            conn = await self.servers.connection(slot, self.servers.first_wait_seconds)
            if conn is not None and (text := await read_text(path)) is not None:
                conn.sync(path, text)
        except Exception:
            log.debug("lsp sync of %s failed", path, exc_info=True)

    # ---- edits -------------------------------------------------------------------------------------------------

    async def before_edit(self, paths: list[Path]) -> object:
        """Open (or refresh) `paths` with their text before the edit and take what their server published."""
        before = Before()
        for slot, group in self._by_slot(paths).items():
            deadline = time.monotonic() + self._bound(slot)
            conn = await self.servers.connection(slot, deadline - time.monotonic())
            if conn is None:
                if slot.conn is not None and not slot.conn.dead:
                    slot.stalled_at = -1  # still starting after the wait: the edit goes on without it until ready
                continue
            waits: dict[Path, tuple[int, int]] = {}
            for path in group:
                text = await read_text(path)
                if text is not None:
                    waits[path] = conn.sync(path, text)
            found = await self._collect(conn, waits, deadline)
            for path, (version, _seen) in waits.items():
                before.versions[path] = version
                if path in found:
                    before.found[path] = found[path]
        return before

    async def after_edit(self, paths: list[Path], before: object) -> EditDiagnostics | None:
        """Sync the written `paths`, wait (bounded) for their diagnostics, return those the edit introduced."""
        token = before if isinstance(before, Before) else Before()
        groups = self._by_slot(paths)
        if not groups:
            return None
        introduced: list[Diagnostic] = []
        notes: list[str] = []
        names: list[str] = []
        for slot, group in groups.items():
            found, note = await self._after_one(slot, group, token)
            introduced.extend(found)
            if note:
                notes.append(note)
            names.append(slot.spec.name)
        return EditDiagnostics(tuple(introduced), " ".join(notes), ", ".join(dict.fromkeys(names)))

    async def _after_one(self, slot: Slot, group: list[Path], token: Before) -> tuple[list[Diagnostic], str]:
        bound = self._bound(slot)
        deadline = time.monotonic() + bound
        conn = await self.servers.connection(slot, bound)
        if conn is None:
            return [], slot.note(self._absent(slot, self.servers.first_wait_seconds if bound == 0 else bound))
        waits: dict[Path, tuple[int, int]] = {}
        baseline: dict[Path, tuple[Diagnostic, ...]] = {}
        for path in group:
            text = await read_text(path)
            if text is None:
                continue
            old = token.versions.get(path)
            if path not in token.found and old is not None and (late := conn.current(path, old, -1)) is not None:
                token.found[path] = tuple(diagnostic(d, path, self.workspace, conn) for d in late.diagnostics)
            baseline[path] = token.found.get(path, ())
            waits[path] = conn.sync(path, text)
            conn.save(path, text)
        found = await self._collect(conn, waits, deadline)
        if len(found) < len(waits):
            if conn.dead:
                return [], slot.note(self._absent(slot, bound))
            if bound > 0:
                slot.stalled_at = conn.seq if conn.ready.is_set() else -1
                return [], slot.note(f"no diagnostics within {bound:g} s; edits go on without them until it answers.")
            return [], ""
        introduced: list[Diagnostic] = []
        for path, after in found.items():
            introduced.extend(_introduced(baseline.get(path, ()), after))
        return introduced, ""

    async def _collect(self, conn: ServerConnection, waits: dict[Path, tuple[int, int]],
                       deadline: float) -> dict[Path, tuple[Diagnostic, ...]]:
        """The diagnostics of each path at its version (asked for, or as published), as many as come before
        `deadline`."""
        from agentcli.lsp.pull import pull, pulls  # with lsprotocol: only once a server runs

        found: dict[Path, tuple[Diagnostic, ...]] = {}
        if pulls(conn):
            for path in waits:
                try:
                    items = await pull(conn, path, deadline - time.monotonic())
                except (TimeoutError, ConnectionError):
                    return found
                except LookupError:  # it refused: wait for its publishes from here on
                    break
                found[path] = tuple(diagnostic(d, path, self.workspace, conn) for d in items)
            else:
                return found
        while True:
            for path, (version, seen) in waits.items():
                if path not in found and (published := conn.current(path, version, seen)) is not None:
                    found[path] = tuple(diagnostic(d, path, self.workspace, conn) for d in published.diagnostics)
            left = deadline - time.monotonic()
            if len(found) == len(waits) or left <= 0 or conn.dead:
                return found
            await conn.changed(left)

    def _absent(self, slot: Slot, bound: float) -> str:
        """Why `slot` gave nothing (it could not start, exited, or is still starting), for a note that the tools show
        after the server's name."""
        if slot.failure:
            return f"{slot.failure}; edits go on without its diagnostics."
        if slot.conn is not None and slot.conn.dead:
            return f"exited (code {slot.conn.exit_code}); it restarts when next needed."
        return f"not ready within {bound:g} s; edits go on without its diagnostics until it is."

    def _by_slot(self, paths: list[Path]) -> dict[Slot, list[Path]]:
        groups: dict[Slot, list[Path]] = {}
        for path in paths:
            slot = self.slot(path)
            if slot is not None:
                groups.setdefault(slot, []).append(path)
        return groups

    # ---- the LSP tool ------------------------------------------------------------------------------------------

    async def query(self, operation: str, path: Path | None, line: int, column: int, query: str) -> str:
        """The LSP tool's answer (`lsp.query`)."""
        from agentcli.lsp.query import answer

        return await answer(self, operation, path, line, column, query)


def _introduced(before: tuple[Diagnostic, ...], after: tuple[Diagnostic, ...]) -> list[Diagnostic]:
    """The findings of `after` beyond those of `before` (a multiset difference on `Diagnostic.key`)."""
    left = Counter(d.key() for d in before)
    new: list[Diagnostic] = []
    for found in after:
        if left[found.key()] > 0:
            left[found.key()] -= 1
        else:
            new.append(found)
    return new
