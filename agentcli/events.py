"""The typed event stream every consumer (TUI, one-shot printer, store, JSON stream) subscribes to.

Events are pydantic models in one discriminated union (`Event`). Producers call an `EventSink`
(any callable taking an event). `MessageManager` is the consumer base class: it dispatches each
event to an `on_<kind>` method (seed 000's names: `on_subagent_block_added`, ...).
A subagent's events reach its parent wrapped in `SubagentEvent` with the task id and the
parent's tool call id, so consumers can find the block they belong to.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentcli.diffs import FileDiff
from agentcli.llm import CostedTokens, CostedUsage, Message, Usage
from agentcli.status import MergeOutcome, RunStatus, TaskStatus

log = logging.getLogger(__name__)
STREAMING_STEP_CHARS = 400  # a ToolCallStreamingEvent per this many argument characters


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)
    session_id: str
    agent: str = "main"  # label of the agent that emitted it: main, explore#2, ...


class SessionStartedEvent(_Event):
    """A session (main or subagent) began."""

    kind: Literal["session_started"] = "session_started"
    model: str  # display label: main, light, provider:model
    provider: str = ""
    model_id: str = ""  # the provider's model id
    agent_type: str = "main"
    workspace: str
    depth: int = 0
    parent_session_id: str | None = None
    task_id: str | None = None
    tools: list[str] = Field(default_factory=list)  # the names of the tools the agent is offered


class TextDeltaEvent(_Event):
    """A piece of assistant text, as it streams."""

    kind: Literal["text_delta"] = "text_delta"
    text: str


class ThinkingDeltaEvent(_Event):
    """A piece of the model's reasoning as it streams (shown dimmed; never part of the answer)."""

    kind: Literal["thinking_delta"] = "thinking_delta"
    text: str


class MessageAddedEvent(_Event):
    """A message was appended to the session's history (user prompt, assistant turn, tool results)."""

    kind: Literal["message_added"] = "message_added"
    seq: int
    message: Message


class ToolCallStartedEvent(_Event):
    """A tool call is about to run."""

    kind: Literal["tool_call_started"] = "tool_call_started"
    tool_call_id: str
    name: str
    args: dict[str, Any]
    summary: str


class ToolCallFinishedEvent(_Event):
    """A tool call finished (or was refused, or failed)."""

    kind: Literal["tool_call_finished"] = "tool_call_finished"
    tool_call_id: str
    name: str
    is_error: bool
    output: str
    duration_ms: float  # the tool's own time: waiting for the person's approval is not in it
    files_modified: list[str] = Field(default_factory=list)
    code: str | None = None  # SPEC §4 error code of a failed call (NOT_FOUND, TIMEOUT, ...), when it has one
    short_result: str | None = None  # a Task call's one-line outcome: `Task completed by explore`, ...
    approval_ms: float = 0.0  # how long it waited for the person's approval (ask mode)
    diff: FileDiff | None = None  # what an Edit, MultiEdit or Write changed (capped; counts of the whole change)
    todos: list[dict[str, str]] | None = None  # a TodoWrite call's whole list now: [{id, content, status}]
    # What Claude Code records of the call (stream-json's `tool_use_result`): a WebSearch's query, results, answer
    tool_use_result: dict[str, Any] | None = None
    # The errors and warnings an edit introduced, as its language server reported them (errors first, capped):
    # [{path, line, column, severity, message, source, code}]; the same findings end its `output` as text
    diagnostics: list[dict[str, Any]] = Field(default_factory=list)


class ToolCallStreamingEvent(_Event):
    """The model is writing a tool call (its arguments stream): the UI shows it is busy before the call runs.

    Sent when the call starts and again each time another `STREAMING_STEP_CHARS` of arguments arrived.
    """

    kind: Literal["tool_call_streaming"] = "tool_call_streaming"
    index: int  # the call's position in the model's turn
    tool_call_id: str
    name: str
    chars: int = 0  # argument characters streamed so far


class ToolOutputEvent(_Event):
    """A running tool's latest output (Bash), at most a few times a second; `tail` is its last lines, capped."""

    kind: Literal["tool_output"] = "tool_output"
    tool_call_id: str
    name: str
    tail: str
    total_bytes: int = 0  # output so far


class _UsageHeader(_Event):
    """The fields of a `UsageEvent` before its counts (a base only to keep the field order, the JSON keys')."""

    kind: Literal["usage"] = "usage"
    provider: str
    model: str


