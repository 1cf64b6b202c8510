"""Supervisor: one running subagent — its AgentLoop, watchdog, stop, relay to the parent, output schema.

The supervisor counts what its subagent does (tool calls, files, tokens), enforces the task's
budgets, stops the run on a wall-clock or idle timeout or on request, and passes every event up
to the parent wrapped in `SubagentEvent`. A stop ends the child's turn through `AgentLoop.stop`,
so the child's run and session end with the status the task records (`budget_exceeded`,
`timed_out`, `cancelled`), its partial result kept. It knows nothing of the task table: the
runner builds it, gives it the loop to run, and reads its counters and outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from agentcli.agent import RunOutcome, Session
from agentcli.events import (
    Event,
    EventSink,
    SubagentBlockUpdatedEvent,
    SubagentEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    UsageEvent,
    unwrap,
)
from agentcli.llm import Message, ResolvedModel
from agentcli.status import TASK_STATUS_OF_RUN, StopStatus, TaskStatus
from agentcli.store import TaskRecord
from agentcli.subagents.budget import Budgets, PriceNotices
from agentcli.text import one_line

log = logging.getLogger(__name__)
Outcome = tuple[TaskStatus, str, str | None]  # (status, result text, error)


class ChildLoop(Protocol):
    """What a supervisor drives: an `AgentLoop`, or a remote task's stand-in for one (`remote.RemoteLoop`)."""

    inbox: Callable[[], list[str]] | None

    async def run(self, prompt: str | Message) -> RunOutcome: ...

    def stop(self, status: Any, reason: str) -> bool: ...

    def last_text(self) -> str: ...


