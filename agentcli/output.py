"""One-shot printers over the event stream: text, json (one final object) and stream-json (a line an event)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, TextIO

from agentcli.events import (
    CompactionEvent,
    Event,
    HookRunEvent,
    MessageManager,
    NoticeEvent,
    RetryEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    unwrap,
)
from agentcli.figures import compaction_text, format_cost, tokens_text
from agentcli.llm.base import Usage
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

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of the final result object."""
        return {
            "type": "result",
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "session_id": self.session_id,
            "model": self.model,
            "turns": self.turns,
            "usage": self.usage,
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

    def on_subagent_event(self, event: SubagentEvent) -> None:
        wrappers, inner = unwrap(event)
        depth = len(wrappers)
        indent = "  " * (depth + 1)
        if isinstance(inner, NoticeEvent):
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
    """Prints nothing until the end, then one JSON object."""

    def finish(self, summary: RunSummary) -> None:
        data = summary.as_dict()
        data["tool_calls"] = list(self.tool_calls.values())
        self.out.write(json_safe(json.dumps(data, ensure_ascii=False)) + "\n")
        self.out.flush()


class StreamJsonPrinter(JsonPrinter):
    """One JSON line per event, then the final result object."""

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        try:
            line = event.model_dump_json()
        except ValueError:  # text that is not valid Unicode (a lone surrogate from the model): U+FFFD
            from agentcli.safe_text import scrub_deep

            line = json.dumps(scrub_deep(event.model_dump(mode="json")), ensure_ascii=False)
        self.out.write(json_safe(line) + "\n")
        self.out.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def make_printer(fmt: str, out: TextIO, err: TextIO, *, verbose: bool = False) -> Printer:
    """The printer for `--output-format`."""
    if fmt == "json":
        return JsonPrinter(out, err, verbose=verbose)
    if fmt == "stream-json":
        return StreamJsonPrinter(out, err, verbose=verbose)
    return TextPrinter(out, err, verbose=verbose)