class UsageEvent(CostedUsage, _UsageHeader):
    """Usage of one model request."""

    # The counts and cost are `CostedUsage`'s (`reasoning_tokens`: the part of output_tokens reported as reasoning);
    # a request's input and output counts are required here, as they always were (pydantic keeps their place).
    input_tokens: int
    output_tokens: int
    context_tokens: int = 0  # how full the agent's context is now (0: not watched)
    context_window: int = 0  # its model's window in tokens (0: not watched)
    estimated: bool = False  # a request that never finished (stopped, failed mid-stream): counts estimated
    duration_ms: float = 0.0  # the request's wall time, first byte sent to response done (0: not timed)

    @property
    def usage(self) -> Usage:
        """The request's token counts as the ledger keeps them."""
        return self.counts()


class RetryEvent(_Event):
    """A model request failed and is being retried; text streamed by the failed attempt is void."""

    kind: Literal["retry"] = "retry"
    attempt: int
    delay_seconds: float
    error: str


class ErrorEvent(_Event):
    """A model request failed for good; the run ends as failed."""

    kind: Literal["error"] = "error"
    message: str


class NoticeEvent(_Event):
    """A one-line warning for the person that does not stop the run (e.g. a deprecated model)."""

    kind: Literal["notice"] = "notice"
    message: str
    level: Literal["info", "warning"] = "warning"


class HookRunEvent(_Event):
    """A configured hook command ran (Claude Code's hooks: `agentcli.hooks`); what it said and what it decided.

    `outcome`: `ok` (exit 0), `blocked` (exit 2, or JSON output that blocks / denies / stops), `error`
    (another exit code, unreadable JSON, could not start: the run goes on) or `timeout` (killed).
    """

    kind: Literal["hook_run"] = "hook_run"
    hook_event: str  # PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStart, SubagentStop, SessionStart
    command: str
    source: str  # the settings file it came from
    matcher: str = ""
    tool_name: str | None = None
    tool_call_id: str | None = None
    outcome: Literal["ok", "blocked", "error", "timeout"]
    exit_code: int | None = None
    reason: str = ""  # the block's reason (told to the model), or the error
    stdout: str = ""
    stderr: str = ""
    duration_ms: float = 0.0


class AgentMessageEvent(_Event):
    """A message sent to an agent of the tree (SendMessage, or the person in the TUI) and how it went.

    `session_id` / `agent` are the recipient's, so the event travels in the recipient's wrappers (its block
    shows it); `sender` is `main`, a subagent's label (`explore#2`) or `the person`. `delivery`: `queued`
    (read at the recipient's next turn boundary) or `continued` (the recipient had finished: it runs again
    as `continued_as`).
    """

    kind: Literal["agent_message"] = "agent_message"
    sender: str
    sender_task_id: str | None = None
    recipient_task_id: str | None = None  # None: the main agent
    text: str
    delivery: Literal["queued", "continued"] = "queued"
    continued_as: str | None = None


class CompactionEvent(_Event):
    """A session's context was made smaller before its next request (the stored history keeps everything).

    `mode` `prune`: old large tool results were cut down in place; `summary`: the messages before
    stored seq `kept_from_seq` were replaced by `summary` (a user message that opens the context).
    Tokens are estimates of the context the next request sends.
    """

    kind: Literal["compaction"] = "compaction"
    mode: Literal["prune", "summary"]
    tokens_before: int
    tokens_after: int
    window: int
    kept_from_seq: int | None = None
    summary: str = ""
    trigger: Literal["auto", "manual"] = "auto"


class RunFinishedEvent(_Event):
    """A session's run ended."""

    kind: Literal["run_finished"] = "run_finished"
    status: RunStatus
    result: str
    turns: int
    error: str | None = None


class SubagentBlockAddedEvent(_Event):
    """A Task call created a subagent (the UI adds a block)."""

    kind: Literal["subagent_block_added"] = "subagent_block_added"
    task_id: str
    parent_tool_call_id: str
    subagent_type: str
    description: str
    model: str
    depth: int
    status: TaskStatus = "queued"


class _BlockUpdateHeader(_Event):
    """The fields of a `SubagentBlockUpdatedEvent` before its counts (a base only to keep the field order)."""

    kind: Literal["subagent_block_updated"] = "subagent_block_updated"
    task_id: str
    status: TaskStatus
    tool_calls: int = 0


class SubagentBlockUpdatedEvent(CostedTokens, _BlockUpdateHeader):
    """A subagent's status or counters changed.

    The counters are the task's (see `agentcli.agent.ledger`): its tool calls, and the tokens and
    cost of its whole subtree, cache tokens apart from `input_tokens`.
    """

    elapsed_ms: float = 0.0


class SubagentBlockFinishedEvent(_Event):
    """A subagent finished; carries its short result for the collapsed block."""

    kind: Literal["subagent_block_finished"] = "subagent_block_finished"
    task_id: str
    status: TaskStatus
    short_result: str
    error: str | None = None
    elapsed_ms: float = 0.0
    # The task's final counters (None: not sent): what its subtree spent, a stopped one's unfinished requests too.
    tool_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    cached_from: str | None = None  # answered from the stored result of this earlier task (no model request)


