"""The in-process scripted provider: the server's scripts and strictness, the real adapters' events."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentcli.llm.base import (
    AuthenticationError,
    Message,
    ModelRequest,
    OverloadedError,
    ProviderError,
    RateLimitError,
    ResponseDone,
    RetryPolicy,
    StreamEvent,
    StreamRetry,
    ToolSpec,
)
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.testing.fake_llm import FakeLLMServer, Raw
from agentcli.testing.scripted import (
    Fault,
    Match,
    Reply,
    Script,
    ScriptedLLM,
    ScriptedProviderPool,
    ScriptUsage,
    Step,
    ToolCall,
    UnexpectedScriptedRequest,
)

APIS = ("anthropic", "openai")
POLICY = RetryPolicy(max_retries=1, initial_delay=0.001, max_delay=0.001, jitter=0.0)
READ = ToolSpec("Read", "read a file", {"type": "object", "properties": {"file_path": {"type": "string"}}})


def _request(text: str = "hi", *, tools: bool = True, model: str = "fake-model") -> ModelRequest:
    return ModelRequest(model=model, system="You are scripted.", messages=[Message.user(text)],
                        tools=(READ,) if tools else (), max_tokens=512)


async def _play(provider: Any, request: ModelRequest) -> tuple[list[Any], BaseException | None]:
    """Every event of one turn, made comparable, and the error that ended it (if any)."""
    seen: list[Any] = []
    try:
        async for event in provider.stream(request):
            seen.append(_comparable(event))
    except ProviderError as exc:
        return seen, exc
    return seen, None


def _comparable(event: StreamEvent) -> Any:
    if isinstance(event, StreamRetry):  # the delay has jitter, the message names the transport
        return ("retry", event.attempt, type(event.error).__name__)
    if isinstance(event, ResponseDone):
        r = event.response
        return ("done", r.content, r.stop_reason, r.usage, r.model, r.request_id)
    return event


async def _over_http(api: str, step: Step, request: ModelRequest) -> tuple[list[Any], BaseException | None]:
    pool = ProviderPool(POLICY)
    try:
        with FakeLLMServer(Script(steps=[step])) as server:
            url = server.base_url if api == "anthropic" else server.base_url + "/v1"
            model = ResolvedModel("main", api, "fake-model", url, "sk-test", 512)  # type: ignore[arg-type]
            out = await _play(pool.get(model), request)
            server.assert_done()
            return out
    finally:
        await pool.aclose()


async def _in_process(api: str, step: Step, request: ModelRequest) -> tuple[list[Any], BaseException | None]:
    llm = ScriptedLLM(Script(steps=[step]))
    out = await _play(llm.provider(api, policy=POLICY), request)  # type: ignore[arg-type]
    llm.assert_done()
    return out


CALLS = [ToolCall(name="Read", input={"file_path": "a.txt"}), ToolCall(name="Read", input={"file_path": "bb.txt"})]
PARITY: dict[str, Step] = {
    "text": Step(reply=Reply(text="Hello there, in pieces.", chunk_size=5)),
    "empty": Step(reply=Reply(text="")),
    "thinking": Step(reply=Reply(thinking="Let me think this through.", thinking_signature="sig-1", text="Answer.")),
    "tools": Step(reply=Reply(text="Reading.", tool_calls=CALLS, args_chunk_size=7)),
    "tools-only": Step(reply=Reply(tool_calls=CALLS[:1])),
    "bad-json": Step(reply=Reply(tool_calls=[ToolCall(name="Read", arguments_json='{"file_path": ')])),
    "cache-usage": Step(reply=Reply(text="ok", usage=ScriptUsage(
        input_tokens=10, output_tokens=5, cache_read_input_tokens=300, cache_creation_input_tokens=40))),
    "max-tokens": Step(reply=Reply(text="cut sho", stop_reason="max_tokens")),
    "rate-limited": Step(fault=Fault(kind="http", status=429), times=2),
    "auth": Step(fault=Fault(kind="http", status=401)),
    "server-error": Step(fault=Fault(kind="http", status=500), times=2),
    "overloaded-in-stream": Step(reply=Reply(text="partial text"), fault=Fault(kind="stream_error"), times=2),
    "cut-late": Step(reply=Reply(text="partial text here", chunk_size=4), fault=Fault(kind="cut", after_events=5)),
    "cut-after-all": Step(reply=Reply(text="whole"), fault=Fault(kind="cut", after_events=99)),
    "error-after-all": Step(reply=Reply(text="whole"), fault=Fault(kind="stream_error", after_events=99), times=2,
                            optional=True),  # OpenAI reads nothing after [DONE]: one use there, no retry
    "abort-after-all": Step(reply=Reply(text="whole"), fault=Fault(kind="cut", after_events=99, abort=True)),
    "stall": Step(reply=Reply(text="slow"), fault=Fault(kind="stall", seconds=0.01, after_events=3)),
    "stall-close": Step(reply=Reply(text="slow text", chunk_size=2),
                        fault=Fault(kind="stall", seconds=0.01, after_events=4, then="close")),
}


@pytest.mark.parametrize("case", list(PARITY))
@pytest.mark.parametrize("api", APIS)
async def test_same_events_as_the_real_adapter_over_http(api: str, case: str) -> None:
    step = PARITY[case]
    request = _request()
    http_events, http_error = await _over_http(api, step, request)
    events, error = await _in_process(api, step, request)
    assert events == http_events
    assert type(error) is type(http_error)
    if error is not None and http_error is not None:
        assert (getattr(error, "status", None), error.retryable) == (http_error.status, http_error.retryable)  # type: ignore[attr-defined]


async def test_a_retryable_fault_is_retried_under_the_policy() -> None:
    llm = ScriptedLLM([Step(fault=Fault(kind="http", status=429)), Step(reply=Reply(text="ok"))])
    events, error = await _play(llm.provider(policy=POLICY), _request())
    assert error is None and events[0] == ("retry", 1, "RateLimitError") and events[-1][0] == "done"
    assert [r.step_index for r in llm.requests] == [0, 1]
    assert [r.outcome for r in llm.requests] == ["http_error", "complete"]
    llm.assert_done()


async def test_faults_raise_the_adapters_errors() -> None:
    llm = ScriptedLLM([
        Step(match=Match(last_user_contains="one"), fault=Fault(kind="http", status=401)),
        Step(match=Match(last_user_contains="two"), fault=Fault(kind="stream_error")),
    ])
    provider = llm.provider()
    _, auth = await _play(provider, _request("one"))
    _, overloaded = await _play(provider, _request("two"))
    assert isinstance(auth, AuthenticationError) and auth.status == 401
    assert isinstance(overloaded, OverloadedError) and overloaded.retryable
    assert not isinstance(auth, RateLimitError)


async def test_an_unexpected_request_fails_naming_the_request_and_is_reported() -> None:
    llm = ScriptedLLM([Step(match=Match(last_user_contains="hello"), reply=Reply(text="hi"))])
    _, error = await _play(llm.provider(), _request("something else"))
    assert isinstance(error, UnexpectedScriptedRequest) and not error.retryable
    assert "unexpected request #0" in str(error) and "'something else'" in str(error)
    assert "step 0: last user message lacks 'hello'" in str(error)
    with pytest.raises(AssertionError) as caught:
        llm.assert_done()
    report = str(caught.value)
    assert "unexpected request #0" in report and "step 0 unused: 0 of 1 uses" in report
    assert llm.unexpected == llm.requests


async def test_an_unused_step_fails_assert_all_used_unless_optional() -> None:
    llm = ScriptedLLM([Step(reply=Reply(text="a")), Step(name="spare", reply=Reply(text="b")),
                       Step(reply=Reply(text="c"), optional=True)])
    await _play(llm.provider(), _request())
    with pytest.raises(AssertionError, match=r"step 1 \(spare\) unused"):
        llm.assert_all_used()
    assert [used for _, used in llm.steps] == [1, 0, 0]


async def test_routing_by_content_not_order_and_by_api_flavour() -> None:
    llm = ScriptedLLM([
        Step(match=Match(api="openai", last_user_contains="b"), reply=Reply(text="B")),
        Step(match=Match(api="anthropic", tools_include=["Read"]), reply=Reply(text="A")),
    ])
    a_events, _ = await _play(llm.provider("anthropic"), _request("a"))
    b_events, _ = await _play(llm.provider("openai"), _request("b", tools=False))
    assert a_events[-1][1][0].text == "A" and b_events[-1][1][0].text == "B"
    llm.assert_done()


async def test_requests_are_logged_with_the_model_request_and_a_plain_body() -> None:
    llm = ScriptedLLM([Step(reply=Reply(text="ok", echo_last_user=5))])
    request = _request("hello world", model="m-1")
    events, _ = await _play(llm.provider(), request)
    assert events[-1][1][0].text == "okhello"
    (record,) = llm.requests
    assert record.request is request and record.body["model"] == "m-1"
    assert record.body["system"] == "You are scripted." and record.body["tools"] == [{"name": "Read"}]
    assert record.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello world"}]}]
    assert "hello world" in record.text() and record.finished_at is not None


async def test_latency_overlap_and_waiting_for_requests() -> None:
    llm = ScriptedLLM([Step(reply=Reply(text="x"), latency_ms=50, times=3)])
    provider = llm.provider()
    runs = [asyncio.create_task(_play(provider, _request())) for _ in range(3)]
    await llm.wait_for_requests_async(3)
    assert llm.in_flight == 3
    await asyncio.gather(*runs)
    await llm.wait_for_finished_async(3)
    assert llm.in_flight == 0 and llm.in_flight_max == 3
    llm.assert_done()


async def test_a_closed_stream_is_recorded_and_frees_its_slot() -> None:
    llm = ScriptedLLM([Step(reply=Reply(text="many small pieces", chunk_size=1))])
    stream = llm.provider().stream(_request())
    assert isinstance(stream, AsyncIterator)
    await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]
    assert llm.in_flight == 0 and llm.requests[0].outcome == "closed"


def test_raw_replays_are_refused_with_a_pointer_to_the_server() -> None:
    with pytest.raises(ValueError, match="FakeLLMServer"):
        ScriptedLLM([Step(raw=Raw(body="{}"))])


async def test_the_pool_gives_each_provider_its_flavour() -> None:
    llm = ScriptedLLM([Step(match=Match(api="openai"), reply=Reply(text="o")),
                       Step(match=Match(api="anthropic"), reply=Reply(text="a"))])
    pool = ScriptedProviderPool(llm)
    compatible = pool.get(ResolvedModel("light", "openai-compatible", "m", None, "k", 512))
    claude = pool.get(ResolvedModel("main", "anthropic", "m", None, "k", 512))
    assert pool.get(ResolvedModel("x", "anthropic", "other", None, "k2", 512)) is claude
    assert (compatible.name, compatible.api, claude.api) == ("openai-compatible", "openai", "anthropic")
    await _play(compatible, _request())
    await _play(claude, _request())
    llm.assert_done()
    await pool.aclose()


def test_importing_it_loads_neither_sdk() -> None:
    code = (
        "import sys, agentcli.testing.scripted\n"
        "print(sorted(m for m in ('anthropic', 'openai', 'aiohttp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
