"""Anthropic Messages API adapter over the official `anthropic` SDK (streaming, tool use, cache usage)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from agentcli.llm.base import (
    AssistantBlock,
    ContentBlock,
    ImageBlock,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    RedactedThinkingBlock,
    ResponseDone,
    RetryPolicy,
    StopReason,
    StreamEvent,
    StreamInterruptedError,
    StreamRetry,
    StreamUsage,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallAccumulator,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolUseBlock,
    sendable,
)
from agentcli.llm.deprecation import silence_sdk_warning
from agentcli.llm.errors import from_sdk_exception
from agentcli.llm.retry import stream_with_retries
from agentcli.llm.sse import byte_lines, server_events, stream_byte_limit
from agentcli.llm.usage import Usage
from agentcli.llm.wire_terms import ANTHROPIC_STOP_REASONS

_EPHEMERAL = {"type": "ephemeral"}


def _block_param(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):  # exactly as received: the API checks the signature
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ImageBlock):
        return _image_param(block)
    content: str | list[dict[str, Any]] = block.content
    if block.images:  # text first, then what the tool shows
        content = [{"type": "text", "text": block.content}, *(_image_param(image) for image in block.images)]
    return {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": content, "is_error": block.is_error}


def _image_param(image: ImageBlock) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}}


def _message_params(messages: list[Message], caching: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        # Reasoning from another provider has no signature; Anthropic would refuse it.
        blocks = [b for b in m.content if not (isinstance(b, ThinkingBlock) and not b.signature)]
        out.append({"role": m.role, "content": [_block_param(b) for b in blocks]})
    if out and out[-1]["role"] == "assistant":  # continuing a paused turn: no trailing whitespace allowed
        tail = out[-1]["content"][-1] if out[-1]["content"] else None
        if tail is not None and tail["type"] == "text" and tail["text"].rstrip():
            tail["text"] = tail["text"].rstrip()
    if caching and out and out[-1]["content"]:
        last: dict[str, Any] = out[-1]["content"][-1]
        if last["type"] in ("text", "tool_result", "image"):
            last["cache_control"] = _EPHEMERAL
    return out


def _system_params(system: str, stable: int, caching: bool) -> list[dict[str, Any]]:
    """The system prompt as text blocks: its stable part apart from the rest (the date, the git status, a
    subagent's task), the cache breakpoint after the stable part, so a new day or commit still reads it."""
    parts = [system[:stable], system[stable:]] if 0 < stable < len(system) and system[:stable].strip() else [system]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": part} for part in parts if part.strip()] or [
        {"type": "text", "text": system}
    ]
    if caching:
        blocks[0]["cache_control"] = _EPHEMERAL
    return blocks


def request_params(request: ModelRequest, *, caching: bool = True) -> dict[str, Any]:
    """The keyword arguments for `messages.create` (without `stream`).

    With `caching`, at most four cache breakpoints (the API's limit): after the head of the tool list that
    every agent shares (`ToolSpec.cache_break`: the read-only tools and those every agent has), after the
    last tool, after the stable part of the system prompt, and on the last message. Anthropic caches tools,
    then system, then messages, as one prefix.
    """
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": _message_params(sendable(request.messages), caching),
    }
    if request.system:
        params["system"] = _system_params(request.system, request.system_stable, caching)
    if request.tools:
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
        if caching:
            for i in [i for i, t in enumerate(request.tools) if t.cache_break][-1:]:
                tools[i]["cache_control"] = _EPHEMERAL
            tools[-1]["cache_control"] = _EPHEMERAL
        params["tools"] = tools
    thinking = _thinking_param(request)
    if thinking is not None:
        params["thinking"] = thinking
    if request.effort and thinking is not None and thinking["type"] == "adaptive":
        params["output_config"] = {"effort": request.effort}
    thinks = thinking is not None and thinking["type"] != "disabled"
    if request.temperature is not None and not thinks:  # the API refuses a temperature with thinking on
        params["temperature"] = request.temperature
    return params


def _thinking_param(request: ModelRequest) -> dict[str, Any] | None:
    """Anthropic's `thinking` for the configured mode; None leaves the model's default."""
    if request.thinking == "off":
        return {"type": "disabled"}
    if request.thinking == "adaptive":
        return {"type": "adaptive"}
    if request.thinking == "on":
        # >= 1024 (the API's minimum) and below max_tokens, as the API requires.
        budget = max(1024, min(request.thinking_budget_tokens or 1024, request.max_tokens - 1))
        return {"type": "enabled", "budget_tokens": budget}
    return None