class Supervisor:
    """Owns one subagent run. `relay` is the child's event sink; `run(loop)` runs it to an end."""

    def __init__(
        self,
        record: TaskRecord,
        session: Session,
        parent_session: Session,
        emit_parent: EventSink,
        budgets: Budgets,
        timeout: float,
        prices: PriceNotices | None = None,
    ) -> None:
        self.record = record
        self.session = session
        self.parent_session = parent_session
        self.emit_parent = emit_parent
        self.budgets = budgets
        self.timeout = timeout
        self.prices = prices or PriceNotices()  # the session tree's: an unpriced model is reported once
        self.started = 0.0
        self.last_progress = 0.0
        self.in_flight_tools = 0
        self.activity = ""  # the subagent's latest tool call, one line (ListAgents)
        self.loop: ChildLoop | None = None
        self.loop_task: asyncio.Task[RunOutcome] | None = None
        self.stopped: tuple[StopStatus, str] | None = None  # (status, reason) when a limit or a person stopped it
        self.cancel_requested = asyncio.Event()
        self.tool_counts: Counter[str] = Counter()
        self.files: dict[str, None] = {}

    # --- progress and stop ------------------------------------------------------------------------

    def touch(self) -> None:
        """Something happened: the subagent is not idle."""
        self.last_progress = time.monotonic()

    def begin(self) -> None:
        """The subagent got its slot: its clocks start."""
        self.started = self.last_progress = time.monotonic()

    @property
    def elapsed_ms(self) -> float:
        """Milliseconds since it started (0 while queued)."""
        return (time.monotonic() - self.started) * 1000 if self.started else 0.0

    def stop(self, status: StopStatus, reason: str) -> None:
        """Stop the run (a limit was hit, or someone cancelled it); its partial work is kept.

        The running turn ends through `AgentLoop.stop`, so the child's run (its RunFinishedEvent and
        session row) ends with the same status and reason as the task. The first stop stands.
        """
        if self.stopped is None:
            self.stopped = (status, reason)
        self.cancel_requested.set()
        task = self.loop_task
        if task is None or task.done():
            return  # queued, between turns, or done: `_run_once` reads `stopped`
        status, reason = self.stopped
        if self.loop is None or not self.loop.stop(status, reason):
            task.cancel()  # its turn has not begun: it ends before it starts

    def last_text(self) -> str | None:
        """What the subagent produced so far (None before its loop exists)."""
        return self.loop.last_text() if self.loop else None

    # --- relay --------------------------------------------------------------------------------------

    def relay(self, event: Event) -> None:
        """The child's event sink: count, account, enforce budgets, and pass the event up wrapped."""
        self.touch()
        record = self.record
        kind = event.kind
        if isinstance(event, ToolCallStartedEvent):
            self.in_flight_tools += 1
            self.tool_counts[event.name] += 1
            self.activity = f"{event.name} {event.summary}".strip()
            record.tool_calls += 1
            log.debug("subagent %s (%s) tool call %s: %s", record.task_id, event.agent, event.name, event.summary)
        elif isinstance(event, ToolCallFinishedEvent):
            self.in_flight_tools -= 1
            for path in event.files_modified:
                self.files[path] = None
            log.debug(
                "subagent %s (%s) tool call %s %s in %.0f ms%s", record.task_id, event.agent, event.name,
                "failed" if event.is_error else "ok", event.duration_ms, f" [{event.code}]" if event.code else "",
            )
        _, inner = unwrap(event)
        if isinstance(inner, UsageEvent):  # a request of this subagent or of one anywhere below it
            self.parent_session.ledger.add_delegated(inner.usage, inner.cost_usd)
            self.count_tokens()
            if self.budgets.max_cost_usd is not None:
                budget = f"the cost budgets of tasks (task {record.task_id}: ${self.budgets.max_cost_usd:.4f})"
                session = self.parent_session
                self.prices.check(inner, budget, self.emit_parent, session.id, session.agent, kind="task")
        self.emit_parent(
            SubagentEvent(
                session_id=self.parent_session.id,
                agent=self.parent_session.agent,
                task_id=record.task_id,
                parent_tool_call_id=record.parent_tool_call_id or "",
                subagent_type=record.subagent_type,
                event=event,
            )
        )
        if kind == "tool_call_finished" or isinstance(inner, UsageEvent):
            self.report()
            if reason := self.budgets.exceeded(self.session.ledger.total):
                self.stop("budget_exceeded", reason)
        if kind == "tool_call_started" and record.tool_calls > self.budgets.max_tool_calls:
            # max_tool_calls calls are allowed; the one beyond them stops the run.
            limit = self.budgets.max_tool_calls
            self.stop("budget_exceeded", f"tool call limit reached ({limit} calls)")

    def report(self) -> None:
        """Tell the parent the task's status and counters (its block in the UI)."""
        record = self.record
        event = SubagentBlockUpdatedEvent(
            session_id=self.parent_session.id,
            agent=self.parent_session.agent,
            task_id=record.task_id,
            status=record.status,
            tool_calls=record.tool_calls,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            cache_read_tokens=record.cache_read_tokens,
            cache_write_tokens=record.cache_write_tokens,
            cost_usd=record.cost_usd,
            elapsed_ms=self.elapsed_ms,
        )
        try:
            self.emit_parent(event)
        except Exception:
            log.exception("event consumer failed on %s", event.kind)

    def count_tokens(self) -> None:
        """Copy the subagent's ledger total (its whole subtree) into the task record."""
        total = self.session.ledger.total
        record = self.record
        record.input_tokens = total.usage.input_tokens
        record.output_tokens = total.usage.output_tokens
        record.cache_read_tokens = total.usage.cache_read_tokens
        record.cache_write_tokens = total.usage.cache_write_tokens
        record.cost_usd = total.cost_usd

    # --- running ------------------------------------------------------------------------------------

    async def run(self, loop: ChildLoop, message: str | Message, output_schema: dict[str, Any] | None) -> Outcome:
        """Run the subagent to an end, with one repair turn when its answer misses `output_schema`."""
        self.loop = loop
        status, result, error = await self._run_once(message)
        while status == "completed" and loop.inbox is not None and (letters := loop.inbox()):
            status, result, error = await self._run_once("\n\n".join(letters))  # sent as it finished: it reads them
        if status != "completed" or output_schema is None:
            return status, result, error
        try:
            problem = await asyncio.to_thread(schema_problem, result, output_schema)
            if problem is None:
                return status, result, error
            repair = (
                f"Your answer does not satisfy the required JSON schema: {problem}. "
                "Reply again with only the corrected JSON document."
            )
            status, result, error = await self._run_once(repair)
            if status == "completed":
                problem = await asyncio.to_thread(schema_problem, result, output_schema)
                if problem is not None:
                    return "failed", result, f"output_schema not satisfied after one repair turn: {problem}"
        except Exception as exc:  # never leave the task running: any failure to check ends it as failed
            return "failed", result, f"output_schema could not be checked: {_one_line(exc)[:300]}"
        return status, result, error

    async def _run_once(self, message: str | Message) -> Outcome:
        loop = self.loop
        assert loop is not None
        if self.stopped is not None:  # stopped before it could start
            return self.stopped[0], loop.last_text(), self.stopped[1]
        task = asyncio.create_task(loop.run(message), name=f"subagent-{self.record.task_id}")
        self.loop_task = task
        watchdog = asyncio.create_task(self._watch(task))
        try:
            outcome = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if (current is not None and current.cancelling()) or self.stopped is None:
                raise  # the caller itself was cancelled: propagate down and up
            status, reason = self.stopped  # stopped before its turn began (a stop that ends a turn returns)
            return status, loop.last_text(), reason
        finally:
            watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watchdog
        return self._judged(outcome)

    def _judged(self, outcome: RunOutcome) -> Outcome:
        """The task's status, result and error for how its run ended: a run that ended without a final answer
        (an empty reply, a reply cut by a limit or refused) is never `completed`; its error says what is missing."""
        status = TASK_STATUS_OF_RUN[outcome.status]
        if outcome.status == "completed" and (missing := _missing_answer(outcome, self.session.model)) is not None:
            status, error = missing
            return status, outcome.marked_result(), error
        return status, outcome.marked_result(), outcome.error

    async def _watch(self, task: asyncio.Task[RunOutcome]) -> None:
        """Stop the run at its wall-clock deadline, or when its model stream makes no progress for too long.

        Idle time counts only while no tool call is in flight: tools have their own timeouts, and a
        tool may be waiting for the person to approve it.
        """
        idle = self.budgets.idle_seconds
        wall_deadline = self.started + self.timeout
        while not task.done():
            now = time.monotonic()
            if now >= wall_deadline:
                self.stop("timed_out", f"Subagent task timed out after {round(self.timeout * 1000)}ms")
                return
            idle_deadline = self.last_progress + idle if self.in_flight_tools == 0 else now + idle
            if now >= idle_deadline:
                elapsed = round((now - self.started) * 1000)
                self.stop(
                    "timed_out",
                    f"Subagent task timed out after {elapsed}ms (no model output or tool progress for "
                    f"{idle:g}s, task_tool.idle_timeout_seconds)",
                )
                return
            await asyncio.sleep(max(0.005, min(wall_deadline, idle_deadline) - now))


