"""Rewinding a stored session from the command line (`agentcli sessions rewind`): the session claimed for this
process like a resume (one a live process holds is refused), its checkpoints and context read from the store, no
model or provider involved."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.conversation.checkpoints import PromptCheckpoints
from agentcli.conversation.rewinds import Rewinds
from agentcli.conversation.stored_sessions import ResumeError, holder_line
from agentcli.events import EventBus

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.llm import Message
    from agentcli.store import SessionRecord, Store


@dataclass(slots=True)
class StoredSession:
    """What a rewind reads and changes of a stored session."""

    id: str
    agent: str = "main"
    next_seq: int = 0
    messages: list[Message] = field(default_factory=list)


class StoredRewinder(Rewinds):
    """The rewinds of one stored session, claimed by this process until `release`."""

    def __init__(self, settings: Settings, store: Store, record: SessionRecord, bus: EventBus | None = None) -> None:
        self.store = store
        self._db = store
        self.record = record
        self.bus = bus or EventBus()
        context = store.get_context(record.id)
        stored = StoredSession(record.id, record.agent, context.next_seq, context.messages)
        self.session = stored  # type: ignore[assignment]  # the parts of a Session a rewind uses
        self.checkpoints = PromptCheckpoints(settings.checkpoints, Path(record.workspace or "."), store, self.bus)

    @property
    def busy(self) -> bool:
        return False

    @classmethod
    async def claim(cls, settings: Settings, store: Store, ref: str, bus: EventBus | None = None) -> StoredRewinder:
        """The stored top-level session `ref` names, claimed; `ResumeError` when none, several or a subagent's
        match, or a live process holds it."""
        from agentcli.conversation.stored_sessions import find_session
        from agentcli.store import AmbiguousIdError, claim_session

        await store.flush()
        try:
            record = store.get_session(ref)
        except AmbiguousIdError:
            record = None  # find_session says it in full
        workspace = Path(record.workspace) if record is not None and record.workspace else Path.cwd()
        record = find_session(store, workspace, ref)
        holder = await store.write(claim_session(record.id))
        if holder is not None:
            raise ResumeError(holder_line(record.id, holder))
        return cls(settings, store, record, bus)

    async def release(self) -> None:
        """Let other processes resume the session again."""
        from agentcli.store import release_session

        await self._db.write(release_session(self.session.id))