def _start_usage(usage: dict[str, Any]) -> Usage:
    """The usage a `message_start` reports (output grows later, in `message_delta`)."""
    return Usage(
        input_tokens=usage.get("input_tokens") or 0,
        output_tokens=usage.get("output_tokens") or 0,
        cache_read_tokens=usage.get("cache_read_input_tokens") or 0,
        cache_write_tokens=usage.get("cache_creation_input_tokens") or 0,
    )


async def message_events(response: Any, limit: int) -> AsyncIterator[dict[str, Any]]:
    """The events of a Messages stream as the SDK's stream reads them: `ping` and unnamed events skipped,
    an `error` event raised as the SDK's status error (an error inside a 200 stream)."""
    async for sse in server_events(byte_lines(response.iter_bytes(), limit, "anthropic")):
        if sse.event is None or sse.event == "ping":
            continue
        if sse.event == "error":
            try:
                body: object = json.loads(sse.data)
                message = f"{body}"
            except ValueError:
                body = sse.data
                message = sse.data or f"Error code: {response.status_code}"
            raise anthropic.APIStatusError(message, response=response.http_response, body=body)
        if not sse.data:
            continue
        event = json.loads(sse.data)
        if isinstance(event, dict):
            yield event


class _TurnBuilder:
    """Folds raw stream events into stream events and the final response."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.request_id: str | None = None
        self._clear()

    def _clear(self) -> None:
        """Forget everything of the message so far (also when an intermediary restarts it mid-stream)."""
        self.usage = Usage()
        self.stop_reason: StopReason = "other"
        self.tools = ToolCallAccumulator()
        self.order: list[tuple[str, int]] = []  # ("text", i) into self.texts, ("tool", i), ("thinking", i)...
        self.texts: list[list[str]] = []
        self.thinking: list[tuple[list[str], list[str]]] = []  # (thinking pieces, signature pieces)
        self.redacted: list[str] = []
        self.by_index: dict[int, tuple[str, int]] = {}
        self.finished = False

    def feed(self, event: dict[str, Any]) -> StreamEvent | None:
        """One event of the stream (its JSON object; a missing field reads as None, like an unset one)."""
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._block_delta(event.get("index", -1), event.get("delta") or {})
        if kind == "content_block_start":
            return self._block_start(event.get("index", -1), event.get("content_block") or {})
        if kind == "message_start":
            return self._message_start(event.get("message") or {})
        if kind == "message_delta":
            self._message_delta((event.get("delta") or {}).get("stop_reason"), event.get("usage") or {})
        elif kind == "message_stop":
            self.finished = True
        return None

    def _block_delta(self, wire_index: int, delta: dict[str, Any]) -> StreamEvent | None:
        """More of an open content block: text, a tool call's argument JSON, thinking or its signature."""
        dtype = delta.get("type")
        slot = self.by_index.get(wire_index)
        if dtype == "text_delta" and slot is not None and slot[0] == "text":
            text = delta.get("text") or ""
            self.texts[slot[1]].append(text)
            return TextDelta(text)
        if dtype == "input_json_delta" and slot is not None and slot[0] == "tool":
            partial = delta.get("partial_json") or ""
            self.tools.add_args(slot[1], partial)
            return ToolCallArgsDelta(slot[1], partial)
        if dtype == "thinking_delta" and slot is not None and slot[0] == "thinking":
            thinking = delta.get("thinking") or ""
            self.thinking[slot[1]][0].append(thinking)
            return ThinkingDelta(thinking)
        if dtype == "signature_delta" and slot is not None and slot[0] == "thinking":
            self.thinking[slot[1]][1].append(delta.get("signature") or "")
        return None

    def _block_start(self, wire_index: int, block: dict[str, Any]) -> StreamEvent | None:
        """A content block opens: text, thinking, redacted thinking or a tool call (any other kind is skipped)."""
        btype = block.get("type")
        if btype == "text":
            text = block.get("text") or ""
            self.texts.append([text] if text else [])
            self._slot(wire_index, ("text", len(self.texts) - 1))
            return TextDelta(text) if text else None
        if btype == "thinking":
            thinking = block.get("thinking") or ""
            self.thinking.append(([thinking] if thinking else [], [block.get("signature") or ""]))
            self._slot(wire_index, ("thinking", len(self.thinking) - 1))
            return ThinkingDelta(thinking) if thinking else None
        if btype == "redacted_thinking":
            self.redacted.append(block.get("data") or "")
            self._slot(wire_index, ("redacted", len(self.redacted) - 1))
            return None
        if btype == "tool_use":
            tool_id, name = block.get("id") or "", block.get("name") or ""
            at = self.tools.start(tool_id, name)
            self._slot(wire_index, ("tool", at))
            return ToolCallStart(at, tool_id, name)
        return None

    def _message_start(self, message: dict[str, Any]) -> StreamEvent | None:
        """The message opens: its id, model and input usage (a second, different one restarts the turn)."""
        usage = _start_usage(message.get("usage") or {})
        if self.request_id is not None and not self.finished:
            if message.get("id") == self.request_id:
                return None  # a gateway repeated the frame of the same message: nothing new
            # An intermediary lost its upstream and spliced a retried generation into this body: the
            # first one is void (merging both would send back thinking the API never signed as one).
            self._clear()
            self.request_id = message.get("id")
            self.model = message.get("model") or self.model
            self.usage = usage
            void = StreamInterruptedError("the server restarted the reply mid-stream", provider="anthropic")
            return StreamRetry(attempt=1, delay_seconds=0.0, error=void)
        self.model = message.get("model") or self.model
        self.request_id = message.get("id")
        self.usage = usage
        return StreamUsage(_start_usage(message.get("usage") or {}))

    def _message_delta(self, stop: str | None, du: dict[str, Any]) -> None:
        """The message's stop reason and its final token counts (each only where the server sent it)."""
        if stop:
            self.stop_reason = ANTHROPIC_STOP_REASONS.get(stop, "other")
        if du.get("output_tokens") is not None:  # the final count, which may be 0 (a refusal before any token)
            self.usage.output_tokens = du["output_tokens"]
        if du.get("input_tokens") is not None:
            self.usage.input_tokens = du["input_tokens"]
        if du.get("cache_read_input_tokens") is not None:
            self.usage.cache_read_tokens = du["cache_read_input_tokens"]
        if du.get("cache_creation_input_tokens") is not None:
            self.usage.cache_write_tokens = du["cache_creation_input_tokens"]

    def _slot(self, wire_index: int, slot: tuple[str, int]) -> None:
        self.order.append(slot)
        self.by_index[wire_index] = slot

    def response(self) -> ModelResponse:
        tool_blocks = self.tools.blocks()
        content: list[AssistantBlock] = []
        for what, index in self.order:
            if what == "tool":
                content.append(tool_blocks[index])
            elif what == "thinking":
                pieces, signature = self.thinking[index]
                content.append(ThinkingBlock(thinking="".join(pieces), signature="".join(signature)))
            elif what == "redacted":
                content.append(RedactedThinkingBlock(data=self.redacted[index]))
            elif text := "".join(self.texts[index]):
                content.append(TextBlock(text=text))
        return ModelResponse(content, self.stop_reason, self.usage, self.model, self.request_id)


