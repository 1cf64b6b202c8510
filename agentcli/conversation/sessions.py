"""Sessions that last (--continue, --resume, /resume, /new, --fork-session): listing, finding, resuming, forking
and releasing stored sessions (`stored_sessions`). A mixin of `Conversation`: it works on the conversation's
store, session and runner, declared here."""

from __future__ import annotations

import logging
from abc import abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.agent import Ledger
from agentcli.conversation.stored_sessions import (
    Resumed,
    ResumeError,
    find_session,
    fork_stored,
    stored_model,
    stored_spent,
    take_session,
)

if TYPE_CHECKING:
    from agentcli.agent import Session
    from agentcli.config import Settings
    from agentcli.conversation.turn_hooks import PromptHooks
    from agentcli.llm import ResolvedModel
    from agentcli.store import SessionRecord, Store
    from agentcli.subagents import SubagentRunner

log = logging.getLogger("agentcli.conversation")


class StoredSessions:
    """The conversation's stored sessions (the conversation's parts it uses below)."""

    settings: Settings
    workspace: Path
    store: Store | None
    session: Session
    runner: SubagentRunner
    model: ResolvedModel
    prompt_hooks: PromptHooks

    @property
    @abstractmethod
    def busy(self) -> bool:
        """Whether a turn is running."""

    @abstractmethod
    async def clear(self) -> None:
        """Start a fresh session: new history, new task table."""

    @abstractmethod
    def set_model(self, spec: str) -> ResolvedModel:
        """Switch the main agent's model for the next turns."""

    def _store(self) -> Store:
        if self.store is None:
            raise ResumeError("sessions are not stored (no database), so none can be resumed")
        return self.store

    def recent_sessions(self, limit: int = 20) -> list[SessionRecord]:
        """This workspace's top-level sessions, most recently used first (the pickers)."""
        return self._store().list_sessions(limit=limit, workspace=str(self.workspace))

    def spent(self, session_id: str) -> Ledger:
        """A stored session tree's usage as a ledger (zero when it has none)."""
        return stored_spent(self._store(), session_id)

    def find_session(self, ref: str | None) -> SessionRecord:
        """The session `ref` names (an id or a unique prefix), or with None this workspace's latest one."""
        return find_session(self._store(), self.workspace, ref)

    async def resume(self, ref: str | None, *, keep_model: bool = False) -> Resumed:
        """Make a stored session the current one (`None`: this workspace's latest): its model context (from
        the latest compaction on), its stored numbering, turns, usage totals and model (unless `keep_model`:
        the one chosen on the command line), and its earlier tasks. Takes it for this process first: one
        a live process holds raises `ResumeError`. The session used until now is released."""
        if self.busy:
            raise RuntimeError("a turn is running")
        from agentcli.text import terminal_safe

        store = self._store()
        record, context = await take_session(store, self.workspace, ref, current=self.session.id)
        await self.release()
        await self.clear()
        session = self.session
        session.id = record.id
        session.messages, session.next_seq = context.messages, context.next_seq
        session.turns = record.turns
        session.ledger = self.spent(record.id)
        notes: list[str] = []
        if not keep_model:
            try:
                self.set_model(stored_model(record, self.settings))
            except Exception as exc:
                notes.append(
                    terminal_safe(f"its model {record.provider}:{record.model} cannot be used "
                                  f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                                  f"using {self.model.display}")
                )
        self.runner.settle_history(session)
        self.prompt_hooks.restart("resume")
        cut = self.runner.restore(store.tree_tasks(record.id), record.id)
        log.info("session %s resumed: %d messages, compacted %s", record.id, len(session.messages), context.compacted)
        return Resumed(record, len(session.messages), context.compacted, cut, notes)

    async def fork(self, session_id: str | None = None) -> str:
        """Go on with the resumed session under a new id (`--fork-session`; `session_id`, else a fresh one): its
        stored history is copied, the original is left as it was and released."""
        self.session.id = await fork_stored(self._store(), self.session.id, session_id)
        return self.session.id

    async def release(self) -> None:
        """Let other processes resume the current session (this one moves on to another)."""
        if self.store is not None and self.session.next_seq:
            from agentcli.store import release_session

            try:
                await self.store.write(release_session(self.session.id))
            except Exception as exc:  # the store remembers the failure; see persistence_report
                log.warning("session %s not released: %s", self.session.id, exc)

    async def new_session(self) -> None:
        """`/new`: release the current session and start a fresh one."""
        if self.busy:
            raise RuntimeError("a turn is running")
        await self.release()
        await self.clear()
