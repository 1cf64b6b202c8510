"""OpenAI chat-completions adapter (also for OpenAI-compatible servers) over the official `openai` SDK."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletionChunk

from agentcli.llm.base import (
    AssistantBlock,
    ImageBlock,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ResponseDone,
    RetryPolicy,
    StopReason,
    StreamEvent,
    StreamInterruptedError,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallAccumulator,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResultBlock,
    ToolUseBlock,
    sendable,
)
from agentcli.llm.errors import from_sdk_exception
from agentcli.llm.retry import stream_with_retries
from agentcli.llm.sse import byte_lines, server_events, stream_byte_limit
from agentcli.llm.usage import Usage
from agentcli.llm.wire_terms import OPENAI_STOP_REASONS, field, openai_usage


def _deepseek_reasoning(model: str, messages: Sequence[Message]) -> dict[int, str]:
    """The assistant messages (by index) whose reasoning goes back as `reasoning_content`: DeepSeek only.

    DeepSeek's thinking mode wants the reasoning of the turn in progress (a tool loop) sent back, and
    V4 models want the field on every assistant message; earlier turns' reasoning must not reach R1.
    Only unsigned reasoning goes (a compatible server's); Anthropic's signed thinking never does.
    """
    name = model.lower()
    if "deepseek" not in name:
        return {}
    every = "v4" in name
    prompts = [i for i, m in enumerate(messages) if m.role == "user" and m.text().strip()]
    last_prompt = prompts[-1] if prompts else -1
    out: dict[int, str] = {}
    for i, message in enumerate(messages):
        if message.role != "assistant" or not (every or i > last_prompt):
            continue
        reasoning = "".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock) and not b.signature)
        if reasoning or every:
            out[i] = reasoning
    return out


def _message_params(messages: Sequence[Message], reasoning: dict[int, str] | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "assistant":
            calls = [
                {
                    "id": b.id,
                    "type": "function",
                    "function": {"name": b.name, "arguments": json.dumps(b.input)},
                }
                for b in message.content
                if isinstance(b, ToolUseBlock)
            ]
            entry: dict[str, Any] = {"role": "assistant", "content": message.text() or None}
            if calls:
                entry["tool_calls"] = calls
            if reasoning and index in reasoning:
                entry["reasoning_content"] = reasoning[index]
            out.append(entry)
            continue
        # Tool results must follow the assistant message directly, before any user text.
        shown: list[dict[str, Any]] = []  # a tool message holds text only: what tools show follows as the user's
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                content = f"Error: {block.content}" if block.is_error else block.content
                out.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": content})
                if block.images:
                    shown.append({"type": "text", "text": f"(the image{'s' * (len(block.images) > 1)} the tool "
                                                          f"call {block.tool_use_id} returned)"})
                    shown.extend(_image_part(image) for image in block.images)
        parts = [*shown, *_user_parts(message)]
        if len(parts) == 1 and parts[0]["type"] == "text":
            out.append({"role": "user", "content": parts[0]["text"]})
        elif parts:
            out.append({"role": "user", "content": parts})
    return out


def _user_parts(message: Message) -> list[dict[str, Any]]:
    """A person's text and images as chat content parts, in order (adjacent text joined)."""
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            if parts and parts[-1]["type"] == "text":
                parts[-1] = {"type": "text", "text": parts[-1]["text"] + block.text}
            else:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
    return parts


def _image_part(image: ImageBlock) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{image.data}"}}


def request_params(request: ModelRequest, *, compatible: bool) -> dict[str, Any]:
    """Keyword arguments for `chat.completions.create` (without `stream`)."""
    history = sendable(request.messages)
    messages = _message_params(history, _deepseek_reasoning(request.model, history) if compatible else None)
    if request.system:
        messages.insert(0, {"role": "system", "content": request.system})
    params: dict[str, Any] = {"model": request.model, "messages": messages}
    # OpenAI's own API wants max_completion_tokens; compatible servers mostly know max_tokens only.
    params["max_tokens" if compatible else "max_completion_tokens"] = request.max_tokens
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
            }
            for t in request.tools
        ]
    if request.temperature is not None:
        params["temperature"] = request.temperature
    if request.reasoning_effort:
        params["reasoning_effort"] = request.reasoning_effort
    return params


