"""What the permission policy asks the approver, what the approver answers, and the policy's verdict."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentcli.diffs import FileDiff

Approval = Literal["allow_once", "allow_always", "deny"]


@dataclass(frozen=True)
class PermissionRequest:
    """What the approver is asked: `[agent] wants to run <tool>: <summary>`."""

    agent: str
    tool: str
    summary: str
    target: str
    always_scope: str = ""  # what "allow always" would allow from then on, for the dialog
    diff: FileDiff | None = None  # what the call will change (Edit, MultiEdit, Write), worked out without writing
    preview_note: str = ""  # why there is no diff to show (the call would fail: old_string not found, ...)
    tool_input: dict[str, Any] = dataclasses.field(default_factory=dict)  # the call's arguments, as the model sent them
    tool_call_id: str = ""
    session_id: str = ""  # the asking agent's session
    outside_sandbox: bool = False  # a refused Bash command asked to run again without the sandbox
    worktree: bool = False  # the agent works in its task's git worktree: paths are relative to it (`[worktree]`)
    every_time: bool = False  # a guarded file or an ask rule: an "allow always" answer is not remembered


@dataclass(frozen=True)
class Answer:
    """An answer that says more than allow or deny (a program's, over the Claude Agent SDK's `can_use_tool`):
    the arguments to run the call with instead, or the reason a refusal gives the model."""

    approval: Approval
    updated_input: dict[str, Any] | None = None
    message: str = ""


Approver = Callable[[PermissionRequest], Awaitable[Approval | Answer]]


@dataclass(frozen=True)
class PermissionDecision:
    """The verdict on one call; `reason` (for refusals) goes to the model as the tool result; `updated_input`: the
    arguments the approver changed the call to (it runs with those)."""

    allowed: bool
    reason: str = ""
    updated_input: dict[str, Any] | None = None


ALLOWED = PermissionDecision(True)  # the verdict of every call that runs as the model made it
