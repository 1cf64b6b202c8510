"""One model request of an agent: how many output tokens it may ask for, the request built from its session, and
its stream read into a response (text and thinking deltas, retries and spending reported as they come)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from agentcli.agent.compaction import Compactor
from agentcli.agent.image_refusal import strip_images
from agentcli.agent.session import Session
from agentcli.agent.spending import Spending, Unfinished
from agentcli.agent.tool_calls import report
from agentcli.events import EventSink, RetryEvent, TextDeltaEvent, ThinkingDeltaEvent
from agentcli.llm import (
    Message,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderError,
    ResponseDone,
    StreamRetry,
    TextBlock,
    TextDelta,
    ThinkingDelta,
    ToolSpec,
)
from agentcli.tools import ToolContext

MIN_OUTPUT_ROOM = 256  # max_tokens never asked below this for a small window's sake


class RequestHost(Protocol):
    """What a request needs of its loop."""

    session: Session
    provider: Provider
    context: ToolContext
    emit: EventSink


def output_room(session: Session, compactor: Compactor | None) -> int:
    """`max_output_tokens`, or less on an OpenAI-compatible server whose window leaves less room after the
    request (vLLM refuses a request whose prompt plus max_tokens pass its max_model_len)."""
    limit = session.model.max_output_tokens
    if compactor is None or session.model.provider != "openai-compatible":
        return limit
    room = int((compactor.window - compactor.used(session.messages)) * 0.9)
    return max(min(limit, room), min(limit, MIN_OUTPUT_ROOM))


def session_request(session: Session, tools: Sequence[ToolSpec], max_tokens: int, note: str = "") -> ModelRequest:
    """The request that sends `session`'s system prompt and history, offering `tools` (no image once the model
    refused them); `note` (the deferred tools' lines) ends the prompt's stable part."""
    if session.images_off:
        strip_images(session.messages)
    system, stable = session.system_prompt, session.system_stable
    if note:
        cut = stable or len(system)
        system, stable = system[:cut] + note + system[cut:], stable and stable + len(note)
    return ModelRequest(
        model=session.model.model,
        system=system,
        system_stable=stable,
        messages=tuple(session.messages),
        tools=tools,
        max_tokens=max_tokens,
        thinking=session.model.thinking,
        thinking_budget_tokens=session.model.thinking_budget_tokens,
        reasoning_effort=session.model.reasoning_effort,
        effort=session.model.effort,
    )


async def stream_response(host: RequestHost, request: ModelRequest, spending: Spending,
                          keep: Callable[[Message], None]) -> ModelResponse:
    """Send `request` and read its stream into the response, reporting deltas and retries and counting what it
    spent; a request cancelled or failed mid-stream is counted too, and the text the person already saw is
    `keep`-t as an assistant message (the transcript stays valid)."""
    session = host.session
    partial: list[str] = []
    spent = Unfinished()  # what this request streamed, counted if it never finishes
    started = time.monotonic()
    try:
        async for event in host.provider.stream(request):
            spent.started = spent.started or not isinstance(event, StreamRetry)
            if isinstance(event, TextDelta):
                partial.append(event.text)
                spent.chars += len(event.text)
                report(host.emit, TextDeltaEvent(session_id=session.id, agent=session.agent, text=event.text))
                host.context.progress()
            elif isinstance(event, ThinkingDelta):
                spent.chars += len(event.text)
                report(host.emit, ThinkingDeltaEvent(session_id=session.id, agent=session.agent, text=event.text))
                host.context.progress()
            elif isinstance(event, ResponseDone):
                spending.response(event.response, (time.monotonic() - started) * 1000)
                return event.response
            elif isinstance(event, StreamRetry):
                partial.clear()
                spent = Unfinished()  # a retried attempt is not counted (as before: its usage is unknown)
                report(
                    host.emit,
                    RetryEvent(
                        session_id=session.id,
                        agent=session.agent,
                        attempt=event.attempt,
                        delay_seconds=event.delay_seconds,
                        error=str(event.error),
                    ),
                )
            else:
                spending.progress(event, spent)
                host.context.progress()
    except (asyncio.CancelledError, ProviderError):
        spending.unfinished(spent)
        text = "".join(partial)
        if text.strip():  # keep what the person already saw; the transcript stays valid
            keep(Message(role="assistant", content=[TextBlock(text=text)]))
        raise
    raise ProviderError("the stream ended without a response", provider=host.provider.name)
