"""What every one-shot printer shares: the run's summary (`RunSummary`), the `Printer` base (tool-call
records, notices, hooks and compactions on stderr, the turn's clocks) and `scrubbed`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from agentcli.events import (
    CompactionEvent,
    Event,
    HookRunEvent,
    MessageManager,
    NoticeEvent,
    SubagentEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    UsageEvent,
    unwrap,
)
from agentcli.figures import compaction_text
from agentcli.llm import Usage
from agentcli.stream_json import new_uuid, result_subtype, usage_dict
from agentcli.text import one_line, terminal_safe


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


def scrubbed(data: Any) -> Any:
    """`data` with text that is not valid Unicode (a lone surrogate from the model) as U+FFFD."""
    from agentcli.safe_text import scrub_deep

    return scrub_deep(data)
