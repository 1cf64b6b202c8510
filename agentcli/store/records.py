"""Typed rows of the store: a task record (SPEC §4 "Record of a task"), sessions, tool calls, usage."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentcli.llm import CostedTokens, CostedUsage, Message
from agentcli.status import MergeOutcome, SessionStatus, TaskStatus, ToolCallStatus


class ToolCount(BaseModel):
    """How often a subagent used one tool."""

    model_config = ConfigDict(extra="forbid")
    tool: str
    count: int


class _TaskHeader(BaseModel):
    """The fields of a `TaskRecord` before its counts (a base only to keep the field order: JSON keys, columns)."""

    task_id: str
    parent_session_id: str | None = None
    parent_task_id: str | None = None
    parent_tool_call_id: str | None = None
    child_session_id: str | None = None
    depth: int = 1
    chain: list[str] = Field(default_factory=list)
    subagent_type: str
    description: str = ""
    prompt: str = ""
    model_used: str | None = None
    status: TaskStatus = "queued"
    result: str | None = None
    error: str | None = None
    tool_summary: list[ToolCount] = Field(default_factory=list)
    files_modified: list[str] = Field(default_factory=list)
    time_ms: float | None = None
    tool_calls: int = 0


class TaskRecord(CostedTokens, _TaskHeader):
    """One delegation through the Task tool, SPEC §4's record; the Task tool fills it.

    Its tokens and cost are the task's whole subtree (the subagent's own requests and its
    subagents'), cache tokens apart from `input_tokens`: see `agentcli.agent.ledger`.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    inherited_messages: int = 0  # a fork (`fork_context`): how many of its parent's messages it started from
    cached_from: str | None = None  # answered from this earlier task's result, without a model request
    merge: MergeOutcome | None = None  # isolated in a git worktree (`isolation: worktree`): how it ended
    branch: str | None = None  # its worktree's branch (`agentcli/<task_id>`); kept after a conflict or `kept`
    files_merged: list[str] = Field(default_factory=list)  # the files merged into the workspace
    files_conflicted: list[str] = Field(default_factory=list)  # the files whose changes overlap the workspace's

    @property
    def forked(self) -> bool:
        """Whether the task started from its parent's conversation (a fork)."""
        return self.inherited_messages > 0

    def shown_description(self) -> str:
        """The description as a block or a progress line shows it: a fork says so."""
        return f"{self.description} (fork)" if self.forked else self.description


class _SessionHeader(BaseModel):
    """The fields of a `SessionRecord` before its counts (a base only to keep the field order)."""

    id: str
    parent_session_id: str | None = None
    task_id: str | None = None
    depth: int = 0
    agent: str = "main"
    agent_type: str | None = None
    workspace: str = ""
    model: str = ""
    provider: str | None = None
    status: SessionStatus = "running"
    title: str | None = None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    error: str | None = None


class SessionRecord(CostedTokens, _SessionHeader):
    """One session (the main agent's, or a subagent's) with its running usage totals."""

    turns: int = 0
    pid: int | None = None


class ToolCallRecord(BaseModel):
    """One tool call of a session, with its full output."""

    id: str
    session_id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    summary: str = ""
    status: ToolCallStatus = "running"
    output: str | None = None
    is_error: bool = False
    duration_ms: float | None = None
    files_modified: list[str] = Field(default_factory=list)
    code: str | None = None  # SPEC §4 error code of a failed call, when it has one
    short_result: str | None = None  # a Task call's one-line outcome
    started_at: datetime | None = None
    finished_at: datetime | None = None


class AgentMessageRecord(BaseModel):
    """A message sent to an agent of a tree (`agent_messages`): sender, recipient and how it was delivered."""

    id: int
    session_id: str  # the recipient's session (the sender's when it continued a finished task)
    recipient_task_id: str | None = None  # None: the main agent
    sender: str
    sender_task_id: str | None = None
    text: str
    delivery: str
    continued_as: str | None = None
    created_at: datetime


class SpendSums(CostedUsage):
    """Tokens, cost and number of a set of stored requests: the ledger's `Spend` as the store sums it.

    Cache tokens are apart from `input_tokens`; `cost_usd` is None while no request had a known price.
    """

    requests: int = 0


class TreeSpend(BaseModel):
    """A stored session's usage split as the ledger splits it (`agentcli.agent.ledger`).

    `own`: the requests of the session itself; `delegated`: the requests of every session below it in
    the delegation tree. The one place the store computes that split (`queries.sessions_spend`, one
    statement for a page of sessions; `session_spend` is it for one).
    """

    session_id: str
    sessions: int  # the session and every session below it
    turns: int = 0  # of all those sessions
    own: SpendSums = Field(default_factory=SpendSums)
    delegated: SpendSums = Field(default_factory=SpendSums)


class _RollupHeader(BaseModel):
    """The fields of a `UsageRollup` before its counts (a base only to keep the field order)."""

    session_id: str
    sessions: int


class UsageRollup(CostedTokens, _RollupHeader):
    """Usage of a session and every session below it in the delegation tree (`TreeSpend`'s total)."""

    turns: int = 0


class StoredContext(BaseModel):
    """What a resumed session's next request starts from (`Store.get_context`)."""

    messages: list[Message]
    next_seq: int
    compacted: bool = False