def _content_text(content: Any) -> tuple[str, str]:
    """(answer, reasoning) of `delta.content`: a string, or a list of typed parts (Mistral's thinking parts)."""
    if content is None:
        return "", ""
    if isinstance(content, str):
        return content, ""
    answer: list[str] = []
    reasoning: list[str] = []
    for part in content if isinstance(content, list) else ():
        kind = field(part, "type")
        if isinstance(part, str):
            answer.append(part)
        elif kind == "text" and isinstance(field(part, "text"), str):
            answer.append(field(part, "text"))
        elif kind == "thinking":
            inner = field(part, "thinking")
            pieces = inner if isinstance(inner, list) else [inner]
            reasoning.extend(p if isinstance(p, str) else str(field(p, "text") or "") for p in pieces)
    return "".join(answer), "".join(reasoning)


def _generated_tool_name(generated: str) -> str | None:
    """The tool a failed generation meant to call: `<function=Name ...>` or `{"name": "Name", ...}`."""
    import re

    match = re.search(r"<function=([A-Za-z0-9_.-]+)", generated) or re.search(
        r'"name"\s*:\s*"([A-Za-z0-9_.-]+)"', generated
    )
    return match.group(1) if match else None


class _TurnBuilder:
    """Folds chunks into stream events; tolerant of deltas without `index` or `id`."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.usage = Usage()
        self.stop_reason: StopReason | None = None
        self.request_id: str | None = None
        self.text: list[str] = []
        self.tools = ToolCallAccumulator()
        self.by_wire_index: dict[int, int] = {}
        self.by_id: dict[str, int] = {}
        self.text_before_tools = True
        self.refused = False
        self.reasoning: list[str] = []
        self.timings: Any = None

    def _tool_slot(self, wire_index: int | None, call_id: str | None, name: str | None) -> tuple[int, bool]:
        """Our index for a tool-call delta, and whether it opened a new call."""
        if call_id and call_id in self.by_id:
            return self.by_id[call_id], False
        if wire_index is not None and wire_index in self.by_wire_index and not (
            call_id and self.tools.ids[self.by_wire_index[wire_index]] != call_id
        ):
            return self.by_wire_index[wire_index], False
        if not call_id and not name and self.tools.ids:
            return len(self.tools.ids) - 1, False  # sloppy continuation of the last call
        index = self.tools.start(call_id or f"call_{len(self.tools.ids)}", name or "")
        if call_id:
            self.by_id[call_id] = index
        if wire_index is not None:
            self.by_wire_index[wire_index] = index
        return index, True

    def feed(self, chunk: Any) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        self.request_id = self.request_id or chunk.id
        if chunk.model:
            self.model = chunk.model
        if chunk.usage is not None:
            self.usage = openai_usage(chunk.usage)
        groq = field(chunk, "x_groq")  # Groq reports usage only here, on the last chunk
        if groq is not None and field(groq, "usage") is not None and chunk.usage is None:
            self.usage = openai_usage(field(groq, "usage"))
        timings = field(chunk, "timings")  # llama.cpp server: its own counts, with the prompt-cache hits
        if timings is not None:
            self.timings = timings
        for choice in chunk.choices or ():
            if getattr(choice, "index", 0) not in (0, None):
                continue  # n > 1 is never asked for; a stray second choice must not mix into the first
            delta = choice.delta
            if delta is not None:
                text, thought = _content_text(delta.content)
                for extra in ("reasoning_content", "reasoning"):  # DeepSeek, vLLM, llama.cpp / OpenRouter, Ollama
                    value = field(delta, extra)
                    if isinstance(value, str):
                        thought += value
                if thought:
                    self.reasoning.append(thought)
                    events.append(ThinkingDelta(thought))
                if text:
                    if self.tools.ids:
                        self.text_before_tools = False
                    self.text.append(text)
                    events.append(TextDelta(text))
                refusal = field(delta, "refusal")
                if isinstance(refusal, str) and refusal:
                    self.refused = True
                    self.text.append(refusal)
                    events.append(TextDelta(refusal))
                for call in delta.tool_calls or ():
                    fn = call.function
                    name = fn.name if fn is not None else None
                    index, new = self._tool_slot(call.index, call.id, name)
                    if new:
                        events.append(ToolCallStart(index, self.tools.ids[index], self.tools.names[index]))
                    elif name and not self.tools.names[index]:
                        self.tools.names[index] = name
                    if fn is not None and fn.arguments:
                        self.tools.add_args(index, fn.arguments)
                        events.append(ToolCallArgsDelta(index, fn.arguments))
            if choice.finish_reason:
                self.stop_reason = OPENAI_STOP_REASONS.get(choice.finish_reason, "other")
        return events

    def tool_json_complete(self) -> bool:
        """Whether every tool call's arguments are a whole JSON object (a stream may end without finish_reason)."""
        return bool(self.tools.ids) and all(b.input_error is None for b in self.tools.blocks())

    def failed_tool_call(self, message: str, generated: str) -> None:
        """Record a call the server could not parse (Groq `tool_use_failed`) so the model is told and can retry."""
        name = _generated_tool_name(generated) or "invalid_tool_call"
        index = self.tools.start(f"call_failed_{len(self.tools.ids)}", name)
        self.tools.failed[index] = (
            f"the server rejected this tool call as malformed ({message}). You generated: {generated[:600]!r}. "
            "Call the tool again with arguments that are one valid JSON object."
        )
        self.stop_reason = "tool_use"


    def response(self) -> ModelResponse:
        content: list[AssistantBlock] = []
        if reasoning := "".join(self.reasoning):
            content.append(ThinkingBlock(thinking=reasoning))  # kept apart; sent back only where DeepSeek asks for it
        text = "".join(self.text)
        tools = self.tools.blocks()
        if text and self.text_before_tools:
            content.append(TextBlock(text=text))
        content.extend(tools)
        if text and not self.text_before_tools:
            content.append(TextBlock(text=text))
        stop = self.stop_reason or ("tool_use" if tools else "end_turn")
        if tools and stop == "end_turn":
            stop = "tool_use"  # some compatible servers say "stop" after tool calls
        if self.refused and stop == "end_turn":
            stop = "refusal"
        return ModelResponse(content, stop, self._with_timings(), self.model, self.request_id)

    def _with_timings(self) -> Usage:
        """llama.cpp's `timings`: the only counts when no usage came, else where its prompt-cache hits are.

        llama.cpp's `prompt_tokens` includes the `cache_n` tokens it reused; without
        `prompt_tokens_details.cached_tokens` they would be billed as fresh input.
        """
        u, t = self.usage, self.timings
        if t is None:
            return u

        def count(name: str) -> int:
            value = field(t, name)
            return int(value) if isinstance(value, int | float) and value > 0 else 0

        cache_n = count("cache_n")
        if not u.total_tokens:
            return Usage(input_tokens=count("prompt_n"), output_tokens=count("predicted_n"), cache_read_tokens=cache_n)
        if cache_n and not u.cache_read_tokens and u.input_tokens >= cache_n:
            return Usage(u.input_tokens - cache_n, u.output_tokens, cache_n, u.cache_write_tokens)
        return u


