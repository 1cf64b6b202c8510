"""One-shot printers over the event stream: text, json (one final result object), stream-json (Claude Code's
line shapes, `agentcli.stream_json`) and events (agentcli's own typed events, a line each)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from agentcli.events import (
    CompactionEvent,
    Event,
    HookRunEvent,
    MessageAddedEvent,
    MessageManager,
    NoticeEvent,
    RetryEvent,
    SessionStartedEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentEvent,
    SubagentMergedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    UsageEvent,
    unwrap,
)
from agentcli.figures import compaction_text, format_cost, tokens_text
from agentcli.llm.base import Message, ToolResultBlock, ToolUseBlock
from agentcli.llm.usage import Usage
from agentcli.stream_json import (
    TASK_NOTIFICATION_STATUS,
    TASK_TYPE,
    assistant_line,
    dumps,
    init_line,
    new_uuid,
    result_subtype,
    stream_event_line,
    system_line,
    usage_dict,
    user_line,
)
from agentcli.text import json_safe, one_line, terminal_safe


@dataclass(slots=True)
class RunSummary:
    """What the printers report at the end of a run."""

    status: str
    result: str
    session_id: str
    model: str
    turns: int
    error: str | None
    usage: dict[str, Any]
    cost_usd: float | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None  # the last model turn's: end_turn, tool_use, max_tokens, refusal, ...
    ledger: dict[str, Any] = field(default_factory=dict)  # own / delegated / total (agentcli.agent.ledger)
    duration_ms: float = 0.0  # the run's wall time (the printer's clock)
    duration_api_ms: float = 0.0  # time spent in model requests, the whole tree's (overlapping ones add up)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of the final result object: Claude Code's result message (`subtype`, `is_error`,
        `num_turns`, `total_cost_usd`, Anthropic-named `usage`, ...) with agentcli's own keys beside them.

        `total_cost_usd` is 0 where the price is unknown (Claude Code's is always a number); `cost_usd`
        is null then. `usage` holds both naming schemes of the cache tokens."""
        counts = self.usage
        tokens = Usage(counts.get("input_tokens", 0), counts.get("output_tokens", 0),
                       counts.get("cache_read_tokens", 0), counts.get("cache_write_tokens", 0))
        return {
            "type": "result",
            "subtype": result_subtype(self.status),
            "is_error": self.status != "completed",
            "duration_ms": round(self.duration_ms),
            "duration_api_ms": round(self.duration_api_ms),
            "num_turns": self.turns,
            "total_cost_usd": self.cost_usd or 0.0,
            **({"errors": [self.error]} if self.error and self.status != "completed" else {}),
            "uuid": new_uuid(),
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "session_id": self.session_id,
            "model": self.model,
            "turns": self.turns,
            "usage": {**counts, **usage_dict(tokens)},
            "cost_usd": self.cost_usd,
            "tool_calls": self.tool_calls,
            "tasks": self.tasks,
            "stop_reason": self.stop_reason,
            "ledger": self.ledger,
        }


