"""An in-process scripted provider: the fake LLM server's scripts, played without HTTP or an SDK.

`ScriptedLLM` holds a `Script` (the same `Step`/`Match`/`Reply`/`Fault` models as
`FakeLLMServer`) and logs every request; `ScriptedProvider` implements the `Provider` protocol
over it and yields the stream events the real adapters would (text and thinking deltas, tool
calls with their argument pieces, usage with cache tokens, stop reasons, retries)::

    llm = ScriptedLLM(Script(steps=[Step(reply=Reply(text="hi"))]))
    loop = AgentLoop(session, llm.provider(), tools, ctx, sink)
    ...
    llm.assert_done()

Routing and strictness are the server's (one `StepTable`): the first step in script order with
uses left whose `Match` holds answers, whatever the arrival order. A request no step matches
raises `UnexpectedScriptedRequest` (a provider error naming the request and why each step
refused it) and is listed by `assert_done()`, as is every step not used up.

Differences from the server, because there is no wire: `Match.api` sees the provider's flavour
(`anthropic` or `openai`); `raw` replays need the server and are refused when added. Use the server when the wire
is what a test is about (request bodies, SDK behaviour, recorded streams).

Importing this module imports neither SDK.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agentcli.llm import (
    ANTHROPIC_STOP_REASONS,
    OPENAI_STOP_REASONS,
    AssistantBlock,
    ModelRequest,
    ModelResponse,
    ProviderConnectionError,
    ProviderError,
    ProviderPool,
    ResolvedModel,
    ResponseDone,
    RetryPolicy,
    StopReason,
    StreamEvent,
    StreamInterruptedError,
    StreamUsage,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallAccumulator,
    ToolCallArgsDelta,
    ToolCallStart,
    Usage,
    classify,
    openai_usage,
    sendable,
    stream_with_retries,
)
from agentcli.testing.fake_llm_match import RequestView, StepTable, with_echo
from agentcli.testing.fake_llm_models import (
    ApiName,
    Fault,
    Match,
    Reply,
    Script,
    Step,
    ToolCall,
)
from agentcli.testing.fake_llm_models import Usage as ScriptUsage
from agentcli.testing.fake_llm_wire import ReplyContext, retry_headers, stop_reason_for, usage_for

__all__ = [
    "Fault",
    "Match",
    "Reply",
    "Script",
    "ScriptUsage",
    "ScriptedLLM",
    "ScriptedProvider",
    "ScriptedProviderPool",
    "ScriptedRequest",
    "Step",
    "ToolCall",
    "UnexpectedScriptedRequest",
]

class UnexpectedScriptedRequest(ProviderError):
    """No step of the script matches a request (never retried, like the server's 500 with x-should-retry: false)."""


def request_body(request: ModelRequest) -> dict[str, Any]:
    """A plain, provider-neutral dict of a request: model, system, tool names, messages as sent.

    Messages go through `sendable()` as both adapters do. This is not what an SDK puts on the wire
    (no cache markers, no vendor fields); it is what the matcher and substring checks read.
    """
    return {
        "model": request.model,
        "system": request.system,
        "tools": [{"name": t.name} for t in request.tools],
        "messages": [m.model_dump(mode="json") for m in sendable(request.messages)],
        "max_tokens": request.max_tokens,
        "stream": True,
    }


@dataclass
class ScriptedRequest:
    """One request the scripted provider received."""

    seq: int
    api: ApiName
    provider: str
    request: ModelRequest
    body: dict[str, Any]
    """`request_body(request)`: model, system, tools by name and the messages, as plain JSON data."""
    step_index: int | None
    unexpected: list[str] | None = None
    """Why no step matched (None when a step answered)."""
    outcome: str | None = None
    """complete, http_error, stream_error, cut, unexpected, cancelled, closed."""
    received_at: float = field(default_factory=time.monotonic)
    finished_at: float | None = None

    def text(self) -> str:
        """The request as JSON text, for substring checks."""
        return json.dumps(self.body, ensure_ascii=False)


class ScriptedLLM:
    """A script and its request log, shared by every `ScriptedProvider` made from it.

    The in-process counterpart of `FakeLLMServer`, with the same inspection API (`add_steps`,
    `requests`, `unexpected`, `steps`, `in_flight`, `in_flight_max`, `problems`, `assert_done`
    and the `wait_*_async` helpers). Use it from one event loop.
    """

    def __init__(
        self, script: Script | Iterable[Step] | None = None, *, latency_ms: int = 0, chunk_delay_ms: int = 0
    ) -> None:
        self.latency_ms = latency_ms
        self.chunk_delay_ms = chunk_delay_ms
        self._table = StepTable()
        self._requests: list[ScriptedRequest] = []
        self._in_flight = 0
        self._in_flight_max = 0
        self._ids = itertools.count(1)
        self._waiters: set[asyncio.Event] = set()
        self.add_steps(*(script.steps if isinstance(script, Script) else list(script or [])))

    # ------------------------------------------------------------ making providers

    def provider(
        self, api: ApiName = "anthropic", *, name: str | None = None, policy: RetryPolicy | None = None
    ) -> ScriptedProvider:
        """A provider speaking `api`'s flavour; `policy` retries retryable faults (default: none)."""
        return ScriptedProvider(self, api, name=name or api, policy=policy or RetryPolicy(max_retries=0))

    def pool(self, policy: RetryPolicy | None = None) -> ScriptedProviderPool:
        """A `ProviderPool` whose providers are this script's, one per provider name."""
        return ScriptedProviderPool(self, policy or RetryPolicy(max_retries=0))

    # ------------------------------------------------------------ state

    @property
    def requests(self) -> list[ScriptedRequest]:
        """Every request received so far, in arrival order."""
        return list(self._requests)

    @property
    def unexpected(self) -> list[ScriptedRequest]:
        """Requests that no step matched."""
        return [r for r in self._requests if r.unexpected is not None]

    @property
    def in_flight(self) -> int:
        """Streams open right now."""
        return self._in_flight

    @property
    def in_flight_max(self) -> int:
        """Peak number of streams open at once."""
        return self._in_flight_max

    @property
    def steps(self) -> list[tuple[Step, int]]:
        """Each step with how many times it was used."""
        return self._table.pairs()

    def add_steps(self, *steps: Step) -> None:
        """Append steps to the script (also while running); a `raw` replay is refused here."""
        for step in steps:
            if step.raw is not None:
                raise ValueError(
                    f"scripted: step {step.name or step.match.model_dump(exclude_none=True)} replays raw wire "
                    "frames; play it on FakeLLMServer, which speaks the wire"
                )
        self._table.add(steps)
        self._changed()

    def _changed(self) -> None:
        for waiter in self._waiters:
            waiter.set()

    async def wait_until_async(self, predicate: Callable[[ScriptedLLM], bool], timeout: float = 5.0) -> None:
        """Wait until `predicate(self)` holds (re-checked whenever a request starts or ends)."""
        async with asyncio.timeout(timeout):
            while not predicate(self):
                waiter = asyncio.Event()
                self._waiters.add(waiter)
                try:
                    await waiter.wait()
                finally:
                    self._waiters.discard(waiter)

    async def wait_for_requests_async(self, n: int, timeout: float = 5.0) -> list[ScriptedRequest]:
        """Wait until at least `n` requests were received; returns them."""
        try:
            await self.wait_until_async(lambda s: len(s._requests) >= n, timeout)
        except TimeoutError:
            raise TimeoutError(f"scripted: {len(self._requests)} of {n} requests within {timeout}s") from None
        return self.requests

    async def wait_for_finished_async(self, n: int, timeout: float = 5.0) -> list[ScriptedRequest]:
        """Wait until at least `n` requests were fully answered (or broken off)."""
        await self.wait_until_async(lambda s: sum(r.finished_at is not None for r in s._requests) >= n, timeout)
        return self.requests

    # ------------------------------------------------------------ strictness

    def problems(self) -> list[str]:
        """Every unexpected request and every step not used up, one line each."""
        out = [
            f"unexpected request #{r.seq} ({r.api}, model {r.request.model!r}, turn "
            f"{sum(m.role == 'assistant' for m in r.request.messages)}): {'; '.join(r.unexpected)}"
            for r in self._requests
            if r.unexpected is not None
        ]
        return out + self._table.unused()

    def assert_done(self) -> None:
        """Raise AssertionError listing unexpected requests and unused steps, if any."""
        found = self.problems()
        if found:
            raise AssertionError("scripted script not done:\n" + "\n".join(f"  - {p}" for p in found))

    assert_all_used = assert_done

    # ------------------------------------------------------------ answering (for ScriptedProvider)

    def _admit(
        self, api: ApiName, provider: str, request: ModelRequest
    ) -> tuple[ScriptedRequest, Step | None, RequestView]:
        body = request_body(request)
        view = dataclasses.replace(RequestView.of("anthropic", body), api=api, include_usage=True)
        index, reasons = self._table.route(view)
        step = with_echo(self._table.steps[index], view) if index is not None else None
        record = ScriptedRequest(
            seq=len(self._requests),
            api=api,
            provider=provider,
            request=request,
            body=body,
            step_index=index,
            unexpected=None if step is not None else reasons,
        )
        self._requests.append(record)
        self._in_flight += 1
        self._in_flight_max = max(self._in_flight_max, self._in_flight)
        self._changed()
        return record, step, view

    def _finish(self, record: ScriptedRequest, outcome: str) -> None:
        record.outcome = outcome
        record.finished_at = time.monotonic()
        self._in_flight -= 1
        self._changed()

    def _tool_id(self, api: ApiName) -> str:
        return ("toolu_fake_" if api == "anthropic" else "call_fake_") + str(next(self._ids))


class ScriptedProvider:
    """A `Provider` answering from a `ScriptedLLM`, shaped like the `api` adapter's events."""

    def __init__(self, llm: ScriptedLLM, api: ApiName = "anthropic", *, name: str | None = None,
                 policy: RetryPolicy | None = None) -> None:
        self.llm = llm
        self.api: ApiName = api
        self.name = name or api
        self.policy = policy or RetryPolicy(max_retries=0)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one scripted turn, retrying retryable faults under the policy as the adapters do."""
        return stream_with_retries(lambda: self._attempt(request), self.policy)

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        record, step, view = self.llm._admit(self.api, self.name, request)
        outcome = "cancelled"
        try:
            if step is None:
                outcome = "unexpected"
                raise UnexpectedScriptedRequest(
                    f"scripted: unexpected request #{record.seq} (model {request.model!r}, turn {view.turn}, "
                    f"last user {view.last_user[:60]!r}): " + "; ".join(record.unexpected or []),
                    provider=self.name,
                )
            latency = self.llm.latency_ms if step.latency_ms is None else step.latency_ms
            chunk_delay = self.llm.chunk_delay_ms if step.chunk_delay_ms is None else step.chunk_delay_ms
            if latency:
                await asyncio.sleep(latency / 1000)
            fault = step.fault
            if fault is not None and fault.kind == "http":
                outcome = "http_error"
                raise self._http_error(fault)
            frames, response, done_at = self._turn(step.reply, view, record.seq)
            strike = min(fault.after_events, len(frames)) if fault is not None else -1
            streamed = False
            for i in range(len(frames) + 1):
                after_done_marker = self.api == "openai" and i == len(frames)
                if i == strike and fault is not None:
                    if fault.kind == "stall":
                        await asyncio.sleep(fault.seconds)
                        if fault.then == "close" and i < done_at:
                            outcome = "closed"
                            raise self._cut(fault, streamed)
                    elif i < done_at or fault.abort or (fault.kind == "stream_error" and not after_done_marker):
                        # A broken connection fails the read wherever it comes, and so does an error event, but
                        # for one after OpenAI's [DONE] (not read as an event); a clean end past `done_at` does
                        # not: the adapter has its whole turn already.
                        outcome = fault.kind
                        raise self._stream_error(fault) if fault.kind == "stream_error" else self._cut(fault, streamed)
                if i == len(frames):
                    break
                # Each frame is a read: other tasks run meanwhile, as they do while a real stream waits on I/O.
                await asyncio.sleep(chunk_delay / 1000 if i and chunk_delay else 0)
                event = frames[i]
                if event is not None:
                    streamed = streamed or not isinstance(event, StreamUsage)  # usage alone: nothing shown yet
                    yield event
            outcome = "complete"
            yield ResponseDone(response)
        except GeneratorExit:
            outcome = "closed"
            raise
        finally:
            self.llm._finish(record, outcome)

    # ------------------------------------------------------------ faults, as the adapters report them

    def _http_error(self, fault: Fault) -> ProviderError:
        headers = retry_headers(fault)
        retry_after: float | None = None
        if "retry-after-ms" in headers:
            retry_after = float(headers["retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            retry_after = float(headers["retry-after"])
        message = fault.message or f"scripted: injected HTTP {fault.status}"
        return classify(self.name, fault.status, fault.error_type or _status_type(self.api, fault.status),
                        message, retry_after)

    def _stream_error(self, fault: Fault) -> ProviderError:
        if self.api == "anthropic":
            kind, message = fault.error_type or "overloaded_error", fault.message or "Overloaded"
        else:
            kind = fault.error_type or "server_error"
            message = fault.message or "The server had an error while processing your request."
        return classify(self.name, None, kind, message)

    def _cut(self, fault: Fault, streamed: bool) -> ProviderError:
        if fault.abort and not streamed:
            return ProviderConnectionError("request failed: the connection was aborted", provider=self.name)
        if fault.abort:
            return StreamInterruptedError("the response stream broke off: the connection was aborted",
                                          provider=self.name)
        return StreamInterruptedError("the response stream ended before the model finished its turn",
                                      provider=self.name)

    # ------------------------------------------------------------ the turn

    def _turn(
        self, reply: Reply, view: RequestView, seq: int
    ) -> tuple[list[StreamEvent | None], ModelResponse, int]:
        """What the `api` adapter makes of the server's frames for `reply`.

        One entry per SSE frame the server would send (None: a frame that yields no event), the
        final response, and how many frames the adapter needs before its turn is complete.
        """
        tool_ids = tuple(c.id or self.llm._tool_id(self.api) for c in reply.tool_calls)
        ctx = ReplyContext(
            api=self.api,
            model=view.model or "fake-model",
            response_id=f"{'msg_fake_' if self.api == 'anthropic' else 'chatcmpl-fake-'}{seq}",
            tool_ids=tool_ids,
            prompt_chars=_prompt_chars(self.api, view),
            include_usage=True,
        )
        anthropic = self.api == "anthropic"
        frames: list[StreamEvent | None] = [None, None] if anthropic else [None]  # message_start + ping | role
        thinking: list[StreamEvent | None] = [ThinkingDelta(p) for p in _chunks(reply.thinking, reply.chunk_size)]
        text: list[StreamEvent | None] = [TextDelta(p) for p in _chunks(reply.text, reply.chunk_size)]
        if anthropic:
            if reply.thinking:
                frames += [None, *thinking, *([None] if reply.thinking_signature else []), None]
            if reply.text or not reply.tool_calls:
                frames += [None, *text, None]
        else:
            frames += thinking + text
        tools = ToolCallAccumulator()
        for call, call_id in zip(reply.tool_calls, tool_ids, strict=True):
            index = tools.start(call_id, call.name)
            frames.append(ToolCallStart(index, call_id, call.name))
            for piece in _chunks(call.arguments_text(), reply.args_chunk_size):
                tools.add_args(index, piece)
                frames.append(ToolCallArgsDelta(index, piece))
            if anthropic:
                frames.append(None)  # content_block_stop
        frames.append(None)  # message_delta | the finish_reason chunk
        done_at = len(frames) + 1 if anthropic else len(frames)
        frames += [None] if anthropic else [None, None]  # message_stop | usage chunk + [DONE]
        content: list[AssistantBlock] = []
        if reply.thinking:
            signature = reply.thinking_signature if self.api == "anthropic" else ""
            content.append(ThinkingBlock(thinking=reply.thinking, signature=signature))
        if reply.text:
            content.append(TextBlock(text=reply.text))
        content.extend(tools.blocks())
        wire_stop = stop_reason_for(reply, self.api)
        stop: StopReason
        if self.api == "anthropic":
            stop = ANTHROPIC_STOP_REASONS.get(wire_stop, "other")
        else:
            stop = OPENAI_STOP_REASONS.get(wire_stop, "other")
            if reply.tool_calls and stop == "end_turn":
                stop = "tool_use"  # as the OpenAI adapter does for servers that say "stop" after tool calls
        counts = usage_for(reply, ctx)
        if self.api == "anthropic":
            usage = Usage(counts.input_tokens, counts.output_tokens, counts.cache_read, counts.cache_creation)
            frames[0] = StreamUsage(Usage(counts.input_tokens, 1, counts.cache_read, counts.cache_creation))  # start
        else:  # what the OpenAI adapter reads from the usage chunk the server sends
            usage = openai_usage(counts.openai())
        return frames, ModelResponse(content, stop, usage, ctx.model, ctx.response_id), done_at


class ScriptedProviderPool(ProviderPool):
    """A `ProviderPool` that hands out scripted providers instead of SDK clients.

    An `anthropic` model gets the Anthropic flavour, `openai` and `openai-compatible` the OpenAI one;
    one provider per provider name, all over the same `ScriptedLLM`.
    """

    def __init__(self, llm: ScriptedLLM, policy: RetryPolicy | None = None) -> None:
        super().__init__(policy or RetryPolicy(max_retries=0))
        self.llm = llm
        self._scripted: dict[str, ScriptedProvider] = {}

    def get(self, model: ResolvedModel) -> ScriptedProvider:
        """The scripted provider for the model's provider."""
        provider = self._scripted.get(model.provider)
        if provider is None:
            api: ApiName = "anthropic" if model.provider == "anthropic" else "openai"
            provider = ScriptedProvider(self.llm, api, name=model.provider, policy=self.policy)
            self._scripted[model.provider] = provider
        return provider


def _status_type(api: ApiName, status: int) -> str | None:
    """The error type the server's error body would carry for an HTTP status."""
    from agentcli.testing.fake_llm_wire import error_body

    inner = error_body(api, status, "")["error"]
    kind = inner.get("type") or inner.get("code")
    return str(kind) if kind else None


def _prompt_chars(api: ApiName, view: RequestView) -> int:
    """The prompt size the server estimates usage from (OpenAI's system message is also a message)."""
    chars = len(view.all_text) + 40 * len(view.tools)
    return chars + len(view.system) + 1 if api == "openai" and view.system else chars


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]
