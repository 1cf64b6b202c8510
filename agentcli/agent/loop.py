"""AgentLoop: runs one session's turns — stream the model, run its tool calls, repeat — reporting events."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentcli.agent.compaction import Compaction, Compactor, SummaryReply, estimate_tokens
from agentcli.agent.session import Session
from agentcli.diffs import FileDiff
from agentcli.events import (
    STREAMING_STEP_CHARS,
    CompactionEvent,
    ErrorEvent,
    Event,
    EventSink,
    MessageAddedEvent,
    NoticeEvent,
    RetryEvent,
    RunFinishedEvent,
    SessionStartedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    ToolCallStreamingEvent,
    ToolOutputEvent,
    UsageEvent,
)
from agentcli.hooks.engine import HookEngine, HookVerdict
from agentcli.llm.base import (
    CHARS_PER_TOKEN,
    ContextOverflowError,
    Message,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderError,
    ResponseDone,
    StopReason,
    StreamRetry,
    StreamUsage,
    TextBlock,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
    tokens_for_chars,
)
from agentcli.llm.deprecation import announce_once
from agentcli.safe_text import scrub_model
from agentcli.status import RunStatus
from agentcli.text import defang_tags
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult, tool_specs

log = logging.getLogger(__name__)

CANCELLED_RESULT = "Cancelled: the run was stopped before this tool call finished."
MAX_STOP_HOOK_TURNS = 3  # a Stop hook may send the main agent back to work this many times per run
PriceFn = Callable[[str, str, Usage], float | None]


# Told to whoever reads a result (a parent agent, a script) when the last turn did not end normally.
STOP_MARKERS: dict[str, str] = {
    "max_tokens": "[cut: the reply reached the model's output token limit (max_output_tokens); it is incomplete]",
    "refusal": "[the model refused: this is not an answer]",
    "model_context_window_exceeded": "[cut: the conversation filled the model's context window; it is incomplete]",
}


@dataclass(slots=True)
class RunOutcome:
    """How a run ended and what it produced; `stop_reason` is the last model turn's."""

    status: RunStatus
    result: str
    turns: int
    error: str | None = None
    stop_reason: StopReason | None = None

    def marked_result(self) -> str:
        """The result with a visible marker when the last turn was cut at the token limit or refused."""
        marker = STOP_MARKERS.get(self.stop_reason or "")
        if marker is None or self.status != "completed":
            return self.result
        return f"{self.result}\n\n{marker}" if self.result.strip() else marker


