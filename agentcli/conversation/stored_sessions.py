"""Stored sessions as the conversation resumes them: finding the one a reference names, its usage as a
ledger, its model as a spec, and the errors and results of resuming one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.agent import Ledger, Spend
from agentcli.llm import resolve_model

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.store import SessionRecord, SpendSums, Store, StoredContext, TaskRecord, TreeSpend


class ResumeError(Exception):
    """A stored session cannot be resumed here (none, several match, another workspace's, held by a live
    process); `str()` is the one line for the person."""


@dataclass(frozen=True, slots=True)
class Resumed:
    """What `Conversation.resume` restored."""

    record: SessionRecord  # the stored session as it was before this process took it
    messages: int  # messages its model context holds now
    compacted: bool  # the context starts from a summary compaction
    cut_tasks: list[TaskRecord] = field(default_factory=list)  # cancelled by the session's end, resumable
    notes: list[str] = field(default_factory=list)  # e.g. its model could not be used, the current one is


def stored_ledger(spent: TreeSpend) -> Ledger:
    """A stored session's usage as the live `Ledger` it was: own, delegated (every session below), total."""

    def spend(s: SpendSums) -> Spend:
        return Spend(s.counts(), s.cost_usd, s.requests)

    return Ledger(own=spend(spent.own), delegated=spend(spent.delegated))


def holder_line(session_id: str, pid: int) -> str:
    """The one line that says a live process holds a session."""
    return (
        f"session {session_id} is in use by agentcli (pid {pid}); close it there first, "
        "or start a new session"
    )


def find_session(store: Store, workspace: Path, ref: str | None) -> SessionRecord:
    """The session `ref` names (an id or a unique prefix), or with None this workspace's latest one."""
    from agentcli.store import AmbiguousIdError

    if ref is None:
        found = store.latest_session(str(workspace))
        if found is None:
            raise ResumeError(f"no session to continue in {workspace}")
        return found
    try:
        record = store.get_session(ref)
    except AmbiguousIdError as exc:  # a prefix that subagents' sessions share may still name one top-level one
        tops = [s for s in map(store.get_session, exc.matches) if s is not None and s.parent_session_id is None]
        if len(tops) != 1 or len(exc.matches) > 5:
            raise ResumeError(str(exc)) from exc
        record = tops[0]
    if record is None:
        raise ResumeError(f"no session matches '{ref}' ('agentcli sessions list' shows them)")
    if record.parent_session_id is not None:
        raise ResumeError(
            f"{record.id} is a subagent's session (task {record.task_id}): resume its parent "
            f"{record.parent_session_id}, then Task(resume=...) continues the task"
        )
    if record.workspace and record.workspace != str(workspace):
        raise ResumeError(
            f"session {record.id} belongs to {record.workspace}: run 'agentcli --cwd {record.workspace} "
            f"--resume {record.id}' there"
        )
    return record


def stored_model(record: SessionRecord, settings: Settings) -> str:
    """The spec of a stored session's model: `main` or `light` when that is what they resolve to now."""
    if not record.provider:
        return record.model or "main"
    for slot in ("main", "light"):
        try:
            model = resolve_model(slot, settings)
        except Exception:
            continue
        if (model.provider, model.model) == (record.provider, record.model):
            return slot
    return f"{record.provider}:{record.model}"


def stored_spent(store: Store, session_id: str) -> Ledger:
    """A stored session tree's usage as a ledger (zero when it has none)."""
    spent = store.session_spend(session_id)
    return stored_ledger(spent) if spent is not None else Ledger()


async def take_session(store: Store, workspace: Path, ref: str | None, *, current: str
                       ) -> tuple[SessionRecord, StoredContext]:
    """Claim the stored session `ref` names for this process and read its model context. `ResumeError` when it is
    the `current` one, held by a live process or damaged (then it is released again)."""
    from agentcli.store import StoreError, claim_session, release_session

    await store.flush()  # rows of dead processes are marked cancelled (open) before they are read
    record = find_session(store, workspace, ref)
    if record.id == current:
        raise ResumeError(f"session {record.id} is the current session")
    holder = await store.write(claim_session(record.id))
    if holder is not None:
        raise ResumeError(holder_line(record.id, holder))
    try:
        return record, store.get_context(record.id)
    except StoreError as exc:  # a damaged row: say which; the current session goes on as it was
        await store.write(release_session(record.id))
        raise ResumeError(str(exc)) from None


async def fork_stored(store: Store, original: str, session_id: str | None = None) -> str:
    """Copy a stored session's history under a new id (`session_id`, else a fresh one) and release the original
    (`--fork-session`); the new id."""
    from agentcli.agent import new_id
    from agentcli.store import copy_session, release_session

    fresh = session_id or new_id("ses")
    await store.write(copy_session(original, fresh))
    await store.write(release_session(original))
    return fresh
