"""What an agent's requests cost: each response's usage, a summary's, and a request that never finished."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agentcli.agent.compaction import Compactor, SummaryReply, estimate_tokens
from agentcli.agent.session import Session
from agentcli.agent.tool_calls import report
from agentcli.events import STREAMING_STEP_CHARS, Event, EventSink, ToolCallStreamingEvent, UsageEvent
from agentcli.llm import (
    CHARS_PER_TOKEN,
    ModelResponse,
    StreamUsage,
    ToolCallArgsDelta,
    ToolCallStart,
    Usage,
    tokens_for_chars,
)

PriceFn = Callable[[str, str, Usage], float | None]


class SpendingHost(Protocol):
    """What the accounting needs of its loop."""

    session: Session
    price: PriceFn | None
    compactor: Compactor | None
    emit: EventSink


@dataclass(slots=True)
class Unfinished:
    """What one model request streamed so far: counted as spent if it never finishes."""

    started: bool = False
    chars: int = 0  # text, reasoning and tool arguments
    usage: Usage | None = None  # what the provider reported mid-stream
    calls: dict[int, list[Any]] = dataclasses.field(default_factory=dict)  # index -> [id, name, argument chars]
    accounted: bool = False



class Spending:
    """Counts one agent's requests into its session's ledger and reports each as a `UsageEvent`."""

    def __init__(self, host: SpendingHost) -> None:
        self.host = host

    def _event(self, event: Event) -> None:
        report(self.host.emit, event)

    def summary(self, reply: SummaryReply) -> None:
        """The summariser's request is this agent's spending (the ledger and budgets see it)."""
        session = self.host.session
        cost = self.host.price(reply.provider, reply.model, reply.usage) if self.host.price else None
        session.ledger.add_own(reply.usage, cost)
        self._event(self.usage_event(reply.provider, reply.model, reply.usage, cost))

    def tool_request(self, spend: dict[str, Any]) -> None:
        """A model request a tool made for this agent (WebSearch's search, `metadata["spend"]`: provider, model,
        usage, web_searches): its tokens and searches, priced per thousand, are this agent's spending."""
        from agentcli.llm import cost_usd

        provider, model, usage = str(spend.get("provider")), str(spend.get("model")), spend.get("usage")
        if not isinstance(usage, Usage):
            return
        searches = spend.get("web_searches")
        cost = cost_usd(provider, model, usage, searches if isinstance(searches, int) else 0) if self.host.price \
            else None
        self.host.session.ledger.add_own(usage, cost)
        self._event(self.usage_event(provider, model, usage, cost))

    def response(self, response: ModelResponse, duration_ms: float = 0.0) -> None:
        session = self.host.session
        usage = response.usage
        cost = self.host.price(session.model.provider, response.model, usage) if self.host.price else None
        session.ledger.add_own(usage, cost)
        if self.host.compactor is not None:
            self.host.compactor.gauge.record(usage, len(session.messages) + 1)  # the reply is appended next
        self._event(self.usage_event(session.model.provider, response.model, usage, cost, duration_ms))

    def usage_event(
        self, provider: str, model: str, usage: Usage, cost: float | None, duration_ms: float = 0.0
    ) -> UsageEvent:
        session, compactor = self.host.session, self.host.compactor
        use = None
        if compactor is not None:  # after a response: its measured size; after a summary: the estimate
            use = (compactor.gauge.measured or compactor.used(session.messages), compactor.window)
        return UsageEvent(
            session_id=session.id,
            agent=session.agent,
            provider=provider,
            model=model,
            **usage.counts().model_dump(),
            cost_usd=cost,
            context_tokens=use[0] if use is not None else 0,
            context_window=use[1] if use is not None else 0,
            duration_ms=duration_ms,
        )

    def progress(self, event: object, spent: Unfinished) -> None:
        """Usage reported mid-stream, and tool calls being written (the UI shows them before they run)."""
        session = self.host.session
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

    def unfinished(self, spent: Unfinished) -> None:
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
            usage = Usage(input_tokens=self.request_estimate())
        usage = usage.model_copy(update={"output_tokens": max(usage.output_tokens, tokens_for_chars(spent.chars))})
        if usage.total_tokens == 0:
            return
        session = self.host.session
        cost = self.host.price(session.model.provider, session.model.model, usage) if self.host.price else None
        session.ledger.add_own(usage, cost)
        event = self.usage_event(session.model.provider, session.model.model, usage, cost)
        self._event(event.model_copy(update={"estimated": True}))

    def request_estimate(self) -> int:
        """Tokens of the request now being sent, estimated (about four characters a token)."""
        if self.host.compactor is not None:
            return self.host.compactor.used(self.host.session.messages)
        return len(self.host.session.system_prompt) // CHARS_PER_TOKEN + estimate_tokens(self.host.session.messages)
