"""`--output-format text`: assistant text on stdout as it streams; progress, errors and the usage line on
stderr."""

from __future__ import annotations

import os
from typing import Any, TextIO

from agentcli.events import (
    CompactionEvent,
    HookRunEvent,
    NoticeEvent,
    RetryEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentEvent,
    SubagentMergedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    unwrap,
)
from agentcli.figures import format_cost, tokens_text
from agentcli.llm import Usage
from agentcli.oneshot.printer_base import Printer, RunSummary
from agentcli.text import terminal_safe

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


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False
