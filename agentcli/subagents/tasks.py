"""The task table of one session tree: the tasks of this process and a resumed session's, found by id or prefix."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.agent import Session
from agentcli.llm import Message
from agentcli.status import FINISHED_TASK_STATUSES, short_result
from agentcli.store import INTERRUPTED, TaskRecord
from agentcli.subagents.fork import ForkPoint
from agentcli.subagents.limits import Slot
from agentcli.subagents.plan import TaskPlan
from agentcli.subagents.supervisor import Supervisor
from agentcli.subagents.task_tool import ParentLink
from agentcli.subagents.worktrees.worktree import Worktree
from agentcli.text import defang_tags, one_line

if TYPE_CHECKING:
    from agentcli.store import Store
    from agentcli.tools import Sandbox

SESSION_ENDED = "the session ended"  # the error of background tasks cancelled when their session closed
#: A task cancelled with one of these never answered its parent: the session ended (or its process died) first.
ENDED_ERRORS = frozenset({SESSION_ENDED, INTERRUPTED})


@dataclass(slots=True)
class TaskHandle:
    """A Task call in flight (or finished) in this process."""

    record: TaskRecord
    plan: TaskPlan
    session: Session
    parent: ParentLink
    supervisor: Supervisor
    slot: Slot
    output_schema: dict[str, Any] | None = None
    fork: ForkPoint | None = None  # a fork: the parent's conversation and tool list at its Task call
    background: bool = False
    root: Path | None = None  # where its tools work: its worktree or an isolated ancestor's (None: the workspace)
    sandbox: Sandbox | None = None  # its Bash's sandbox there (None: the session's)
    worktree: Worktree | None = None  # its own worktree while it runs (isolation: worktree)
    done: asyncio.Event = field(default_factory=asyncio.Event)


class TaskTable:
    """Every task this session tree knows: `handles` (run in this process) and `restored` (a resumed session's)."""

    def __init__(self, store: Store | None, workspace: Path) -> None:
        self.store = store
        self.workspace = workspace
        self.handles: dict[str, TaskHandle] = {}
        self.restored: dict[str, TaskRecord] = {}  # a resumed session's earlier tasks, as stored
        self._numbers: dict[str, itertools.count[int]] = {}

    def number(self, type_name: str) -> int:
        """The next label number of a type (explore#1, explore#2 ...), going on from a resumed session's."""
        return next(self._numbers.setdefault(type_name, itertools.count(1)))

    def restore(self, records: list[TaskRecord], session_id: str) -> tuple[list[TaskRecord], list[str]]:
        """Take on a resumed session's earlier tasks (`records`: its whole tree's, as stored). Returns the main
        agent's tasks that the session's end cut off (cancelled, never answered) and what to tell it of them."""
        self.restored = {r.task_id: r for r in records}
        for name in {r.subagent_type for r in records}:  # new labels go on from the stored ones: explore#3 ...
            taken = sum(1 for r in records if r.subagent_type == name)
            self._numbers[name] = itertools.count(taken + 1)
        cut = [
            r for r in records
            if r.parent_session_id == session_id and r.status == "cancelled" and r.error in ENDED_ERRORS
        ]
        lines = [
            f"Task {r.task_id} ({defang_tags(r.subagent_type)}: {defang_tags(r.description)}) was cancelled when "
            f'the earlier session ended; Task(resume="{r.task_id}", prompt=...) continues it.'
            for r in cut
        ]
        return cut, lines

    def records(self) -> list[TaskRecord]:
        """Every task (a resumed session's earlier ones first), in creation order."""
        earlier = [r for task_id, r in self.restored.items() if task_id not in self.handles]
        return [*earlier, *(h.record for h in self.handles.values())]

    def task_lines(self, session_id: str) -> list[str]:
        """One line per task `session_id` delegated: id, type, status, description and its one-line result."""
        lines = []
        for record in self.records():
            if record.parent_session_id != session_id:
                continue
            if record.status == "completed" and record.result:
                outcome = one_line(record.result, 200)
            else:
                outcome = one_line(short_result(record.status, record.subagent_type, record.error), 200)
            head = f"- {record.task_id} [{record.subagent_type}] {record.status}"
            lines.append(f"{head}: {record.description} — {outcome}")
        return lines

    def ancestors(self, task_id: str | None) -> list[str]:
        """`task_id` and the task ids above it, nearest first (the main agent has none)."""
        found: list[str] = []
        while task_id is not None and task_id not in found and task_id in self.handles:
            found.append(task_id)
            task_id = self.handles[task_id].parent.task_id
        return found

    def find(self, ref: str) -> tuple[TaskRecord | None, str]:
        """A task by id, unique id prefix or agent label (`explore#2`), or None and why: this run's, a resumed
        session's earlier ones, else an earlier session's of this workspace. A task id is never a way into another
        workspace's results and transcripts, and an ambiguous prefix names only this workspace's tasks."""
        from agentcli.store import AmbiguousIdError

        known = {**self.restored, **{task_id: handle.record for task_id, handle in self.handles.items()}}
        if ref in known:
            return known[ref], ""
        labelled = [h.record for h in self.handles.values() if h.session.agent == ref]
        if labelled:  # an agent's label (explore#2): its latest task in this process
            return labelled[-1], ""
        matches = sorted(task_id for task_id in known if ref and task_id.startswith(ref))
        if len(matches) == 1:
            return known[matches[0]], ""
        try:
            if len(matches) > 1:
                raise AmbiguousIdError("task", ref, matches)
            record = self.store.get_task(ref, workspace=str(self.workspace)) if self.store else None
        except AmbiguousIdError as exc:
            return None, f"{exc} (this workspace's tasks only)."
        return record, "" if record is not None else f"No task '{ref}' in this workspace."

    def finished_record(self, task_id: str) -> TaskRecord | None:
        """A finished task that can be continued (it has a transcript), or None."""
        record, _ = self.find(task_id)
        if record is not None and record.cached_from:  # a reused result: go on with the task that produced it
            record, _ = self.find(record.cached_from)
        if record is None or record.status not in FINISHED_TASK_STATUSES or not record.child_session_id:
            return None
        return record

    def context(self, record: TaskRecord) -> tuple[list[Message], int]:
        """What a resumed task's child session sends next, and the stored number of its next message: from
        this process's handle, else from the store (the latest compaction's summary and what it kept)."""
        for handle in self.handles.values():
            if handle.session.id == record.child_session_id:
                return list(handle.session.messages), handle.session.next_seq
        if self.store is not None and record.child_session_id:
            context = self.store.get_context(record.child_session_id)
            return context.messages, context.next_seq
        return [], 0