class AgentLoop:
    """Drives one Session. Holds no global state: two loops in one process never see each other."""

    def __init__(
        self,
        session: Session,
        provider: Provider,
        tools: Sequence[Tool[Any]],
        context: ToolContext,
        emit: EventSink,
        *,
        max_turns: int = 50,
        price: PriceFn | None = None,
        notices: Callable[[], list[str]] | None = None,
        unavailable: dict[str, str] | None = None,
        compactor: Compactor | None = None,
        hooks: HookEngine | None = None,
    ) -> None:
        self.session = session
        self.provider = provider
        self.tools = {tool.name: tool for tool in tools}
        self.context = context
        self.emit = emit
        self.max_turns = max_turns
        self.price = price
        self.notices = notices  # e.g. background tasks that finished: told to the model at its next turn
        self.unavailable = unavailable or {}  # tools withheld on purpose -> the reason a call to one gets
        self.hooks = hooks  # the person's hooks (PreToolUse, PostToolUse; Stop for the main agent)
        self._specs = tool_specs(tools)  # in the one listing order every agent shares (prompt caching)
        self.compactor: Compactor | None = None  # keeps the context inside the model's window (None: unwatched)
        if compactor is not None:
            self.use_compactor(compactor)
        self._started = False
        self._task: asyncio.Task[Any] | None = None  # the task running `run`, while it runs
        self.stopped: tuple[RunStatus, str] | None = None  # why `stop` ended the current run
        self._stop_cancelled = False  # `stop` cancelled the run's task (it was asked from another task)

    def stop(self, status: RunStatus, reason: str) -> bool:
        """End the running turn with `status` (a limit was reached, someone cancelled it), keeping its partial result.

        Asked from another task (a subagent's, a watchdog), it cancels the turn and every subagent under
        it; asked from the turn's own task (a consumer of its own events), the turn ends at its next
        checkpoint, before another request or tool call runs. The first stop's status and reason stand,
        even when a cancel from above comes with it. False when no turn is running.
        """
        task = self._task
        if task is None or task.done():
            return False
        if self.stopped is None:
            self.stopped = (status, reason)
            if asyncio.current_task() is not task:
                self._stop_cancelled = True
                task.cancel()
        return True

    # --- public ---------------------------------------------------------------------------------

    async def run(self, prompt: str | Message) -> RunOutcome:
        """Add the prompt and run turns until the model stops calling tools, a limit, an error or cancel."""
        if not self._started:
            self._started = True
            self._event(
                SessionStartedEvent(
                    session_id=self.session.id,
                    agent=self.session.agent,
                    model=self.session.model.display,
                    provider=self.session.model.provider,
                    model_id=self.session.model.model,
                    agent_type=self.session.agent_type,
                    workspace=str(self.session.workspace),
                    depth=self.session.depth,
                    parent_session_id=self.session.parent_session_id,
                    task_id=self.session.task_id,
                    tools=list(self.tools),
                )
            )
            for line in announce_once(self.session.model):
                self._event(NoticeEvent(session_id=self.session.id, agent=self.session.agent, message=line))
        message = Message.user(prompt) if isinstance(prompt, str) else prompt
        self.stopped, self._stop_cancelled, self._task = None, False, asyncio.current_task()
        self._append(self._with_notices(message))
        outcome = RunOutcome("cancelled", "", 0)
        try:
            outcome = await self._turns()
            if self.stopped is not None:  # stopped from inside, by the request that answered last
                outcome = self._stopped_outcome()
        except asyncio.CancelledError:
            task = self._task
            if self.stopped is None:
                outcome = RunOutcome("cancelled", self._last_text(), self.session.turns, "cancelled")
                raise
            outcome = self._stopped_outcome()  # the stop's status stands, whoever else cancelled too
            if not (self._stop_cancelled and task is not None and task.uncancel() == 0):
                raise  # someone else's cancel came with it (the parent's turn ended): it goes on up
        finally:
            self._task = None
            self._finish(outcome)
        return outcome

    def _stopped_outcome(self) -> RunOutcome:
        assert self.stopped is not None
        status, reason = self.stopped
        return RunOutcome(status, self._last_text(), self.session.turns, reason)

    # --- turns ----------------------------------------------------------------------------------

    async def _turns(self) -> RunOutcome:
        session = self.session
        overflowed = False  # one compaction and retry per run when the provider says the context is too long
        stop_hook_turns = 0  # times a Stop hook sent the agent back to work in this run
        for _ in range(self.max_turns):
            # Cancellation checkpoint: a stop requested from inside this task (an event consumer, such as a
            # subagent's budget check) is only delivered at the next suspension; take it before a request goes out.
            await asyncio.sleep(0)
            if self.stopped is not None:
                return self._stopped_outcome()
            try:
                await self._fit_context()
                response = await self._model_turn()
            except ContextOverflowError as exc:
                if overflowed or not await self._fit_context(overflow=True):
                    self._event(ErrorEvent(session_id=session.id, agent=session.agent, message=str(exc)))
                    return RunOutcome("failed", self._last_text(), session.turns, str(exc))
                overflowed = True
                continue
            except ProviderError as exc:
                self._event(ErrorEvent(session_id=session.id, agent=session.agent, message=str(exc)))
                return RunOutcome("failed", self._last_text(), session.turns, str(exc))
            session.turns += 1
            message = response.message()  # never empty, never a whitespace-only text block
            self._append(message)
            self._stop_notice(response)
            calls = response.tool_uses()
            if not calls and response.stop_reason == "pause_turn":
                continue  # Anthropic paused a long turn: sending the history back lets the model go on
            if not calls and (again := await self._stop_hook(stop_hook_turns)):
                stop_hook_turns += 1
                self._append(Message.user(again))
                continue
            if not calls:
                return RunOutcome("completed", message.text(), session.turns, stop_reason=response.stop_reason)
            if response.stop_reason == "max_tokens":  # a call cut mid-arguments: say why, so the model can redo it
                cut = "the call was cut at the output token limit"
                calls = [
                    c.model_copy(update={"input_error": f"{cut} ({c.input_error})"}) if c.input_error is not None else c
                    for c in calls
                ]
            await self._run_tools(calls)
        return RunOutcome(
            "max_turns", self._last_text(), session.turns, f"stopped after max_turns={self.max_turns} turns"
        )

    async def _model_turn(self) -> ModelResponse:
        session = self.session
        request = ModelRequest(
            model=session.model.model,
            system=session.system_prompt,
            system_stable=session.system_stable,
            messages=tuple(session.messages),
            tools=self._specs,
            max_tokens=session.model.max_output_tokens,
            thinking=session.model.thinking,
            thinking_budget_tokens=session.model.thinking_budget_tokens,
            reasoning_effort=session.model.reasoning_effort,
            effort=session.model.effort,
        )
        partial: list[str] = []
        spent = _Unfinished()  # what this request streamed, counted if it never finishes
        started = time.monotonic()
        try:
            async for event in self.provider.stream(request):
                spent.started = spent.started or not isinstance(event, StreamRetry)
                if isinstance(event, TextDelta):
                    partial.append(event.text)
                    spent.chars += len(event.text)
                    self._event(TextDeltaEvent(session_id=session.id, agent=session.agent, text=event.text))
                    self.context.progress()
                elif isinstance(event, ThinkingDelta):
                    spent.chars += len(event.text)
                    self._event(ThinkingDeltaEvent(session_id=session.id, agent=session.agent, text=event.text))
                    self.context.progress()
                elif isinstance(event, ResponseDone):
                    self._account(event.response, (time.monotonic() - started) * 1000)
                    return event.response
                elif isinstance(event, StreamRetry):
                    partial.clear()
                    spent = _Unfinished()  # a retried attempt is not counted (as before: its usage is unknown)
                    self._event(
                        RetryEvent(
                            session_id=session.id,
                            agent=session.agent,
                            attempt=event.attempt,
                            delay_seconds=event.delay_seconds,
                            error=str(event.error),
                        )
                    )
                else:
                    self._stream_progress(event, spent)
                    self.context.progress()
        except (asyncio.CancelledError, ProviderError):
            self._account_unfinished(spent)
            text = "".join(partial)
            if text.strip():  # keep what the person already saw; the transcript stays valid
                self._append(Message(role="assistant", content=[TextBlock(text=text)]))
            raise
        raise ProviderError("the stream ended without a response", provider=self.provider.name)

    # --- context ------------------------------------------------------------------------------

    def use_compactor(self, compactor: Compactor) -> None:
        """Watch the context with `compactor` (another model, another window: `/model`)."""
        compactor.editing_tools = frozenset(t.name for t in self.tools.values() if t.edits_files)
        compactor.gauge.fixed_tokens = self._fixed_tokens()
        if self.compactor is not None:  # what the provider counted last still holds for the same context
            compactor.gauge.rebase(self.compactor.gauge.measured, self.compactor.gauge.measured_len)
        self.compactor = compactor

    def _fixed_tokens(self) -> int:
        """What every request sends besides the messages (system prompt, tool specs), estimated."""
        return (len(self.session.system_prompt) + _specs_chars(self._specs)) // CHARS_PER_TOKEN

    async def compact(self, focus: str = "") -> list[Compaction]:
        """Compact the context now (`/compact [focus]`): prune, then summarise with the light model."""
        if self._task is not None and not self._task.done():
            raise RuntimeError("a turn is running: compact between turns")
        return await self._fit_context(force=True, focus=focus)

    def context_use(self) -> tuple[int, int] | None:
        """(estimated tokens of the next request, the model's window), None when nothing watches the context."""
        if self.compactor is None:
            return None
        return self.compactor.used(self.session.messages), self.compactor.window

    async def _fit_context(self, *, force: bool = False, focus: str = "", overflow: bool = False) -> list[Compaction]:
        compactor = self.compactor
        if compactor is None:
            return []
        session = self.session
        done = await compactor.fit(session.messages, session.next_seq, force=force, focus=focus, overflow=overflow)
        for step in done:
            if step.reply is not None:
                self._account_summary(step.reply)
            if step.fallback:
                self._event(NoticeEvent(session_id=session.id, agent=session.agent, message=step.fallback))
            self._event(
                CompactionEvent(
                    session_id=session.id,
                    agent=session.agent,
                    mode=step.mode,
                    tokens_before=step.tokens_before,
                    tokens_after=step.tokens_after,
                    window=step.window,
                    kept_from_seq=step.kept_from_seq,
                    summary=step.summary,
                    trigger=step.trigger,
                )
            )
        return done

    def _account_summary(self, reply: SummaryReply) -> None:
        """The summariser's request is this agent's spending (the ledger and budgets see it)."""
        session = self.session
        cost = self.price(reply.provider, reply.model, reply.usage) if self.price else None
        session.ledger.add_own(reply.usage, cost)
        self._event(self._usage_event(reply.provider, reply.model, reply.usage, cost))

    def _stop_notice(self, response: ModelResponse) -> None:
        """Say so when a turn did not end normally: cut at the token limit, refused, or empty."""
        if response.stop_reason == "max_tokens":
            limit = self.session.model.max_output_tokens
            line = f"the reply was cut at the output token limit (max_output_tokens = {limit}); it is incomplete"
        elif response.stop_reason == "model_context_window_exceeded":
            line = "the reply was cut: the conversation filled the model's context window"
        elif response.stop_reason == "refusal":
            line = "the model refused to answer"
        elif response.stop_reason == "pause_turn":
            return  # not an end: the next request continues the turn
        elif response.empty:
            line = "the model returned an empty reply"
        else:
            return
        self._event(NoticeEvent(session_id=self.session.id, agent=self.session.agent, message=line))

    def _account(self, response: ModelResponse, duration_ms: float = 0.0) -> None:
        session = self.session
        usage = response.usage
        cost = self.price(session.model.provider, response.model, usage) if self.price else None
        session.ledger.add_own(usage, cost)
        if self.compactor is not None:
            self.compactor.gauge.record(usage, len(session.messages) + 1)  # the reply is appended next
        self._event(self._usage_event(session.model.provider, response.model, usage, cost, duration_ms))

    def _usage_event(
        self, provider: str, model: str, usage: Usage, cost: float | None, duration_ms: float = 0.0
    ) -> UsageEvent:
        session, compactor = self.session, self.compactor
        use = None
        if compactor is not None:  # after a response: its measured size; after a summary: the estimate
            use = (compactor.gauge.measured or compactor.used(session.messages), compactor.window)
        return UsageEvent(
            session_id=session.id,
            agent=session.agent,
            provider=provider,
            model=model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            cost_usd=cost,
            context_tokens=use[0] if use is not None else 0,
            context_window=use[1] if use is not None else 0,
            duration_ms=duration_ms,
        )

    def _stream_progress(self, event: object, spent: _Unfinished) -> None:
        """Usage reported mid-stream, and tool calls being written (the UI shows them before they run)."""
        session = self.session
        if isinstance(event, StreamUsage):
            spent.usage = event.usage
        elif isinstance(event, ToolCallStart):
            spent.calls[event.index] = [event.id, event.name, 0]
            self._event(ToolCallStreamingEvent(session_id=session.id, agent=session.agent, index=event.index,
                                               tool_call_id=event.id, name=event.name))
        elif isinstance(event, ToolCallArgsDelta):
            spent.chars += len(event.partial_json)
            call = spent.calls.get(event.index)
            if call is None:
                return
            before = int(call[2])
            call[2] = before + len(event.partial_json)
            if before // STREAMING_STEP_CHARS != int(call[2]) // STREAMING_STEP_CHARS:
                self._event(ToolCallStreamingEvent(session_id=session.id, agent=session.agent, index=event.index,
                                                   tool_call_id=str(call[0]), name=str(call[1]), chars=int(call[2])))

    def _account_unfinished(self, spent: _Unfinished) -> None:
        """A request that streamed but never finished (stopped, or failed for good) was billed: count it, estimated.

        Input: what the provider reported at the stream's start, else an estimate of the request; output: the
        larger of the reported count and the streamed characters / 4. A request that streamed nothing is not
        counted (whether the provider processed it is unknown).
        """
        if not spent.started or spent.accounted:
            return
        spent.accounted = True
        usage = spent.usage
        if usage is None:
            usage = Usage(input_tokens=self._request_estimate())
        usage = dataclasses.replace(usage, output_tokens=max(usage.output_tokens, tokens_for_chars(spent.chars)))
        if usage.total_tokens == 0:
            return
        session = self.session
        cost = self.price(session.model.provider, session.model.model, usage) if self.price else None
        session.ledger.add_own(usage, cost)
        event = self._usage_event(session.model.provider, session.model.model, usage, cost)
        self._event(event.model_copy(update={"estimated": True}))

    def _request_estimate(self) -> int:
        """Tokens of the request now being sent, estimated (about four characters a token)."""
        if self.compactor is not None:
            return self.compactor.used(self.session.messages)
        return len(self.session.system_prompt) // CHARS_PER_TOKEN + estimate_tokens(self.session.messages)

    # --- tools ----------------------------------------------------------------------------------

    async def _run_tools(self, calls: list[ToolUseBlock]) -> None:
        """Run one turn's calls: consecutive concurrency-safe calls together, others alone; results in order."""
        results: list[ToolResultBlock | None] = [None] * len(calls)

        async def one(index: int) -> None:
            results[index] = await self._run_one(calls[index])

        try:
            await asyncio.sleep(0)  # cancellation checkpoint (see `_turns`): a stop during the answer runs no tool
            if self.stopped is not None:
                return  # `stop` asked from inside: every call gets the cancelled result
            for group in self._groups(calls):
                if self.stopped is not None:
                    break  # stopped from inside by an earlier call (a tool-call limit): the rest never start
                if len(group) == 1:
                    await one(group[0])
                else:
                    async with asyncio.TaskGroup() as tg:
                        for index in group:
                            tg.create_task(one(index))
        finally:
            blocks = [
                r if r is not None else ToolResultBlock(tool_use_id=c.id, content=CANCELLED_RESULT, is_error=True)
                for r, c in zip(results, calls, strict=True)
            ]
            self._append(self._with_notices(Message(role="user", content=list(blocks))))

    def _groups(self, calls: list[ToolUseBlock]) -> list[list[int]]:
        groups: list[list[int]] = []
        previous_safe = False
        for index, call in enumerate(calls):
            safe = self._safe(call)
            if safe and previous_safe:
                groups[-1].append(index)
            else:
                groups.append([index])
            previous_safe = safe
        return groups

    def _safe(self, call: ToolUseBlock) -> bool:
        tool = self.tools.get(call.name)
        return tool is not None and tool.concurrency_safe and call.input_error is None

    async def _run_one(self, call: ToolUseBlock) -> ToolResultBlock:
        session = self.session
        tool = self.tools.get(call.name)
        timing = _Timing(time.perf_counter())
        args: Any = None
        summary = _raw_summary(call.input)
        error: str | None = None
        if tool is None:
            error = self.unavailable.get(call.name) or (
                f"Unknown tool '{call.name}'. Available tools: {', '.join(self.tools)}."
            )
        elif call.input_error is not None:
            error = f"Invalid arguments for {call.name}: {call.input_error}"
        else:
            try:
                args = tool.parse(call.input)
                summary = tool.summary(args)
            except ToolError as exc:
                error = str(exc)
        self._event(
            ToolCallStartedEvent(
                session_id=session.id,
                agent=session.agent,
                tool_call_id=call.id,
                name=call.name,
                args=call.input,
                summary=summary,
            )
        )
        result = ToolResult(error, is_error=True) if error is not None else None
        if result is None and self.stopped is not None:
            result = ToolResult(CANCELLED_RESULT, is_error=True)  # its own start went over a limit: it never runs
        try:
            if result is None:
                assert tool is not None
                result = await self._execute(tool, args, call, timing)
        except asyncio.CancelledError:
            self._tool_finished(call, ToolResult(CANCELLED_RESULT, is_error=True), timing)
            raise
        self._tool_finished(call, result, timing)
        return ToolResultBlock(tool_use_id=call.id, content=result.content, is_error=result.is_error)

    async def _execute(self, tool: Tool[Any], args: Any, call: ToolUseBlock, timing: _Timing) -> ToolResult:
        tail = OutputTail(lambda text, total: self._event(ToolOutputEvent(
            session_id=self.session.id, agent=self.session.agent, tool_call_id=call.id, name=tool.name,
            tail=text, total_bytes=total)))
        ctx = dataclasses.replace(self.context, tool_call_id=call.id, output=tail.feed)
        try:
            if self.hooks is not None and (refused := await self._tool_hook("PreToolUse", call)) is not None:
                return refused
            result = await self._execute_in(tool, args, ctx, timing)
            if self.hooks is not None and not result.is_error:
                response = {"content": result.content, "is_error": False, "files_modified": result.files_modified}
                if (feedback := await self._tool_hook("PostToolUse", call, response)) is not None:
                    result = dataclasses.replace(result, content=f"{result.content}\n\n{feedback.content}")
            return result
        finally:
            tail.close()

    # --- hooks ----------------------------------------------------------------------------------

    async def _fire(self, event: str, data: dict[str, Any], target: str | None = None,
                    call_id: str | None = None) -> HookVerdict:
        assert self.hooks is not None
        verdict = await self.hooks.fire(event, data, session_id=self.session.id, agent=self.session.agent,
                                        emit=self._event, target=target, tool_call_id=call_id)
        if verdict.stop:  # `continue: false`: the run ends at its next checkpoint
            self.stop("cancelled", f"stopped by a {event} hook: {verdict.stop_reason or verdict.reason}")
        return verdict

    async def _tool_hook(self, event: str, call: ToolUseBlock, response: dict[str, Any] | None = None
                         ) -> ToolResult | None:
        """PreToolUse: the refusal the model reads when a hook blocks the call (it never runs); PostToolUse: what
        a hook that blocks says about the finished call (added to its result). None: nothing to say."""
        data: dict[str, Any] = {"tool_name": call.name, "tool_input": call.input, "tool_use_id": call.id}
        if response is not None:
            data["tool_response"] = response
        verdict = await self._fire(event, data, call.name, call.id)
        notes = [defang_tags(c) for c in verdict.context]
        if verdict.blocked or verdict.stop:
            said = defang_tags(verdict.reason if verdict.blocked else verdict.stop_reason or verdict.reason)
            head = f"Blocked by a {event} hook: {said}" if event == "PreToolUse" else f"A {event} hook says: {said}"
            return ToolResult("\n".join([head, *notes]), is_error=True)
        if notes and event == "PostToolUse":
            return ToolResult("\n".join(f"[{event} hook] {n}" for n in notes))
        return None

    async def _stop_hook(self, turns: int) -> str | None:
        """The main agent is about to end its turn: a Stop hook that blocks sends it back with its reason."""
        if self.hooks is None or self.session.depth > 0 or not self.hooks.has("Stop") or self.stopped is not None:
            return None
        if turns >= MAX_STOP_HOOK_TURNS:  # bounded: a hook that always blocks cannot keep the agent going forever
            return None
        verdict = await self._fire("Stop", {"stop_hook_active": turns > 0})
        if not verdict.blocked or verdict.stop:
            return None
        return f"<system-notice>{defang_tags(f'A Stop hook asked you to go on: {verdict.reason}')}</system-notice>"

    async def _execute_in(self, tool: Tool[Any], args: Any, ctx: ToolContext, timing: _Timing) -> ToolResult:
        asked = time.perf_counter()
        try:
            decision = await ctx.permissions.check(tool, args, ctx)
        finally:
            timing.waited += time.perf_counter() - asked  # the person's time, not the tool's
        if not decision.allowed:
            return ToolResult(decision.reason, is_error=True)
        deadline = None if tool.own_time_limit else ctx.tool_timeout_seconds  # starts after approval
        try:
            async with asyncio.timeout(deadline) as timer:
                return await tool.run(args, ctx)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        except Exception as exc:  # a tool bug must not end the run: the model reads it and goes on
            if isinstance(exc, TimeoutError) and timer.expired():
                return ToolResult(f"{tool.name} timed out after {ctx.tool_timeout_seconds:g}s", is_error=True)
            log.exception("tool %s failed", tool.name)
            return ToolResult(f"{tool.name} failed: {type(exc).__name__}: {exc}", is_error=True)

    def _tool_finished(self, call: ToolUseBlock, result: ToolResult, timing: _Timing) -> None:
        elapsed = time.perf_counter() - timing.start
        self._event(
            ToolCallFinishedEvent(
                session_id=self.session.id,
                agent=self.session.agent,
                tool_call_id=call.id,
                name=call.name,
                is_error=result.is_error,
                output=result.content,
                duration_ms=(elapsed - timing.waited) * 1000,
                approval_ms=timing.waited * 1000,
                files_modified=result.files_modified,
                code=_text(result.metadata.get("code")),
                short_result=_text(result.metadata.get("short_result")),
                diff=_diff(result),
                todos=_todos(result.metadata.get("todos")),
            )
        )

    # --- bookkeeping ----------------------------------------------------------------------------

    def _append(self, message: Message) -> None:
        message = scrub_model(message)  # lone surrogates from the model would break every later request
        seq = self.session.append(message)
        self._event(MessageAddedEvent(session_id=self.session.id, agent=self.session.agent, seq=seq, message=message))

    def _finish(self, outcome: RunOutcome) -> None:
        self._event(
            RunFinishedEvent(
                session_id=self.session.id,
                agent=self.session.agent,
                status=outcome.status,
                result=outcome.result,
                turns=outcome.turns,
                error=outcome.error,
            )
        )

    def _with_notices(self, message: Message) -> Message:
        notes = self.notices() if self.notices is not None else []
        if not notes:
            return message
        extra = [TextBlock(text=f"<system-notice>{defang_tags(note)}</system-notice>") for note in notes]
        return Message(role=message.role, content=[*message.content, *extra])

    def add_tools(self, tools: Iterable[Tool[Any]]) -> None:
        """Offer more tools from the next request on (an MCP server's, once it runs); known names are kept."""
        for tool in tools:
            if tool.name not in self.tools:
                self.tools[tool.name] = tool
        self._specs = tool_specs(self.tools.values())
        if self.compactor is not None:
            self.compactor.gauge.fixed_tokens = self._fixed_tokens()

    def last_text(self) -> str:
        """The latest assistant text of the session (what a stopped run produced so far)."""
        return self._last_text()

    def _last_text(self) -> str:
        for message in reversed(self.session.messages):
            if message.role == "assistant" and (text := message.text()):
                return text
        return ""

    def _event(self, event: Event) -> None:
        try:
            self.emit(event)
        except Exception:  # a broken consumer must not break the agent
            log.exception("event consumer failed on %s", event.kind)