class SubagentMergedEvent(_Event):
    """An isolated task's worktree was merged back into the folder it came from, or its changes kept on its branch
    (after its `subagent_block_finished`; the record has the same fields)."""

    kind: Literal["subagent_merged"] = "subagent_merged"
    task_id: str
    merge: MergeOutcome
    branch: str | None = None  # the kept branch (conflict, kept); None once merged or when nothing changed
    files_merged: list[str] = Field(default_factory=list)
    files_conflicted: list[str] = Field(default_factory=list)
    diffs: list[FileDiff] = Field(default_factory=list)  # what the subagent changed (snapshot → tip), capped
    look: str = ""  # the git command that shows a kept branch's changes (`git diff <snapshot> <branch>`)


class BackgroundStartedEvent(_Event):
    """A Bash command was started in the background (`Bash(run_in_background=true)`) by the agent of
    `session_id`."""

    kind: Literal["background_started"] = "background_started"
    task_id: str  # bash_N: TaskOutput and TaskCancel take it
    command: str
    tool_call_id: str = ""  # the Bash call that started it
    description: str = ""  # the Bash call's `description`, if it gave one
    output_file: str = ""  # the file its output goes to (TaskOutput reads it)


class BackgroundFinishedEvent(_Event):
    """A background command exited (`exited`, with its code) or was stopped (`stopped`: TaskCancel, its task's or
    the session's end)."""

    kind: Literal["background_finished"] = "background_finished"
    task_id: str
    command: str
    tool_call_id: str = ""
    description: str = ""
    output_file: str = ""
    status: Literal["exited", "stopped"]
    exit_code: int | None = None
    last_lines: str = ""
    elapsed_seconds: float = 0


class SubagentEvent(_Event):
    """An event of a subagent, relayed to its parent."""

    # Its schema spans every event type: built at the first relayed event, not at import (start-up speed).
    model_config = ConfigDict(defer_build=True)
    kind: Literal["subagent_event"] = "subagent_event"
    task_id: str
    parent_tool_call_id: str
    subagent_type: str
    event: Event


Event = Annotated[
    SessionStartedEvent
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | MessageAddedEvent
    | ToolCallStartedEvent
    | ToolCallFinishedEvent
    | ToolCallStreamingEvent
    | ToolOutputEvent
    | UsageEvent
    | RetryEvent
    | ErrorEvent
    | NoticeEvent
    | HookRunEvent
    | AgentMessageEvent
    | CompactionEvent
    | RunFinishedEvent
    | SubagentBlockAddedEvent
    | SubagentBlockUpdatedEvent
    | SubagentBlockFinishedEvent
    | SubagentMergedEvent
    | BackgroundStartedEvent
    | BackgroundFinishedEvent
    | SubagentEvent,
    Field(discriminator="kind"),
]

EventSink = Callable[[Event], None]


def build_relay_schema() -> None:
    """Build `SubagentEvent`'s schema (every event type) ahead of the first relayed event."""
    SubagentEvent.model_rebuild()


def unwrap(event: Event) -> tuple[tuple[SubagentEvent, ...], Event]:
    """A relayed event's wrappers, outermost first, and the event inside them.

    An event of a subagent at depth N arrives in N `SubagentEvent` wrappers; the innermost wrapper
    names the task (and block) the event belongs to. A main-agent event has no wrappers.
    """
    wrappers: list[SubagentEvent] = []
    while isinstance(event, SubagentEvent):
        wrappers.append(event)
        event = event.event
    return tuple(wrappers), event


class MessageManager:
    """Consumer base: `manager(event)` calls `on_<kind>(event)` if defined, else `on_other(event)`."""

    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"on_{event.kind}", None)
        if handler is not None:
            handler(event)
        else:
            self.on_other(event)

    def on_other(self, event: Event) -> None:
        """Events this manager does not handle."""


class EventBus:
    """Fans one event stream out to every subscriber, in subscription order."""

    def __init__(self) -> None:
        self._subscribers: list[EventSink] = []

    def subscribe(self, sink: EventSink) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it."""
        self._subscribers.append(sink)
        return lambda: self._subscribers.remove(sink)

    def __call__(self, event: Event) -> None:
        """Hand `event` to every subscriber; one that fails is logged and the others still get it (a broken
        printer must not keep the store, or the session budget, from seeing a request)."""
        for sink in tuple(self._subscribers):
            try:
                sink(event)
            except Exception:
                log.exception("event consumer %r failed on %s", sink, event.kind)