class AnthropicProvider:
    """Streams model turns through `AsyncAnthropic.messages.create(stream=True)`."""

    name = "anthropic"

    def __init__(self, client: anthropic.AsyncAnthropic, policy: RetryPolicy, *, caching: bool = True) -> None:
        self.client = client
        self.policy = policy
        self.caching = caching
        silence_sdk_warning()  # agentcli names the setting to change once per run instead (AgentLoop)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one turn, retrying retryable failures."""
        return stream_with_retries(lambda: self._attempt(request), self.policy)

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        builder = _TurnBuilder(request.model)
        streamed = False
        try:
            # The SDK's public streaming response, its events read here: the SDK's own stream builds a
            # typed model of every event, which cost a fan-out of subagents more than the rest of a turn.
            params = request_params(request, caching=self.caching)
            async with self.client.messages.with_streaming_response.create(**params, stream=True) as response:
                async for raw in message_events(response, stream_byte_limit(request.max_tokens)):
                    event = builder.feed(raw)
                    if event is not None:
                        streamed = streamed or not isinstance(event, StreamUsage)  # usage alone: nothing shown yet
                        yield event
        except ProviderError:
            raise
        except (anthropic.AnthropicError, httpx2.HTTPError, httpx2.StreamError) as exc:
            raise from_sdk_exception(self.name, exc, streamed=streamed) from exc
        if not builder.finished:
            raise StreamInterruptedError(
                "the response stream ended before the model finished its turn", provider=self.name
            )
        yield ResponseDone(builder.response())