class Printer(MessageManager):
    """Base of the one-shot printers: records tool calls for the summary."""

    def __init__(self, out: TextIO, err: TextIO, *, verbose: bool = False) -> None:
        self.out = out
        self.err = err
        self.verbose = verbose
        self.tool_calls: dict[str, dict[str, Any]] = {}
        self.started = time.monotonic()
        self.api_ms = 0.0  # the model requests' time, the whole tree's

    def __call__(self, event: Event) -> None:
        _, inner = unwrap(event)
        if isinstance(inner, UsageEvent):
            self.api_ms += inner.duration_ms
        super().__call__(event)

    def begin(self) -> None:
        """A new turn starts (`--input-format stream-json`): its clock and its tool calls start afresh."""
        self.started, self.api_ms = time.monotonic(), 0.0
        self.tool_calls = {}

    def timed(self, summary: RunSummary) -> RunSummary:
        """`summary` with this turn's wall time and model-request time."""
        return replace(summary, duration_ms=(time.monotonic() - self.started) * 1000, duration_api_ms=self.api_ms)

    def on_tool_call_started(self, event: ToolCallStartedEvent) -> None:
        self.tool_calls[event.tool_call_id] = {
            "id": event.tool_call_id,
            "agent": event.agent,
            "name": event.name,
            "summary": event.summary,
            "status": "running",
        }

    def on_tool_call_finished(self, event: ToolCallFinishedEvent) -> None:
        record = self.tool_calls.setdefault(event.tool_call_id, {"id": event.tool_call_id, "name": event.name})
        record["status"] = "error" if event.is_error else "ok"
        record["duration_ms"] = round(event.duration_ms, 1)
        record["code"] = event.code  # SPEC §4 error code (NOT_FOUND, TIMEOUT, ...); null when none
        if event.short_result is not None:
            record["short_result"] = event.short_result
        if event.files_modified:
            record["files_modified"] = event.files_modified
        if event.diff is not None:  # the lines an edit changed (the diff itself is on the stream-json event)
            record["lines_added"], record["lines_removed"] = event.diff.added, event.diff.removed

    def on_notice(self, event: NoticeEvent) -> None:
        """A warning that does not stop the run: one line on stderr, in every output format."""
        self.err.write(f"agentcli: {event.level}: {event.message}\n")
        self.err.flush()

    def on_hook_run(self, event: HookRunEvent) -> None:
        """A hook ran: with --verbose one line on stderr (in every output format) saying what it decided."""
        if not self.verbose:
            return
        on = f" [{event.tool_name}]" if event.tool_name else ""
        code = f" exit {event.exit_code}" if event.exit_code is not None else ""
        said = f": {one_line(event.reason, 200)}" if event.reason else ""
        line = (f"agentcli: hook {event.hook_event}{on} {one_line(event.command, 80)} ({event.source}) → "
                f"{event.outcome}{code}{said} ({event.duration_ms:.0f} ms)")
        self._line(terminal_safe(line))

    def on_compaction(self, event: CompactionEvent, agent: str = "") -> None:
        """A context was compacted: one line on stderr, in every output format (a subagent's with --verbose)."""
        line = compaction_text(event.mode, event.tokens_before, event.tokens_after, event.window)
        self._line(f"agentcli: {agent + ': ' if agent else ''}{line}")

    def _line(self, text: str) -> None:
        self.err.write(text + "\n")
        self.err.flush()

    def on_subagent_event(self, event: SubagentEvent) -> None:
        _, inner = unwrap(event)
        if isinstance(inner, NoticeEvent):
            self.on_notice(inner)
        elif isinstance(inner, HookRunEvent):
            self.on_hook_run(inner)
        elif isinstance(inner, CompactionEvent) and self.verbose:
            self.on_compaction(inner, terminal_safe(inner.agent))

    def finish(self, summary: RunSummary) -> None:
        """Print the end of the run."""


THINKING_PREFIX = "thinking: "
_DIM, _UNDIM = "\x1b[2m", "\x1b[22m"


