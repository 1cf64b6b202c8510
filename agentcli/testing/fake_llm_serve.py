"""Writing one response of the fake LLM server: latency, JSON or SSE, and injected faults."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from agentcli.testing.fake_llm_match import RequestView
from agentcli.testing.fake_llm_models import ApiName, Fault, Step
from agentcli.testing.fake_llm_wire import (
    ReplyContext,
    anthropic_events,
    anthropic_message,
    error_body,
    openai_completion,
    openai_events,
    retry_headers,
    stream_error_frame,
)

_SSE_HEADERS = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}


@dataclass(frozen=True)
class ServePlan:
    """Everything decided about a request before its response is written."""

    api: ApiName
    seq: int
    view: RequestView | None
    step: Step | None
    tool_ids: tuple[str, ...]
    unexpected: list[str] | None
    not_found: bool
    latency_ms: int
    chunk_delay_ms: int
    hold: asyncio.Event | None = None  # set when the test releases the step's hold

    def request_headers(self) -> dict[str, str]:
        """Request-id headers as each API sends them."""
        rid = f"req_fake_{self.seq}"
        return {"request-id": rid, "x-request-id": rid}


Served = tuple[web.StreamResponse, int, str]
"""The response, its status and how it ended (complete, http_error, stream_error, cut, ...)."""


def _json_response(plan: ServePlan, body: Any, status: int, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        body=json.dumps(body).encode(),
        status=status,
        content_type="application/json",
        headers=plan.request_headers() | (headers or {}),
    )


def _abort(request: web.Request, response: web.StreamResponse) -> None:
    """Drop the connection without finishing the body."""
    response.force_close()
    if request.transport is not None:
        request.transport.abort()


async def serve(request: web.Request, plan: ServePlan) -> Served:
    """Write the response `plan` calls for."""
    if plan.hold is not None:
        await plan.hold.wait()
    if plan.latency_ms:
        await asyncio.sleep(plan.latency_ms / 1000)
    if plan.step is None or plan.view is None:
        status = 404 if plan.not_found else 500
        message = "fake_llm: unexpected request: " + "; ".join(plan.unexpected or [])
        body = error_body(plan.api, status, message)
        return _json_response(plan, body, status, {"x-should-retry": "false"}), status, "unexpected"
    step, view = plan.step, plan.view
    fault = step.fault
    if step.raw is not None:
        try:
            return await _serve_raw(request, plan, fault)
        except ConnectionError:
            return web.Response(status=499), 200, "client_gone"
    if fault is not None and fault.kind == "http":
        message = fault.message or f"fake_llm: injected HTTP {fault.status}"
        body = error_body(plan.api, fault.status, message, fault.error_type)
        return _json_response(plan, body, fault.status, retry_headers(fault)), fault.status, "http_error"
    prefix = "msg_fake_" if plan.api == "anthropic" else "chatcmpl-fake-"
    ctx = ReplyContext(
        api=plan.api,
        model=view.model or "fake-model",
        response_id=f"{prefix}{plan.seq}",
        tool_ids=plan.tool_ids,
        prompt_chars=len(view.all_text) + 40 * len(view.tools),
        include_usage=view.include_usage,
    )
    try:
        if view.stream:
            return await _serve_stream(request, plan, ctx, fault)
        return await _serve_json(request, plan, ctx, fault)
    except ConnectionError:
        return web.Response(status=499), 200, "client_gone"


async def _serve_raw(request: web.Request, plan: ServePlan, fault: Fault | None) -> Served:
    """Replay a recorded response byte for byte: a body, or SSE frames a fault may break off."""
    assert plan.step is not None and plan.step.raw is not None
    raw = plan.step.raw
    outcome = "complete" if raw.status < 400 else "http_error"
    if raw.body is not None:
        response = web.Response(
            body=raw.body.encode(),
            status=raw.status,
            headers=plan.request_headers() | {"Content-Type": raw.content_type or "application/json"} | raw.headers,
        )
        return response, raw.status, outcome
    headers = _SSE_HEADERS | plan.request_headers() | raw.headers
    if raw.content_type is not None:
        headers["Content-Type"] = raw.content_type
    stream = web.StreamResponse(status=raw.status, headers=headers)
    await stream.prepare(request)
    try:
        return await _write_frames(request, stream, plan, raw.encoded_frames(), fault)
    except ConnectionError:
        return stream, raw.status, "client_gone"


async def _serve_json(request: web.Request, plan: ServePlan, ctx: ReplyContext, fault: Fault | None) -> Served:
    assert plan.step is not None
    reply = plan.step.reply
    body = anthropic_message(reply, ctx) if plan.api == "anthropic" else openai_completion(reply, ctx)
    if fault is None:
        return _json_response(plan, body, 200), 200, "complete"
    if fault.kind == "stream_error":
        status = 529 if plan.api == "anthropic" else 500
        etype = fault.error_type or ("overloaded_error" if plan.api == "anthropic" else None)
        err = error_body(plan.api, status, fault.message or "Overloaded", etype)
        return _json_response(plan, err, status, retry_headers(fault)), status, "http_error"
    if fault.kind == "stall":
        await asyncio.sleep(fault.seconds)
        if fault.then == "continue":
            return _json_response(plan, body, 200), 200, "complete"
    response = web.StreamResponse(status=200, headers=plan.request_headers())
    response.content_type = "application/json"
    await response.prepare(request)
    if fault.kind == "stall":
        await response.write_eof()
        return response, 200, "closed"
    data = json.dumps(body).encode()
    await response.write(data[: len(data) // 2])
    if fault.abort:
        _abort(request, response)
        return response, 200, "aborted"
    await response.write_eof()
    return response, 200, "cut"


async def _serve_stream(request: web.Request, plan: ServePlan, ctx: ReplyContext, fault: Fault | None) -> Served:
    assert plan.step is not None
    reply = plan.step.reply
    frames = anthropic_events(reply, ctx) if plan.api == "anthropic" else openai_events(reply, ctx)
    response = web.StreamResponse(status=200, headers=_SSE_HEADERS | plan.request_headers())
    await response.prepare(request)
    try:
        return await _write_frames(request, response, plan, frames, fault)
    except ConnectionError:
        return response, 200, "client_gone"


async def _write_frames(
    request: web.Request, response: web.StreamResponse, plan: ServePlan, frames: list[bytes], fault: Fault | None
) -> Served:
    """Send the SSE frames with the step's pacing; break off where the fault says."""
    strike = min(fault.after_events, len(frames)) if fault is not None else -1
    delay = plan.chunk_delay_ms / 1000
    for i in range(len(frames) + 1):
        if i == strike and fault is not None:
            if fault.kind == "stream_error":
                await response.write(stream_error_frame(plan.api, fault))
                await response.write_eof()
                return response, 200, "stream_error"
            if fault.kind == "cut":
                if fault.abort:
                    _abort(request, response)
                    return response, 200, "aborted"
                await response.write_eof()
                return response, 200, "cut"
            if fault.kind == "stall":
                await asyncio.sleep(fault.seconds)
                if fault.then == "close":
                    await response.write_eof()
                    return response, 200, "closed"
        if i == len(frames):
            break
        if i and delay:
            await asyncio.sleep(delay)
        await response.write(frames[i])
    await response.write_eof()
    return response, 200, "complete"