@dataclass(slots=True)
class _Timing:
    """When a tool call started, and how long of that it waited for the person's approval."""

    start: float
    waited: float = 0.0


@dataclass(slots=True)
class _Unfinished:
    """What one model request streamed so far: counted as spent if it never finishes."""

    started: bool = False
    chars: int = 0  # text, reasoning and tool arguments
    usage: Usage | None = None  # what the provider reported mid-stream
    calls: dict[int, list[Any]] = dataclasses.field(default_factory=dict)  # index -> [id, name, argument chars]
    accounted: bool = False


OUTPUT_TAIL_CHARS = 600  # the most of a running tool's output one ToolOutputEvent carries
OUTPUT_EVERY_SECONDS = 0.25  # at most this often


class OutputTail:
    """Keeps the end of a running tool's output and reports it at most every `OUTPUT_EVERY_SECONDS`."""

    def __init__(self, report: Callable[[str, int], None]) -> None:
        self.report = report
        self.buffer = bytearray()
        self.total = 0
        self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None

    def feed(self, data: bytes) -> None:
        """Output arrived: keep its end; report now, or soon when a report went out moments ago."""
        self.total += len(data)
        self.buffer += data
        if len(self.buffer) > OUTPUT_TAIL_CHARS * 4:
            del self.buffer[: len(self.buffer) - OUTPUT_TAIL_CHARS * 4]
        wait = self.last + OUTPUT_EVERY_SECONDS - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        """Report the output's end now."""
        self.timer = None
        self.last = time.monotonic()
        text = self.buffer.decode("utf-8", errors="replace")[-OUTPUT_TAIL_CHARS:]
        self.report(text, self.total)

    def close(self) -> None:
        """The tool finished: no report after this."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def _todos(value: object) -> list[dict[str, str]] | None:
    """A TodoWrite result's list, as plain strings, or None."""
    if not isinstance(value, list):
        return None
    return [{k: str(v) for k, v in entry.items()} for entry in value if isinstance(entry, dict)]