class OpenAIProvider:
    """Streams model turns through `AsyncOpenAI.chat.completions.create(stream=True)`."""

    def __init__(
        self, client: openai.AsyncOpenAI, policy: RetryPolicy, *, name: str = "openai", compatible: bool = False
    ) -> None:
        self.client = client
        self.policy = policy
        self.name = name
        self.compatible = compatible

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one turn, retrying retryable failures."""
        return stream_with_retries(lambda: self._attempt(request), self.policy)

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        builder = _TurnBuilder(request.model)
        streamed = False
        done = False
        seen_done: list[bool] = []
        try:
            params = request_params(request, compatible=self.compatible)
            # The SDK's typed transform walks every message and tool schema on each request (~30 ms
            # per request at 40 turns). These two are plain JSON already, so they go as extra_body,
            # which the SDK merges into the same request body untouched (it wins over `messages`).
            raw = {"messages": params.pop("messages")}
            if "tools" in params:
                raw["tools"] = params.pop("tools")
            # The SDK's public streaming response, read as SSE here: its stream object hides whether
            # the server said `data: [DONE]`, which tells a finished text-only turn from a cut one.
            async with self.client.chat.completions.with_streaming_response.create(
                **params,
                messages=[],
                stream=True,
                stream_options={"include_usage": True},
                extra_body=raw,
            ) as response:
                async for chunk in _chunks(response, seen_done, stream_byte_limit(request.max_tokens), self.name):
                    for event in builder.feed(chunk):
                        streamed = True
                        yield event
                    done = done or builder.stop_reason is not None
        except ProviderError:
            raise
        except (openai.OpenAIError, httpx2.HTTPError, httpx2.StreamError) as exc:
            failed = _tool_use_failed(exc)
            if failed is None:
                raise from_sdk_exception(self.name, exc, streamed=streamed) from exc
            builder.failed_tool_call(*failed)  # told to the model as a tool error, so it can try again
            done = True
        if not done and builder.tool_json_complete():
            done = True  # [DONE] (or a clean end) without finish_reason, every tool call whole: OpenRouter
        elif not done and seen_done and not builder.tools.ids:
            done = True  # [DONE] without finish_reason after plain text
        if not done:
            raise StreamInterruptedError(
                "the response stream ended before the model finished its turn", provider=self.name
            )
        yield ResponseDone(builder.response())


async def _chunks(
    response: Any, seen_done: list[bool], limit: int, provider: str
) -> AsyncIterator[ChatCompletionChunk]:
    """The chunks of a chat-completions event stream, as the SDK's own stream would give them.

    `data: [DONE]` ends the stream and is noted in `seen_done`; an event carrying `error` raises
    `openai.APIError` (an error inside a 200 stream); transport failures become the SDK's
    `APITimeoutError` / `APIConnectionError`. Chunks are built like the SDK builds them, without
    validation (compatible servers send sloppy deltas).
    """
    request = response.http_request
    try:
        async for sse in server_events(byte_lines(response.iter_bytes(), limit, provider)):
            if seen_done:
                continue  # after [DONE]: read to the end, so an HTTP/1.1 connection can be reused
            if sse.data.startswith("[DONE]"):
                seen_done.append(True)
                continue
            data = json.loads(sse.data)
            if isinstance(data, dict) and data.get("error"):
                error = data["error"]
                message = error.get("message") if isinstance(error, dict) else None
                if not message or not isinstance(message, str):
                    message = "An error occurred during streaming"
                raise openai.APIError(message, request, body=error)
            yield ChatCompletionChunk.model_construct(**data)
    except httpx2.TimeoutException as exc:
        raise openai.APITimeoutError(request=request) from exc
    except (httpx2.RequestError, ssl.SSLError) as exc:
        raise openai.APIConnectionError(request=request) from exc


def _tool_use_failed(exc: BaseException) -> tuple[str, str] | None:
    """(message, failed generation) of a Groq `tool_use_failed` error, in a stream or as HTTP 400."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(inner, dict) or inner.get("code") != "tool_use_failed":
        return None
    message = str(inner.get("message") or "tool_use_failed")
    generated = inner.get("failed_generation")
    return " ".join(message.split()), generated if isinstance(generated, str) else ""
