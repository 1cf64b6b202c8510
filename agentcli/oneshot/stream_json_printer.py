"""`--output-format stream-json`: Claude Code's line shapes (`agentcli.stream_json`), a line each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TextIO

from agentcli.events import (
    BackgroundFinishedEvent,
    BackgroundStartedEvent,
    CompactionEvent,
    Event,
    MessageAddedEvent,
    RetryEvent,
    SessionStartedEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallFinishedEvent,
    UsageEvent,
    unwrap,
)
from agentcli.llm import Message, ToolResultBlock, ToolUseBlock, Usage
from agentcli.oneshot.json_printer import JsonPrinter
from agentcli.oneshot.printer_base import RunSummary, scrubbed
from agentcli.stream_json import (
    TASK_NOTIFICATION_STATUS,
    TASK_TYPE,
    assistant_line,
    background_notification_line,
    background_started_line,
    dumps,
    init_line,
    new_uuid,
    stream_event_line,
    system_line,
    usage_dict,
    user_line,
)


@dataclass(slots=True)
class _Agent:
    """What the stream-json printer remembers of one agent (main or subagent) of the run."""

    model: str
    usage: Usage | None = None  # its last request's, for the assistant message that comes next
    block: int = -1  # partial messages: the open content block's index (-1: no message open)
    block_kind: str = ""  # text | thinking


class StreamJsonPrinter(JsonPrinter):
    """`--output-format stream-json`: Claude Code's line shapes (see `agentcli.stream_json`).

    A `system`/`init` line first; an `assistant` line per model reply and a `user` line per set of tool
    results, a subagent's with `parent_tool_use_id` (its Task call's id); `system` lines `task_started`,
    `task_notification` (of subagents, `local_agent`, and of background Bash commands, `local_bash`),
    `compact_boundary` and `api_retry`; with `partial`, `stream_event` lines for
    text and thinking as they stream; the result object last. Every line carries the main session's id.
    """

    def __init__(self, out: TextIO, err: TextIO, *, verbose: bool = False, partial: bool = False,
                 permission_mode: str = "") -> None:
        super().__init__(out, err, verbose=verbose)
        self.partial = partial
        self.permission_mode = permission_mode
        self.session_id = ""
        self._agents: dict[str, _Agent] = {}  # by the agent's own session id
        self._task_calls: dict[str, str] = {}  # task id -> its Task call's tool_use id
        self._tool_results: dict[str, dict[str, Any]] = {}  # tool_use id -> its `tool_use_result` (WebSearch's)

    def emit(self, line: dict[str, Any]) -> None:
        """Write one line (text that is not valid Unicode becomes U+FFFD)."""
        try:
            text = dumps(line)
        except ValueError:  # text that is not valid Unicode (a lone surrogate from the model): U+FFFD
            text = dumps(scrubbed(line))
        self.write_line(text)

    def __call__(self, event: Event) -> None:
        super().__call__(event)  # tool call records, notices on stderr, the request clock
        wrappers, inner = unwrap(event)
        parent = wrappers[-1].parent_tool_call_id if wrappers else None
        if isinstance(inner, SessionStartedEvent):
            self._started(inner, main=not wrappers)
        elif isinstance(inner, UsageEvent):  # the model that answered, and what its request spent
            agent = self._agent(inner.session_id)
            agent.model, agent.usage = inner.model or agent.model, inner.usage
        elif isinstance(inner, MessageAddedEvent):
            self._message(inner, parent)
        elif isinstance(inner, ToolCallFinishedEvent) and inner.tool_use_result is not None:
            self._tool_results[inner.tool_call_id] = inner.tool_use_result
        elif isinstance(inner, (TextDeltaEvent, ThinkingDeltaEvent)) and self.partial:
            self._delta(inner, parent)
        elif isinstance(inner, SubagentBlockAddedEvent):
            self._task_calls[inner.task_id] = inner.parent_tool_call_id
            self.emit(system_line(
                "task_started", self.session_id, task_id=inner.task_id, tool_use_id=inner.parent_tool_call_id,
                description=inner.description, task_type=TASK_TYPE, subagent_type=inner.subagent_type,
                model=inner.model, parent_tool_use_id=parent,
            ))
        elif isinstance(inner, SubagentBlockFinishedEvent):
            tokens = (inner.input_tokens or 0) + (inner.output_tokens or 0)
            self.emit(system_line(
                "task_notification", self.session_id, task_id=inner.task_id,
                tool_use_id=self._task_calls.get(inner.task_id), status=TASK_NOTIFICATION_STATUS[inner.status],
                output_file="", summary=inner.short_result,
                usage={"total_tokens": tokens, "tool_uses": inner.tool_calls or 0,
                       "duration_ms": round(inner.elapsed_ms)},
                task_status=inner.status, error=inner.error, cost_usd=inner.cost_usd, parent_tool_use_id=parent,
            ))
        elif isinstance(inner, BackgroundStartedEvent):  # a `local_bash` task (never relayed: it names its agent)
            self.emit(background_started_line(inner, self.session_id))
        elif isinstance(inner, BackgroundFinishedEvent):
            self.emit(background_notification_line(inner, self.session_id))
        elif isinstance(inner, CompactionEvent):
            self.emit(system_line(
                "compact_boundary", self.session_id,
                compact_metadata={"trigger": inner.trigger, "pre_tokens": inner.tokens_before},
                mode=inner.mode, post_tokens=inner.tokens_after, parent_tool_use_id=parent,
            ))
        elif isinstance(inner, RetryEvent):
            self.emit(system_line(
                "api_retry", self.session_id, attempt=inner.attempt,
                retry_delay_ms=round(inner.delay_seconds * 1000), error=inner.error, parent_tool_use_id=parent,
            ))

    def _agent(self, session_id: str, model: str = "") -> _Agent:
        agent = self._agents.get(session_id)
        if agent is None:
            agent = self._agents[session_id] = _Agent(model)
        return agent

    def _started(self, event: SessionStartedEvent, *, main: bool) -> None:
        self._agent(event.session_id, event.model_id or event.model)
        if not main or self.session_id:
            return
        from agentcli import __version__

        self.session_id = event.session_id
        self.emit(init_line(
            event.session_id, cwd=event.workspace, model=event.model_id or event.model, tools=event.tools,
            permission_mode=self.permission_mode, version=__version__,
        ))

    def _message(self, event: MessageAddedEvent, parent: str | None) -> None:
        message = event.message
        agent = self._agent(event.session_id)
        if message.role == "assistant":
            if self.partial and agent.block >= 0:
                self._close_message(agent, parent, message)
            self.emit(assistant_line(message, session_id=self.session_id, parent_tool_use_id=parent,
                                      model=agent.model, usage=agent.usage))
            agent.usage = None
        elif parent is not None or any(isinstance(b, ToolResultBlock) for b in message.content):
            # tool results, and a subagent's prompt; the main agent's own prompt is not echoed (Claude Code's way)
            line = user_line(message, session_id=self.session_id, parent_tool_use_id=parent)
            recorded = [self._tool_results.pop(b.tool_use_id) for b in message.content
                        if isinstance(b, ToolResultBlock) and b.tool_use_id in self._tool_results]
            if recorded:  # Claude Code's `tool_use_result` beside the message (one line holds one call's there)
                line["tool_use_result"] = recorded[0] if len(recorded) == 1 else recorded
            self.emit(line)

    def _delta(self, event: TextDeltaEvent | ThinkingDeltaEvent, parent: str | None) -> None:
        agent = self._agent(event.session_id)
        kind = "thinking" if isinstance(event, ThinkingDeltaEvent) else "text"
        if agent.block < 0:
            self._stream(parent, {"type": "message_start", "message": {
                "id": f"msg_{new_uuid().replace('-', '')[:24]}", "type": "message", "role": "assistant",
                "model": agent.model, "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": usage_dict(Usage())}})
        if agent.block_kind != kind:
            if agent.block >= 0 and agent.block_kind:
                self._stream(parent, {"type": "content_block_stop", "index": agent.block})
            agent.block, agent.block_kind = agent.block + 1, kind
            start = {"type": "thinking", "thinking": "", "signature": ""} if kind == "thinking" else {
                "type": "text", "text": ""}
            self._stream(parent, {"type": "content_block_start", "index": agent.block, "content_block": start})
        delta = {"type": "thinking_delta", "thinking": event.text} if kind == "thinking" else {
            "type": "text_delta", "text": event.text}
        self._stream(parent, {"type": "content_block_delta", "index": agent.block, "delta": delta})

    def _close_message(self, agent: _Agent, parent: str | None, message: Message) -> None:
        if agent.block_kind:
            self._stream(parent, {"type": "content_block_stop", "index": agent.block})
        stop = "tool_use" if any(isinstance(b, ToolUseBlock) for b in message.content) else "end_turn"
        self._stream(parent, {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                              "usage": usage_dict(agent.usage or Usage())})
        self._stream(parent, {"type": "message_stop"})
        agent.block, agent.block_kind = -1, ""

    def _stream(self, parent: str | None, event: dict[str, Any]) -> None:
        self.emit(stream_event_line(event, session_id=self.session_id, parent_tool_use_id=parent))

    def finish(self, summary: RunSummary) -> None:
        """The result line; the next turn (`--input-format stream-json`) starts afresh."""
        super().finish(summary)
        self.begin()