class TextPrinter(Printer):
    """Assistant text to stdout as it streams; progress, errors and the usage line to stderr.

    The main agent's thinking is not printed, except with --verbose: then it streams to stderr, each
    stretch of it on its own lines after a `thinking: ` prefix (dimmed on a terminal), never on stdout.
    """

    def __init__(self, out: TextIO, err: TextIO, *, verbose: bool = False) -> None:
        super().__init__(out, err, verbose=verbose)
        self._mid_line = False
        self._thinking = False
        self._dim = verbose and _is_terminal(err) and not os.environ.get("NO_COLOR")

    def on_thinking_delta(self, event: ThinkingDeltaEvent) -> None:
        if not self.verbose:
            return
        if not self._thinking:
            self._break_stdout_line()
            self.err.write((_DIM if self._dim else "") + THINKING_PREFIX)
            self._thinking = True
        self.err.write(terminal_safe(event.text).replace("\n", "\n  "))
        self.err.flush()

    def _end_thinking(self) -> None:
        if self._thinking:
            self._thinking = False
            self.err.write((_UNDIM if self._dim else "") + "\n")
            self.err.flush()

    def _break_stdout_line(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False

    def _line(self, text: str) -> None:
        self._say(text)

    def _say(self, line: str) -> None:
        self._end_thinking()
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False
        self.err.write(terminal_safe(line) + "\n")
        self.err.flush()

    def on_notice(self, event: NoticeEvent) -> None:
        self._say(f"agentcli: {event.level}: {event.message}")

    def on_text_delta(self, event: TextDeltaEvent) -> None:
        self._end_thinking()
        self.out.write(terminal_safe(event.text))  # a model's escape sequences never reach the terminal
        self.out.flush()
        self._mid_line = not event.text.endswith("\n")

    def on_tool_call_started(self, event: ToolCallStartedEvent) -> None:
        super().on_tool_call_started(event)
        if event.name != "Task":  # a Task call shows as its subagent's line
            self._say(f"  → {event.name} {event.summary}".rstrip())

    def on_tool_call_finished(self, event: ToolCallFinishedEvent) -> None:
        super().on_tool_call_finished(event)
        first = event.output.strip().splitlines()[0] if event.output.strip() else ""
        if event.is_error:
            self._say(f"  ✗ {event.name}: {first[:200]}")
        elif self.verbose and event.diff is not None:
            self._say(f"    {event.diff.stat} {event.diff.path}")  # `+12 −3 src/app.py`, not the whole diff
        elif self.verbose and first and event.name != "Task":
            self._say(f"    {first[:200]}")

    def on_subagent_block_added(self, event: SubagentBlockAddedEvent, depth: int = 0) -> None:
        indent = "  " * (depth + 1)
        self._say(f"{indent}🤖 Subagent [{event.subagent_type}]: {event.description}")

    def on_subagent_block_finished(self, event: SubagentBlockFinishedEvent, depth: int = 0) -> None:
        indent = "  " * (depth + 1)
        mark = "✓" if event.status == "completed" else "✗"
        self._say(f"{indent}{mark} {event.short_result} ({event.elapsed_ms / 1000:.1f}s)")

    def on_subagent_merged(self, event: SubagentMergedEvent, depth: int = 0) -> None:
        indent = "  " * (depth + 1)
        if event.merge == "merged":
            self._say(f"{indent}  ⎇ merged into the workspace: {terminal_safe(', '.join(event.files_merged))}")
        elif event.merge in ("conflict", "kept"):
            what = (f"conflict in {', '.join(event.files_conflicted)}" if event.merge == "conflict"
                    else "not merged")
            self._say(terminal_safe(f"{indent}  ⎇ {what}: changes kept on {event.branch} ({event.look})"))

    def on_subagent_event(self, event: SubagentEvent) -> None:
        wrappers, inner = unwrap(event)
        depth = len(wrappers)
        indent = "  " * (depth + 1)
        if isinstance(inner, SubagentMergedEvent):
            self.on_subagent_merged(inner, depth)
        elif isinstance(inner, NoticeEvent):
            self.on_notice(inner)
        elif isinstance(inner, HookRunEvent):
            self.on_hook_run(inner)
        elif isinstance(inner, CompactionEvent) and self.verbose:
            self.on_compaction(inner, terminal_safe(inner.agent))
        elif isinstance(inner, SubagentBlockAddedEvent):
            self.on_subagent_block_added(inner, depth)
        elif isinstance(inner, SubagentBlockFinishedEvent):
            self.on_subagent_block_finished(inner, depth)
        elif self.verbose and isinstance(inner, ToolCallStartedEvent):
            self._say(f"{indent}→ {inner.name} {inner.summary}".rstrip())
        elif isinstance(inner, ToolCallFinishedEvent) and inner.is_error and self.verbose:
            first = inner.output.strip().splitlines()[0] if inner.output.strip() else ""
            self._say(f"{indent}✗ {inner.name}: {first[:200]}")

    def on_retry(self, event: RetryEvent) -> None:
        self._say(f"  ⟳ {event.error}; retry {event.attempt} in {event.delay_seconds:.1f}s")

    def finish(self, summary: RunSummary) -> None:
        self._end_thinking()
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
        if summary.status != "completed":
            return  # the runner prints the one-line reason
        # The whole tree's figures (the json's `usage` and `cost_usd`), then the subagents' part of them.
        spent = _spent(summary.usage, summary.cost_usd)
        delegated = summary.ledger.get("delegated") or {}
        if delegated.get("requests"):
            spent += f" (subagents {_spent(delegated, delegated['cost_usd'])})"
        self.err.write(
            terminal_safe(f"[{summary.model} · {summary.turns} turns · {spent} · session {summary.session_id}]") + "\n"
        )
        self.err.flush()


def _spent(counts: dict[str, Any], cost: float | None) -> str:
    """Json token counts (`Spend.as_dict`'s fields) and a cost, as `figures` reads them for people."""
    usage = Usage(counts["input_tokens"], counts["output_tokens"], counts["cache_read_tokens"],
                  counts["cache_write_tokens"])
    return f"{tokens_text(usage)} · {format_cost(cost, unknown='price unknown')}"


class JsonPrinter(Printer):
    """Prints nothing until the end, then one JSON object (the result line of stream-json too)."""

    def finish(self, summary: RunSummary) -> None:
        data = self.timed(summary).as_dict()
        data["tool_calls"] = list(self.tool_calls.values())
        self.write_line(json.dumps(data, ensure_ascii=False))

    def write_line(self, line: str) -> None:
        """One JSON line on stdout, C1 controls and bidi overrides escaped."""
        self.out.write(json_safe(line) + "\n")
        self.out.flush()


class EventsPrinter(JsonPrinter):
    """`--output-format events`: agentcli's own typed events, one JSON line each (`kind`; a subagent's
    wrapped in `subagent_event` with its task id), then the final result object."""

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        try:
            line = event.model_dump_json()
        except ValueError:  # text that is not valid Unicode (a lone surrogate from the model): U+FFFD
            line = json.dumps(_scrubbed(event.model_dump(mode="json")), ensure_ascii=False)
        self.write_line(line)


def _scrubbed(data: Any) -> Any:
    from agentcli.safe_text import scrub_deep

    return scrub_deep(data)


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
    `task_notification`, `compact_boundary` and `api_retry`; with `partial`, `stream_event` lines for
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

    def emit(self, line: dict[str, Any]) -> None:
        """Write one line (text that is not valid Unicode becomes U+FFFD)."""
        try:
            text = dumps(line)
        except ValueError:  # text that is not valid Unicode (a lone surrogate from the model): U+FFFD
            text = dumps(_scrubbed(line))
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
            self.emit(user_line(message, session_id=self.session_id, parent_tool_use_id=parent))

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


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def make_printer(fmt: str, out: TextIO, err: TextIO, *, verbose: bool = False, partial: bool = False,
                 permission_mode: str = "") -> Printer:
    """The printer for `--output-format` (`partial`: stream-json's `--include-partial-messages`)."""
    if fmt == "json":
        return JsonPrinter(out, err, verbose=verbose)
    if fmt == "stream-json":
        return StreamJsonPrinter(out, err, verbose=verbose, partial=partial, permission_mode=permission_mode)
    if fmt == "events":
        return EventsPrinter(out, err, verbose=verbose)
    return TextPrinter(out, err, verbose=verbose)