def _missing_answer(outcome: RunOutcome, model: ResolvedModel) -> tuple[TaskStatus, str] | None:
    """Why a run the loop calls completed gave no final answer (status and error), or None when it did."""
    if outcome.stop_reason == "max_tokens":
        limit = f"max_output_tokens = {model.max_output_tokens}"
        return "budget_exceeded", f"its last reply was cut at the output token limit ({limit})"
    if outcome.stop_reason == "model_context_window_exceeded":
        return "budget_exceeded", "its last reply was cut: the conversation filled the model's context window"
    if outcome.stop_reason == "refusal":
        return "failed", "the model refused to answer"
    if outcome.empty or not outcome.result.strip():
        return "failed", "the model's last reply was empty"
    return None


def _one_line(text: object) -> str:
    return one_line(text) or type(text).__name__


def schema_problem(text: str, schema: dict[str, Any]) -> str | None:
    """Why `text` is not a JSON document satisfying `schema`, or None when it is.

    Raises when the check itself fails (a pattern out of time, a schema that turned out unusable).
    """
    from agentcli.subagents.schema import compile_schema, document_text, errors

    try:
        document = json.loads(document_text(text))
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at line {exc.lineno})"
    found = errors(compile_schema(schema), document)  # SchemaCheckError when a pattern runs out of time
    if not found:
        return None
    first = found[0]
    where = "/".join(str(p) for p in first.path) or "(root)"
    return f"{where}: {first.message}" + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
