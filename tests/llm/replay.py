"""Helpers for raw replays: recorded-shape SSE frames for both APIs, and a validity check of request bodies."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from agentcli.testing.fake_llm import Raw, RawFrame


def anthropic_frames(blocks: list[dict[str, Any]], stop_reason: str, *, model: str = "claude-sonnet-5-5",
                     output_tokens: int = 5) -> Raw:
    """A Messages API stream with the given finished blocks (text / tool_use), as the API sends them."""
    frames: list[Any] = [
        RawFrame(event="message_start", data={"type": "message_start", "message": {
            "id": "msg_01Replay", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                      "output_tokens": 1}}}),
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}] if block["text"] else []
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": block["json"]}]
        frames.append(RawFrame(event="content_block_start",
                               data={"type": "content_block_start", "index": index, "content_block": start}))
        frames.extend(RawFrame(event="content_block_delta",
                               data={"type": "content_block_delta", "index": index, "delta": d}) for d in deltas)
        frames.append(RawFrame(event="content_block_stop", data={"type": "content_block_stop", "index": index}))
    frames.append(RawFrame(event="message_delta", data={
        "type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens}}))
    frames.append(RawFrame(event="message_stop", data={"type": "message_stop"}))
    return Raw(frames=frames)


def openai_chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """One chat.completion.chunk payload (no choices when `delta` is None)."""
    body: dict[str, Any] = {"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": 1760000000,
                            "model": "replay-model"}
    body["choices"] = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body.update(extra)
    return body


@cache
def _adapters() -> dict[str, TypeAdapter[Any]]:
    import anthropic.types as at
    import openai.types.chat as oc

    return {
        "anthropic_message": TypeAdapter(at.MessageParam),
        "anthropic_blocks": TypeAdapter(list[at.ContentBlockParam]),
        "openai_messages": TypeAdapter(list[oc.ChatCompletionMessageParam]),
        "openai_calls": TypeAdapter(list[oc.ChatCompletionMessageToolCallParam]),
    }


def _check_sdk_types(api: str, messages: list[dict[str, Any]]) -> None:
    """Each outgoing message against the SDK's own param types (the adapters skip the SDK's typed transform)."""
    types = _adapters()
    if api == "anthropic":
        for m in messages:
            types["anthropic_message"].validate_python(m)
            if not isinstance(m["content"], str):
                types["anthropic_blocks"].validate_python(m["content"])
        return
    types["openai_messages"].validate_python(messages)
    for m in messages:
        if m.get("tool_calls"):
            types["openai_calls"].validate_python(m["tool_calls"])


def assert_valid_request(api: str, body: dict[str, Any]) -> None:
    """What both APIs reject: empty or whitespace-only text, an assistant message with nothing in it."""
    messages = body["messages"]
    assert messages, "no messages"
    _check_sdk_types(api, messages)
    for i, m in enumerate(messages):
        if api == "anthropic":
            content = m["content"]
            assert isinstance(content, list) and content, f"message {i} has no content: {m}"
            for block in content:
                if block["type"] == "text":
                    assert block["text"].strip(), f"message {i} has an empty or whitespace-only text block: {m}"
        elif m["role"] == "assistant":
            text = m.get("content")
            assert (isinstance(text, str) and text.strip()) or m.get("tool_calls"), f"empty assistant message: {m}"
        elif m["role"] in ("user", "system"):
            assert isinstance(m["content"], str) and m["content"].strip(), f"empty {m['role']} message: {m}"


RECORDINGS_DIR = Path(__file__).parent / "recordings"


def recording_raw(rec: dict[str, Any]) -> Raw:
    """The raw replay of one tests/llm/recordings/*.json file: its frames or body, byte for byte."""
    frames = None
    if "frames" in rec:
        frames = [RawFrame(event=f["event"], data=f["data"]) if isinstance(f, dict) else f for f in rec["frames"]]
    return Raw(status=rec["status"], headers=rec.get("headers", {}), content_type=rec.get("content_type"),
               frames=frames, body=rec.get("body"))
