"""Wire formats: Anthropic Messages and OpenAI chat completions bodies, SSE events and errors.

Everything here is pure: a Reply plus a little request context in, JSON-able dicts or SSE
frames (bytes) out. The server decides when to send them and where to break them off.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from agentcli.testing.fake_llm_models import ApiName, Fault, Reply

_TO_OPENAI_STOP = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_calls", "stop_sequence": "stop"}
_TO_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_OPENAI_ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


@dataclass(frozen=True)
class ReplyContext:
    """What a reply needs from the request and the server: ids, model, prompt size."""

    api: ApiName
    model: str
    response_id: str
    tool_ids: tuple[str, ...]
    prompt_chars: int
    include_usage: bool


@dataclass(frozen=True)
class UsageCounts:
    """Resolved token counts (never zero for input/output)."""

    input_tokens: int
    output_tokens: int
    cache_read: int
    cache_creation: int

    def anthropic(self) -> dict[str, int]:
        """Anthropic `usage` object."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation,
            "cache_read_input_tokens": self.cache_read,
        }

    def openai(self) -> dict[str, Any]:
        """OpenAI `usage` object; prompt_tokens includes cached tokens, as OpenAI counts them."""
        prompt = self.input_tokens + self.cache_read + self.cache_creation
        return {
            "prompt_tokens": prompt,
            "completion_tokens": self.output_tokens,
            "total_tokens": prompt + self.output_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cache_read, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        }


