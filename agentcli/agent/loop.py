"""AgentLoop: runs one session's turns — stream the model, run its tool calls, repeat — reporting events."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentcli.agent.compaction import Compaction, Compactor
from agentcli.agent.cuts import (
    CONTEXT_CUT_NOTICE,
    cut_calls,
    cut_kind,
    full_line,
    short_line,
    unfit_line,
    window_words,
)
from agentcli.agent.image_refusal import refusal_line, refuses_images
from agentcli.agent.model_request import output_room, session_request, stream_response
from agentcli.agent.session import Session
from agentcli.agent.spending import PriceFn, Spending
from agentcli.agent.tool_calls import CANCELLED_RESULT, ToolCalls, fire_hook, report
from agentcli.agent.tool_offer import Offered, ToolOffer, specs_chars
from agentcli.events import (
    CompactionEvent,
    ErrorEvent,
    Event,
    EventSink,
    MessageAddedEvent,
    NoticeEvent,
    RunFinishedEvent,
    SessionStartedEvent,
)
from agentcli.hooks import Hooks
from agentcli.llm import (
    CHARS_PER_TOKEN,
    ContextOverflowError,
    Message,
    ModelResponse,
    Provider,
    ProviderError,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    announce_once,
    failure_line,
)
from agentcli.safe_text import scrub_model
from agentcli.status import RunStatus
from agentcli.text import defang_tags
from agentcli.tools import Tool, ToolContext

log = logging.getLogger(__name__)

MAX_STOP_HOOK_TURNS = 3  # a Stop hook may send the main agent back to work this many times per run


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
    empty: bool = False  # the last turn produced neither text nor tool calls

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
        hooks: Hooks | None = None,
        inbox: Callable[[], list[str]] | None = None,
        specs: Offered | None = None,
        lean_below: int = 0,
        defer: Callable[[Tool[Any]], bool] | None = None,
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
        self.inbox = inbox  # messages sent to this agent while it runs (SendMessage, the person), framed
        # Given a request's failure after its retries: True when it switched to another model (the turn is tried
        # again on it, once per run), as Claude Code's --fallback-model does.
        self.fallback: Callable[[ProviderError], bool] | None = None
        # Offered: its tools' specs in the one listing order every agent shares (prompt caching), or `specs` (a
        # fork's: its parent's, byte for byte; a listed tool not in `tools` is `unavailable`)
        # A window below `lean_below` tokens gets the lean prompt (`ToolOffer`, chosen before the first request)
        # `defer`: the tools named in the system prompt's deferred list instead of listed ([tools] defer)
        self._offer = ToolOffer(self.tools, specs, lean_below, defer)
        self._offer.on_change = self._refit
        self.compactor: Compactor | None = None  # keeps the context inside the model's window (None: unwatched)
        if compactor is not None:
            self.use_compactor(compactor)
        self._started = False
        self._task: asyncio.Task[Any] | None = None  # the task running `run`, while it runs
        self.stopped: tuple[RunStatus, str] | None = None  # why `stop` ended the current run
        self._stop_cancelled = False  # `stop` cancelled the run's task (it was asked from another task)
        self._calls = ToolCalls(self)
        self._spending = Spending(self)
        self._max_tokens = 0  # the last request's max_tokens

    def tool_spent(self, spend: dict[str, Any]) -> None:
        """A tool's own model request (WebSearch's search) goes to this agent's ledger, as a `UsageEvent`."""
        self._spending.tool_request(spend)

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
        fell_back = False  # the fallback model took over in this run
        for _ in range(self.max_turns):
            # Cancellation checkpoint: a stop requested from inside this task (an event consumer, such as a
            # subagent's budget check) is only delivered at the next suspension; take it before a request goes out.
            await asyncio.sleep(0)
            if self.stopped is not None:
                return self._stopped_outcome()
            try:
                await self._fit_context()
                self._offer.choose(self._known_window())
                if (unfit := self._unfit_prompt()) is not None:  # said once: the run ends here, nothing is sent
                    self._event(ErrorEvent(session_id=session.id, agent=session.agent, message=unfit))
                    return RunOutcome("failed", self._last_text(), session.turns, unfit)
                response = await self._model_turn()
            except ContextOverflowError as exc:
                if overflowed or not await self._fit_context(overflow=True):
                    line = f"{self._window_words()} cannot hold the request, even compacted: {exc}"
                    self._event(ErrorEvent(session_id=session.id, agent=session.agent, message=line))
                    return RunOutcome("failed", self._last_text(), session.turns, line)
                overflowed = True
                continue
            except ProviderError as exc:
                if not session.images_off and refuses_images(exc, session.messages):
                    session.images_off = True  # said once; the request goes again without them
                    self._event(NoticeEvent(session_id=session.id, agent=session.agent,
                                            message=refusal_line(session.model.display, exc)))
                    continue
                if not fell_back and self.fallback is not None and self.fallback(exc):
                    fell_back = True
                    continue
                line = failure_line(session.model, exc)
                self._event(ErrorEvent(session_id=session.id, agent=session.agent, message=line))
                return RunOutcome("failed", self._last_text(), session.turns, line)
            session.turns += 1
            kind, used = cut_kind(response, window=self.compactor.window if self.compactor is not None else 0,
                                  max_tokens=self._max_tokens or session.model.max_output_tokens,
                                  compatible=session.model.provider == "openai-compatible")
            if kind == "full":  # finish_reason length, but the window is what ran out
                response = dataclasses.replace(response, stop_reason="model_context_window_exceeded")
            message = response.message()  # never empty, never a whitespace-only text block
            self._append(message)
            calls = response.tool_uses()
            if kind in ("full", "reported") and self.compactor is not None:
                compacted = not overflowed and await self._compact_cut(used)
                if compacted:
                    overflowed = True
                    if not calls:  # the model finishes what it was writing, in the room compaction made
                        self._append(Message.user(CONTEXT_CUT_NOTICE))
                        continue
            elif kind == "short":
                self._event(NoticeEvent(session_id=session.id, agent=session.agent, message=short_line(
                    response.usage.output_tokens, self._max_tokens or session.model.max_output_tokens, used,
                    self._window_words(), session.model.display)))
            else:
                self._stop_notice(response)
            if not calls and response.stop_reason == "pause_turn":
                continue  # Anthropic paused a long turn: sending the history back lets the model go on
            if not calls and (letters := self._letters()):  # a message came while it answered: it reads it
                self._append(Message(role="user", content=[TextBlock(text=text) for text in letters]))
                continue
            if not calls and (again := await self._stop_hook(stop_hook_turns)):
                stop_hook_turns += 1
                self._append(Message.user(again))
                continue
            if not calls:
                return RunOutcome("completed", message.text(), session.turns, stop_reason=response.stop_reason,
                                  empty=response.empty)
            await self._run_tools(cut_calls(calls, response.stop_reason))
        return RunOutcome(
            "max_turns", self._last_text(), session.turns, f"stopped after max_turns={self.max_turns} turns"
        )

    async def _compact_cut(self, used: int) -> bool:
        """A reply the window cut after `used` tokens: compact, and say so in one line (True: the turn may go on in
        the room made)."""
        compactor, session = self.compactor, self.session
        assert compactor is not None
        done = await self._fit_context(overflow=True)
        compacted = bool(done) and done[-1].tokens_after < compactor.policy.threshold * compactor.window
        self._event(NoticeEvent(session_id=session.id, agent=session.agent,
                                message=full_line(self._window_words(), used, compacted)))
        return compacted

    def _unfit_prompt(self) -> str | None:
        """The line saying the window cannot hold the fixed prompt (system prompt and tool definitions): compaction
        could never bring a request under its threshold and would run before every one. None when it fits."""
        compactor = self.compactor
        if compactor is None:
            return None
        policy, fixed = compactor.policy, compactor.gauge.fixed_tokens
        if fixed < policy.threshold * policy.window:
            return None
        return unfit_line(self._window_words(), fixed, policy.threshold, lean=bool(self._offer.lean))

    def _window_words(self) -> str:
        """`the context window (8192 tokens, server: llama.cpp /props)`, as far as it is known."""
        if self.compactor is None:
            return window_words(0, "")
        return window_words(self.compactor.window, self.compactor.window_source)

    async def _model_turn(self) -> ModelResponse:
        """One request of the session's history, streamed (`model_request`)."""
        self._max_tokens = output_room(self.session, self.compactor)
        request = session_request(self.session, self._offer.specs, self._max_tokens, self._offer.note)
        return await stream_response(self, request, self._spending, self._append)

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
        offer = self._offer
        return (len(self.session.system_prompt) + len(offer.note) + specs_chars(offer.specs)) // CHARS_PER_TOKEN

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

    def window_source(self) -> str:
        """Where the window the context is kept in came from ("" when nothing watches the context)."""
        return self.compactor.window_source if self.compactor is not None else ""

    async def _fit_context(self, *, force: bool = False, focus: str = "", overflow: bool = False) -> list[Compaction]:
        compactor = self.compactor
        if compactor is None:
            return []
        session = self.session
        done = await compactor.fit(session.messages, session.next_seq, force=force, focus=focus, overflow=overflow)
        for step in done:
            if step.reply is not None:
                self._spending.summary(step.reply)
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

    # --- tools ----------------------------------------------------------------------------------

    async def _run_tools(self, calls: list[ToolUseBlock]) -> None:
        """Run one turn's calls (`ToolCalls`); their results go back in call order, a cancelled one's too."""
        results: list[ToolResultBlock | None] = [None] * len(calls)
        try:
            await self._calls.run(calls, results)
        finally:
            blocks = [
                r if r is not None else ToolResultBlock(tool_use_id=c.id, content=CANCELLED_RESULT, is_error=True)
                for r, c in zip(results, calls, strict=True)
            ]
            self._append(self._with_notices(Message(role="user", content=list(blocks))))

    # --- hooks ----------------------------------------------------------------------------------

    async def _stop_hook(self, turns: int) -> str | None:
        """The main agent is about to end its turn: a Stop hook that blocks sends it back with its reason."""
        if self.hooks is None or self.session.depth > 0 or not self.hooks.has("Stop") or self.stopped is not None:
            return None
        if turns >= MAX_STOP_HOOK_TURNS:  # bounded: a hook that always blocks cannot keep the agent going forever
            return None
        verdict = await fire_hook(self, "Stop", {"stop_hook_active": turns > 0})
        if not verdict.blocked or verdict.stop:
            return None
        return f"<system-notice>{defang_tags(f'A Stop hook asked you to go on: {verdict.reason}')}</system-notice>"

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
        """`message` with what arrived since the last turn: notices (background tasks that finished) and letters."""
        notes = self.notices() if self.notices is not None else []
        extra = [TextBlock(text=f"<system-notice>{defang_tags(note)}</system-notice>") for note in notes]
        extra += [TextBlock(text=text) for text in self._letters()]
        if not extra:
            return message
        return Message(role=message.role, content=[*message.content, *extra])

    def _letters(self) -> list[str]:
        return self.inbox() if self.inbox is not None else []

    def add_tools(self, tools: Iterable[Tool[Any]]) -> None:
        """Offer more tools from the next request on (an MCP server's, once it runs); known names are kept."""
        self._offer.add(tools)

    def _refit(self) -> None:
        """The offered list changed: the fixed part of every request weighs what it now does."""
        if self.compactor is not None:
            self.compactor.gauge.fixed_tokens = self._fixed_tokens()

    def _known_window(self) -> int:
        """The window, when it is known without loading the model table: configured, or an OpenAI-compatible
        server's (asked) or the default (anthropic and openai models have large windows: 0, no lean prompt)."""
        model = self.session.model
        if model.context_window:
            return model.context_window
        if self.compactor is None or model.provider != "openai-compatible":
            return 0
        return self.compactor.window

    @property
    def lean(self) -> bool:
        """Whether this agent's requests carry the lean prompt (chosen at its first request)."""
        return bool(self._offer.lean)

    def offered(self) -> Offered:
        """The tools the next request offers and the deferred ones it names, as sent (what a fork is given)."""
        return self._offer.offered

    def last_text(self) -> str:
        """The latest assistant text of the session (what a stopped run produced so far)."""
        return self._last_text()

    def _last_text(self) -> str:
        return self.session.last_text()

    def _event(self, event: Event) -> None:
        report(self.emit, event)
