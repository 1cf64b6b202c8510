"""The status vocabularies, defined once: how a run, a task (SPEC §4) and a tool call stand or ended.

The runner, the events, the store's schema, the printers and the TUI all use these names; the SPEC's
short forms of a task's result and its error codes live here too, and the permission modes with their
order of strictness (the config's validation, what an untrusted project may set, the policy, the TUI).
"""

from __future__ import annotations

from typing import Literal, get_args

#: How one agent's run ended.
RunStatus = Literal["completed", "failed", "cancelled", "max_turns", "timed_out", "budget_exceeded"]
#: A session: running, or how its last run ended.
SessionStatus = Literal["running", "completed", "failed", "cancelled", "max_turns", "timed_out", "budget_exceeded"]
#: A task (one Task call), SPEC §4 "Record of a task".
TaskStatus = Literal["queued", "running", "completed", "failed", "timed_out", "cancelled", "budget_exceeded"]
#: How a task isolated in a git worktree ended for the workspace: its changes merged, in conflict (kept on its
#: branch), none, or kept on its branch without merging (`merge: "manual"`, or the task did not complete).
MergeOutcome = Literal["merged", "conflict", "no_changes", "kept"]
#: A tool call.
ToolCallStatus = Literal["running", "ok", "error", "cancelled"]
#: How a running subagent is stopped (a limit, the parent, the person): a run, a session and a task status alike.
StopStatus = Literal["cancelled", "timed_out", "budget_exceeded"]

#: How the permission policy treats mutating tool calls (`[permissions] mode`, Shift+Tab in the TUI).
PermissionMode = Literal["ask", "accept_edits", "auto", "readonly"]
#: Loosest first: auto approves all, accept_edits approves file edits, ask asks, readonly refuses.
PERMISSION_MODE_STRICTNESS: dict[PermissionMode, int] = {"auto": 0, "accept_edits": 1, "ask": 2, "readonly": 3}

RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
SESSION_STATUSES: tuple[SessionStatus, ...] = get_args(SessionStatus)
TASK_STATUSES: tuple[TaskStatus, ...] = get_args(TaskStatus)
TOOL_CALL_STATUSES: tuple[ToolCallStatus, ...] = get_args(ToolCallStatus)
STOP_STATUSES: tuple[StopStatus, ...] = get_args(StopStatus)
MERGE_OUTCOMES: tuple[MergeOutcome, ...] = get_args(MergeOutcome)

ACTIVE_TASK_STATUSES: frozenset[TaskStatus] = frozenset({"queued", "running"})
FINISHED_TASK_STATUSES: frozenset[TaskStatus] = frozenset(set(TASK_STATUSES) - ACTIVE_TASK_STATUSES)

#: A subagent's run status as its task's status: a run stopped at max_turns went over its budget.
TASK_STATUS_OF_RUN: dict[RunStatus, TaskStatus] = {
    "completed": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
    "max_turns": "budget_exceeded",
    "timed_out": "timed_out",
    "budget_exceeded": "budget_exceeded",
}

#: SPEC §4 error codes of a task that did not complete.
TASK_ERROR_CODES: dict[TaskStatus, str] = {
    "failed": "INTERNAL_ERROR",
    "timed_out": "TIMEOUT",
    "cancelled": "CANCELLED",
    "budget_exceeded": "BUDGET_EXCEEDED",
}

#: The `code` of a refused tool call (the permission policy, a PreToolUse hook, a question the person would not answer):
#: stream-json's `permission_denials` and ACP's `raw_output` tell a refusal from a failure by it.
PERMISSION_DENIED = "permission_denied"

DELEGATION_FAILED = "Task delegation failed"  # the short form of a Task call refused before a subagent ran
_SHORT_RESULTS: dict[TaskStatus, str] = {
    "completed": "Task completed by {type}",
    "failed": "Task failed: {reason}",
    "timed_out": "Task failed: timed out",
    "cancelled": "Task failed: cancelled",
    "budget_exceeded": "Task failed: budget exceeded",
}


def short_result(status: TaskStatus, subagent_type: str, error: str | None) -> str:
    """The one-line form for the UI: `Task completed by explore` / `Task failed: <reason>`."""
    template = _SHORT_RESULTS.get(status, "Task failed: {reason}")
    reason = (error or status).splitlines()[0] if (error or status) else status
    return template.format(type=subagent_type, reason=reason[:120])