def usage_for(reply: Reply, ctx: ReplyContext) -> UsageCounts:
    """The reply's usage, with rough chars/4 counts for whatever the script left out."""
    out_chars = len(reply.thinking) + len(reply.text)
    out_chars += sum(len(c.name) + len(c.arguments_text()) for c in reply.tool_calls)
    u = reply.usage
    given_in = u.input_tokens if u is not None else None
    given_out = u.output_tokens if u is not None else None
    return UsageCounts(
        input_tokens=given_in if given_in is not None else max(1, ctx.prompt_chars // 4),
        output_tokens=given_out if given_out is not None else max(1, out_chars // 4),
        cache_read=u.cache_read_input_tokens if u is not None else 0,
        cache_creation=u.cache_creation_input_tokens if u is not None else 0,
    )


def stop_reason_for(reply: Reply, api: ApiName) -> str:
    """Explicit stop reason translated to the API's vocabulary, or the automatic one."""
    if reply.stop_reason is not None:
        table = _TO_ANTHROPIC_STOP if api == "anthropic" else _TO_OPENAI_STOP
        return table.get(reply.stop_reason, reply.stop_reason)
    if api == "anthropic":
        return "tool_use" if reply.tool_calls else "end_turn"
    return "tool_calls" if reply.tool_calls else "stop"


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _sse(data: Any, event: str | None = None) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event is not None else ""
    return f"{head}data: {payload}\n\n".encode()


# ---------------------------------------------------------------- Anthropic


def anthropic_message(reply: Reply, ctx: ReplyContext) -> dict[str, Any]:
    """A complete non-streaming Messages API response body."""
    content: list[dict[str, Any]] = []
    if reply.thinking:
        content.append({"type": "thinking", "thinking": reply.thinking, "signature": reply.thinking_signature})
    if reply.text or not reply.tool_calls:
        content.append({"type": "text", "text": reply.text})
    for call, call_id in zip(reply.tool_calls, ctx.tool_ids, strict=True):
        content.append(
            {"type": "tool_use", "id": call_id, "name": call.name, "input": _input_of(call.arguments_text())}
        )
    return {
        "id": ctx.response_id,
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": stop_reason_for(reply, "anthropic"),
        "stop_sequence": None,
        "usage": usage_for(reply, ctx).anthropic(),
    }


def _input_of(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def anthropic_events(reply: Reply, ctx: ReplyContext) -> list[bytes]:
    """The SSE frames of a streamed Messages API response, message_start to message_stop."""
    usage = usage_for(reply, ctx)
    start_usage = usage.anthropic() | {"output_tokens": 1}
    frames = [
        _sse(
            {
                "type": "message_start",
                "message": {
                    "id": ctx.response_id,
                    "type": "message",
                    "role": "assistant",
                    "model": ctx.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
            "message_start",
        ),
        _sse({"type": "ping"}, "ping"),
    ]
    index = 0
    if reply.thinking:
        block: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
        frames.append(
            _sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")
        )
        for piece in _chunks(reply.thinking, reply.chunk_size):
            delta = {"type": "thinking_delta", "thinking": piece}
            frames.append(_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        if reply.thinking_signature:
            delta = {"type": "signature_delta", "signature": reply.thinking_signature}
            frames.append(_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        frames.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    if reply.text or not reply.tool_calls:
        block = {"type": "text", "text": ""}
        frames.append(
            _sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")
        )
        for piece in _chunks(reply.text, reply.chunk_size):
            delta = {"type": "text_delta", "text": piece}
            frames.append(_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        frames.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    for call, call_id in zip(reply.tool_calls, ctx.tool_ids, strict=True):
        block = {"type": "tool_use", "id": call_id, "name": call.name, "input": {}}
        frames.append(
            _sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")
        )
        for piece in _chunks(call.arguments_text(), reply.args_chunk_size):
            delta = {"type": "input_json_delta", "partial_json": piece}
            frames.append(_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        frames.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    frames.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason_for(reply, "anthropic"), "stop_sequence": None},
                "usage": usage.anthropic(),
            },
            "message_delta",
        )
    )
    frames.append(_sse({"type": "message_stop"}, "message_stop"))
    return frames


# ---------------------------------------------------------------- OpenAI


def openai_completion(reply: Reply, ctx: ReplyContext) -> dict[str, Any]:
    """A complete non-streaming chat completion body."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if reply.thinking:
        message["reasoning_content"] = reply.thinking
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_text()}}
            for call, call_id in zip(reply.tool_calls, ctx.tool_ids, strict=True)
        ]
    return {
        "id": ctx.response_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": ctx.model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": stop_reason_for(reply, "openai")}
        ],
        "usage": usage_for(reply, ctx).openai(),
        "system_fingerprint": None,
    }


def openai_events(reply: Reply, ctx: ReplyContext) -> list[bytes]:
    """The SSE frames of a streamed chat completion, including the usage chunk and [DONE]."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body: dict[str, Any] = {
            "id": ctx.response_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": ctx.model,
            "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if ctx.include_usage:
            body["usage"] = None
        return _sse(body)

    frames = [chunk({"role": "assistant", "content": "", "refusal": None})]
    frames.extend(chunk({"reasoning_content": piece}) for piece in _chunks(reply.thinking, reply.chunk_size))
    frames.extend(chunk({"content": piece}) for piece in _chunks(reply.text, reply.chunk_size))
    sloppy = reply.sloppy_tool_deltas
    for i, (call, call_id) in enumerate(zip(reply.tool_calls, ctx.tool_ids, strict=True)):
        first: dict[str, Any] = {
            "index": i,
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        if sloppy:
            del first["type"]
        frames.append(chunk({"tool_calls": [first]}))
        for piece in _chunks(call.arguments_text(), reply.args_chunk_size):
            part: dict[str, Any] = {"index": i, "function": {"arguments": piece}}
            if sloppy and reply.sloppy_omit_index:
                del part["index"]
            frames.append(chunk({"tool_calls": [part]}))
    frames.append(chunk({}, stop_reason_for(reply, "openai")))
    if ctx.include_usage:
        frames.append(
            _sse(
                {
                    "id": ctx.response_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": ctx.model,
                    "system_fingerprint": None,
                    "choices": [],
                    "usage": usage_for(reply, ctx).openai(),
                }
            )
        )
    frames.append(_sse("[DONE]"))
    return frames


# ---------------------------------------------------------------- errors


def error_body(api: ApiName, status: int, message: str, error_type: str | None = None) -> dict[str, Any]:
    """An HTTP error body in the API's real shape; the type is derived from the status if not given."""
    if api == "anthropic":
        etype = error_type or _ANTHROPIC_ERROR_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": etype, "message": message}}
    default_type, code = _OPENAI_ERRORS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    return {"error": {"message": message, "type": error_type or default_type, "param": None, "code": code}}


def stream_error_frame(api: ApiName, fault: Fault) -> bytes:
    """The in-stream error event: Anthropic `event: error`, OpenAI a data chunk with `error`."""
    if api == "anthropic":
        etype = fault.error_type or "overloaded_error"
        message = fault.message or "Overloaded"
        return _sse({"type": "error", "error": {"type": etype, "message": message}}, "error")
    etype = fault.error_type or "server_error"
    message = fault.message or "The server had an error while processing your request."
    return _sse({"error": {"message": message, "type": etype, "param": None, "code": None}})


def retry_headers(fault: Fault | None) -> dict[str, str]:
    """retry-after / retry-after-ms / x-should-retry headers for an HTTP fault."""
    if fault is None:
        return {"retry-after": "0", "retry-after-ms": "1"}
    headers: dict[str, str] = {}
    if fault.retry_after is not None:
        ra = fault.retry_after
        headers["retry-after"] = str(int(ra)) if float(ra).is_integer() else str(ra)
        ms = fault.retry_after_ms if fault.retry_after_ms is not None else max(1, int(ra * 1000))
        headers["retry-after-ms"] = str(ms)
    elif fault.retry_after_ms is not None:
        headers["retry-after-ms"] = str(fault.retry_after_ms)
    if fault.should_retry is not None:
        headers["x-should-retry"] = "true" if fault.should_retry else "false"
    return headers