def _text(value: object) -> str | None:
    """A metadata entry that must be text (an error code, a short result), or None."""
    return value if isinstance(value, str) else None


def _diff(result: ToolResult) -> FileDiff | None:
    """The diff a successful write reports in its metadata, or None."""
    diff = result.metadata.get("diff")
    return diff if isinstance(diff, FileDiff) and not result.is_error else None


_SPEC_CHARS: dict[tuple[str, str, int], tuple[object, int]] = {}  # (name, description, id(schema)) -> (schema, len)


def _specs_chars(specs: Sequence[ToolSpec]) -> int:
    """The length of the tools' JSON (`[[name, description, schema], ...]`), each tool's measured once: every
    subagent's loop has the same few tools, and serialising their schemas again cost a fan-out dearly."""
    total = 2 + 2 * max(len(specs) - 1, 0)  # the brackets and the ", " between entries
    for spec in specs:
        key = (spec.name, spec.description, id(spec.input_schema))
        entry = _SPEC_CHARS.get(key)
        if entry is None or entry[0] is not spec.input_schema:  # the schema is held: its id is never reused
            entry = (spec.input_schema, len(json.dumps([spec.name, spec.description, spec.input_schema],
                                                       ensure_ascii=False)))
            if len(_SPEC_CHARS) < 1024:
                _SPEC_CHARS[key] = entry
        total += entry[1]
    return total


def _raw_summary(raw: dict[str, Any]) -> str:
    text = json.dumps(raw, ensure_ascii=False)
    return text if len(text) <= 120 else text[:119] + "…"
