"""Tasks isolated in git worktrees (`isolation: "worktree"`): set up before the subagent runs, merged back after.

The runner asks three things: whether isolation is possible where the parent works (`check`, before the task
is admitted: a refusal is one line), a worktree for the task once it has its slot (`enter`), and, when it has
finished, its changes merged into the folder it came from (`leave`): the workspace, or an isolated parent's
worktree. The record keeps how that ended (`merge`, `branch`, `files_merged`, `files_conflicted`) and the
parent reads it after the subagent's result. A clean merge, or no change, removes the worktree and its branch;
a conflict, `merge: "manual"` or a task that did not complete keeps the branch (the worktree folder goes).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.diffs import FileDiff
from agentcli.events import SubagentMergedEvent
from agentcli.subagents.tasks import TaskHandle
from agentcli.subagents.worktrees import worktree
from agentcli.subagents.worktrees.merge_back import change_diffs, merge_into
from agentcli.subagents.worktrees.worktree import WorktreeError
from agentcli.tools import FileLocks

if TYPE_CHECKING:
    from agentcli.tools import Sandbox

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Left:
    """How an isolated task's worktree was left: what its parent is told, and what the task changed."""

    note: str
    diffs: list[FileDiff] = field(default_factory=list)
    look: str = ""  # how the person sees a kept branch's changes

    def event(self, handle: TaskHandle) -> SubagentMergedEvent | None:
        """What the parent's block is told of it (after the task's `subagent_block_finished`)."""
        record, parent = handle.record, handle.parent.session
        if record.merge is None:
            return None
        return SubagentMergedEvent(session_id=parent.id, agent=parent.agent, task_id=record.task_id,
                                   merge=record.merge, branch=record.branch, files_merged=list(record.files_merged),
                                   files_conflicted=list(record.files_conflicted), diffs=self.diffs,
                                   look=self.look if record.branch else "")


class Isolation:
    """The worktrees of one session tree's isolated tasks."""

    def __init__(self, workspace: Path, locks: FileLocks, sandbox: Sandbox | None) -> None:
        self.workspace = workspace.resolve()
        self.locks = locks  # the tree's per-file locks: a merge back waits for writers of its files, and they for it
        self.sandbox = sandbox  # the session's: a worktree's Bash gets the same policy, writing in the worktree

    async def check(self, handle: TaskHandle) -> str | None:
        """Why the task cannot be isolated where it would start (one line), or None."""
        if not handle.plan.isolated:
            return None
        try:
            await asyncio.to_thread(worktree.repository, handle.root or self.workspace)
        except WorktreeError as exc:
            return str(exc)
        return None

    async def enter(self, handle: TaskHandle) -> str:
        """Create the task's worktree and root its tools there; what its first message says of it ("" when not
        isolated). Raises `WorktreeError`."""
        if not handle.plan.isolated:
            return ""
        tree = await asyncio.to_thread(worktree.create, handle.root or self.workspace, handle.record.task_id,
                                     self.workspace)
        handle.worktree, handle.root = tree, tree.path
        handle.sandbox = self.sandbox.rooted(tree.path) if self.sandbox is not None else None
        handle.record.branch = tree.branch
        if handle.plan.remote:
            return (
                "\n\n# Your checkout\nYou work on a remote worker, in your own copy of the workspace as it was when "
                "you started (uncommitted changes included), your working folder; use paths relative to it. When you "
                "finish, your changes are merged back into the workspace for the person; you need not commit them."
            )
        return (
            f"\n\n# Your worktree\nYou work in your own git worktree, {tree.path}, on branch {tree.branch}: a copy of "
            "the workspace as it was when you started (uncommitted changes included). Your file tools and commands "
            "work there; use paths relative to it (the workspace itself is out of reach). When you finish, your "
            "changes are merged back into the workspace for the person; you need not commit them."
        )

    async def leave(self, handle: TaskHandle) -> Left | None:
        """Merge the finished task's changes back (or keep them on its branch), fill its record, remove the
        worktree; what its parent is told after the result, and the changes (None when it was not isolated)."""
        tree, handle.worktree = handle.worktree, None
        if tree is None:
            return None
        record, keep = handle.record, True
        look = f"`{tree.look()}`"
        diffs: list[FileDiff] = []
        try:
            label = f"agentcli: {record.subagent_type} task {record.task_id}: {record.description}"
            tip = await asyncio.to_thread(worktree.commit_all, tree, label)
            if tip is not None:
                diffs = await _diffs(tree, tip, record.task_id)
            if tip is None:
                record.merge, record.branch, keep = "no_changes", None, False
                note = "It changed no files (its worktree is removed)."
            elif handle.plan.keep_branch or record.status != "completed":
                record.merge = "kept"
                why = 'merge: "manual"' if handle.plan.keep_branch else f"the task ended {record.status}"
                note = f"Its changes were not merged ({why}); they are on branch {tree.branch}: {look}."
            else:
                plan = await merge_into(tree, tip, tree.repo, self.locks)
                if plan.conflicts:
                    record.merge, record.files_conflicted = "conflict", sorted(plan.conflicts)
                    files = "; ".join(f"{path} ({why})" for path, why in sorted(plan.conflicts.items()))
                    note = (f"Its changes were NOT merged, nothing was applied: they conflict with the workspace in "
                            f"{files}. They are committed on branch {tree.branch}: {look} shows them.")
                else:
                    record.merge, record.files_merged, record.branch, keep = "merged", plan.paths, None, False
                    note = ("Its changes were merged into the workspace (uncommitted): "
                            f"{', '.join(plan.paths)}.")
        except WorktreeError as exc:
            record.merge = "kept"
            note = f"Its changes could not be merged ({exc}); whatever it committed is on branch {tree.branch}."
        except Exception as exc:  # never leave a task's changes half-handled without saying so
            log.exception("task %s: merge back failed", record.task_id)
            record.merge = "kept"
            note = f"Its changes could not be merged (internal error: {type(exc).__name__}); see branch {tree.branch}."
        finally:
            sandbox, handle.sandbox = handle.sandbox, None
            if sandbox is not None and sandbox is not self.sandbox:
                sandbox.close()
            await asyncio.to_thread(worktree.remove, tree, keep_branch=keep)
        log.info("task %s: worktree %s: %s", record.task_id, tree.path, record.merge)
        return Left(f"\n\n[worktree] {note}", diffs, tree.look())


async def _diffs(tree: worktree.Worktree, tip: str, task_id: str) -> list[FileDiff]:
    """The task's changes for the person to look at; none when git cannot say (the merge goes on regardless)."""
    try:
        return await asyncio.to_thread(change_diffs, tree, tip)
    except Exception:
        log.warning("task %s: could not diff its changes", task_id, exc_info=True)
        return []
