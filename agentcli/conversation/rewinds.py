"""Rewinds of the conversation and its files (`/rewind`, `/undo`, `/redo`, `rewind_files`, `agentcli sessions
rewind`): a mixin of `Conversation`. The files are `PromptCheckpoints`'; the conversation half is here: the
messages from the rewound prompt on are marked in the store (never deleted) and the session's context is read
back without them."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

from agentcli.conversation.checkpoints import (
    Mode,
    PromptCheckpoints,
    RewindDone,
    RewindError,
    RewindPreview,
    as_mode,
)

if TYPE_CHECKING:
    from agentcli.agent import Session
    from agentcli.store import CheckpointRecord, Store


class Rewinds:
    """The conversation's rewinds (the conversation's parts it uses below)."""

    checkpoints: PromptCheckpoints
    session: Session
    store: Store | None

    @property
    @abstractmethod
    def busy(self) -> bool:
        """Whether a turn is running."""

    def rewind_points(self) -> list[CheckpointRecord]:
        """The session's prompts a rewind can go back to, oldest first."""
        return self.checkpoints.prompts(self.session.id)

    def _idle(self) -> None:
        if self.busy:
            raise RewindError("a turn is running: rewind once it ends (Esc stops it)")

    async def preview_rewind(self, ref: str, mode: Mode = "both") -> RewindPreview:
        """What rewinding to the prompt `ref` (its uuid, or its number: 1 the first, -1 the last) will change."""
        self._idle()
        point = self.checkpoints.find(self.session.id, ref)
        return await self.checkpoints.preview(self.session.id, point, mode)

    async def rewind(self, preview: RewindPreview, *, overwrite: bool | set[str] = False) -> RewindDone:
        """Carry out a previewed rewind: the files (a file the person changed since only with `overwrite`), then
        the conversation from that prompt on taken out of the context."""
        self._idle()
        done = await self.checkpoints.rewind_files(self.session, preview, overwrite)
        stamp = None
        if preview.mode != "code":
            stamp, done.messages = await self._take_back(preview.point.seq)
        await self.checkpoints.after(self.session, rewound_at=stamp)
        return done

    async def preview_redo(self) -> RewindPreview:
        """What undoing the latest rewind (when no prompt came since) will change."""
        self._idle()
        point = self.checkpoints.last_rewind(self.session.id)
        return await self.checkpoints.preview(self.session.id, point, as_mode(point.mode))

    async def redo(self, preview: RewindPreview, *, overwrite: bool | set[str] = False) -> RewindDone:
        """Undo the rewind `preview_redo` named: the files it changed put back, the messages it took back given
        back."""
        self._idle()
        point = preview.point
        done = await self.checkpoints.rewind_files(self.session, preview, overwrite, target_id=point.id, redo=True)
        if preview.mode != "code" and point.rewound_at:
            done.messages = await self._give_back(point.rewound_at)
        await self.checkpoints.after(self.session)
        return done

    async def _take_back(self, seq: int) -> tuple[str | None, int]:
        """Mark the session's messages from `seq` on as rewound and read its context back without them."""
        if self.store is None:
            raise RewindError("sessions are not stored (no database): the conversation cannot be rewound")
        from agentcli.store import rewind_messages

        await self.store.flush()
        stamp, count = await self.store.write(rewind_messages(self.session.id, seq))
        self._reload()
        return stamp, count

    async def _give_back(self, stamp: str) -> int:
        assert self.store is not None
        from agentcli.store import unrewind_messages

        await self.store.flush()
        count = await self.store.write(unrewind_messages(self.session.id, stamp))
        self._reload()
        return count

    def _reload(self) -> None:
        assert self.store is not None
        context = self.store.get_context(self.session.id)
        self.session.messages = context.messages
