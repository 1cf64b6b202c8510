"""Both adapters through the real SDKs against the fake LLM server on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.llm.base import (
    AuthenticationError,
    Message,
    ModelRequest,
    ProviderError,
    ResponseDone,
    RetryPolicy,
    ServerError,
    StreamEvent,
    StreamInterruptedError,
    StreamRetry,
    TextBlock,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Step, ToolCall

APIS = ("anthropic", "openai")
READ_TOOL = ToolSpec(
    name="Read",
    description="Read a file",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def _model(api: str, srv: FakeLLMServer, name: str = "fake-model") -> ResolvedModel:
    if api == "anthropic":
        return ResolvedModel("main", "anthropic", name, srv.base_url, "sk-ant-test", 1024)
    return ResolvedModel("main", "openai", name, srv.base_url + "/v1", "sk-test", 1024)


async def _collect(pool: ProviderPool, model: ResolvedModel, request: ModelRequest) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    async for event in pool.get(model).stream(request):
        events.append(event)
    return events


def _request(model: ResolvedModel, text: str = "hi", **kw: Any) -> ModelRequest:
    return ModelRequest(model=model.model, system="You are a test.", messages=[Message.user(text)], **kw)


@pytest.fixture
def retry_policy() -> RetryPolicy:
    return RetryPolicy(max_retries=2, initial_delay=0.01, max_delay=0.02)


@pytest.mark.parametrize("api", APIS)
async def test_text_streams_in_pieces(api: str, server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(
        Step(
            match=Match(api=api, system_contains="You are a test."),
            reply=Reply(text="Hello from the fake model", chunk_size=4, usage={"input_tokens": 12, "output_tokens": 7}),
        )
    )
    model = _model(api, server)
    events = await _collect(pool, model, _request(model))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 5
    assert "".join(deltas) == "Hello from the fake model"
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.text() == "Hello from the fake model"
    assert done.response.stop_reason == "end_turn"
    assert done.response.usage.input_tokens == 12
    assert done.response.usage.output_tokens == 7
    server.assert_done()


@pytest.mark.parametrize("api", APIS)
async def test_tool_call_with_split_arguments(api: str, server: FakeLLMServer, pool: ProviderPool) -> None:
    args = {"path": "src/app/main.py", "offset": 10, "note": "unicode ✓ and \"quotes\""}
    server.add_steps(
        Step(
            match=Match(api=api, tools_include=["Read"]),
            reply=Reply(text="Let me look.", tool_calls=[ToolCall(name="Read", input=args)], args_chunk_size=5),
        )
    )
    model = _model(api, server)
    events = await _collect(pool, model, _request(model, tools=[READ_TOOL]))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    arg_deltas = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    assert [s.name for s in starts] == ["Read"]
    assert len(arg_deltas) > 3, "arguments should arrive split across chunks"
    response = events[-1].response  # type: ignore[union-attr]
    assert response.stop_reason == "tool_use"
    (call,) = response.tool_uses()
    assert call.input == args
    assert call.input_error is None
    assert call.id == starts[0].id
    assert response.text() == "Let me look."
    server.assert_done()


@pytest.mark.parametrize("api", APIS)
async def test_usage_includes_cache_tokens(api: str, server: FakeLLMServer, pool: ProviderPool) -> None:
    usage = {"input_tokens": 100, "output_tokens": 9, "cache_read_input_tokens": 40, "cache_creation_input_tokens": 0}
    server.add_steps(Step(match=Match(api=api), reply=Reply(text="ok", usage=usage)))
    model = _model(api, server)
    events = await _collect(pool, model, _request(model))
    got = events[-1].response.usage  # type: ignore[union-attr]
    assert got.cache_read_tokens == 40
    assert got.output_tokens == 9
    assert got.input_tokens + got.cache_read_tokens in (100, 140)  # OpenAI counts cached inside prompt_tokens
    server.assert_done()


@pytest.mark.parametrize("api", APIS)
async def test_rate_limit_then_success(api: str, server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(
        Step(match=Match(api=api), fault=Fault(kind="http", status=429)),
        Step(match=Match(api=api), reply=Reply(text="after retry")),
    )
    model = _model(api, server)
    events = await _collect(pool, model, _request(model))
    retries = [e for e in events if isinstance(e, StreamRetry)]
    assert len(retries) == 1
    assert retries[0].error.status == 429
    assert events[-1].response.text() == "after retry"  # type: ignore[union-attr]
    assert len(server.requests) == 2
    server.assert_done()


@pytest.mark.parametrize("api", APIS)
async def test_overloaded_inside_stream_then_success(api: str, server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(
        Step(match=Match(api=api), reply=Reply(text="partial answer", chunk_size=3),
             fault=Fault(kind="stream_error", after_events=3)),
        Step(match=Match(api=api), reply=Reply(text="whole answer")),
    )
    model = _model(api, server)
    events = await _collect(pool, model, _request(model))
    (retry,) = [e for e in events if isinstance(e, StreamRetry)]
    assert retry.error.retryable
    if api == "anthropic":  # OpenAI reports an in-stream failure as a server error
        assert "overload" in str(retry.error).lower()
    assert events[-1].response.text() == "whole answer"  # type: ignore[union-attr]
    server.assert_done()


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("abort", [False, True])
async def test_cut_stream_is_a_clear_error(api: str, abort: bool, server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(
        Step(match=Match(api=api), reply=Reply(text="this answer never ends properly", chunk_size=3),
             fault=Fault(kind="cut", after_events=4, abort=abort)),
    )
    model = _model(api, server)
    with pytest.raises(StreamInterruptedError) as info:
        await _collect(pool, model, _request(model))
    message = str(info.value)
    assert message.startswith(api)
    assert "stream" in message
    assert "\n" not in message
    server.assert_done()


@pytest.mark.parametrize("api", APIS)
async def test_server_errors_retry_then_give_up(api: str, server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(Step(match=Match(api=api), fault=Fault(kind="http", status=500), times=3))
    model = _model(api, server)
    with pytest.raises(ServerError) as info:
        await _collect(pool, model, _request(model))
    assert info.value.status == 500
    assert len(server.requests) == 3  # first try + max_retries=2
    server.assert_done()


@pytest.mark.parametrize("api", APIS)
async def test_auth_error_is_not_retried(api: str, server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(Step(match=Match(api=api), fault=Fault(kind="http", status=401)))
    model = _model(api, server)
    with pytest.raises(AuthenticationError) as info:
        await _collect(pool, model, _request(model))
    assert "401" in str(info.value)
    assert "sk-" not in str(info.value)
    server.assert_done()


async def test_unreachable_server_is_a_connection_error(pool: ProviderPool) -> None:
    model = ResolvedModel("main", "anthropic", "m", "http://127.0.0.1:9", "k", 64)
    pool.policy = RetryPolicy(max_retries=0)
    with pytest.raises(ProviderError) as info:
        await _collect(pool, model, ModelRequest(model="m", system="", messages=[Message.user("x")]))
    assert "cannot reach" in str(info.value)


async def test_openai_sloppy_tool_deltas(server: FakeLLMServer, pool: ProviderPool) -> None:
    args = {"pattern": "def main", "include": "*.py"}
    server.add_steps(
        Step(
            match=Match(api="openai"),
            reply=Reply(tool_calls=[ToolCall(name="Grep", input=args), ToolCall(name="Read", input={"path": "a"})],
                        sloppy_tool_deltas=True, args_chunk_size=4),
        )
    )
    model = _model("openai", server)
    events = await _collect(pool, model, _request(model, tools=[READ_TOOL]))
    calls = events[-1].response.tool_uses()  # type: ignore[union-attr]
    assert [(c.name, c.input) for c in calls] == [("Grep", args), ("Read", {"path": "a"})]
    server.assert_done()


@pytest.mark.parametrize("api", APIS)
async def test_history_with_tool_results_round_trips(api: str, server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(Step(match=Match(api=api, turn=1, last_user_contains="file body"), reply=Reply(text="done")))
    model = _model(api, server)
    history = [
        Message.user("read a.py"),
        Message(role="assistant", content=[TextBlock(text="Reading."),
                                           ToolUseBlock(id="call_1", name="Read", input={"path": "a.py"})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="call_1", content="file body")]),
    ]
    request = ModelRequest(model=model.model, system="sys", messages=history, tools=[READ_TOOL])
    events = await _collect(pool, model, request)
    assert events[-1].response.text() == "done"  # type: ignore[union-attr]
    body = server.requests[0].body
    if api == "anthropic":
        assert body["messages"][1]["content"][1] == {"type": "tool_use", "id": "call_1", "name": "Read",
                                                       "input": {"path": "a.py"}}
        assert body["messages"][2]["content"][0]["tool_use_id"] == "call_1"
    else:
        assert body["messages"][0] == {"role": "system", "content": "sys"}
        assert body["messages"][2]["tool_calls"][0]["function"]["name"] == "Read"
        assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "file body"}
    server.assert_done()


async def test_pool_shares_one_client_per_endpoint_and_key(server: FakeLLMServer, pool: ProviderPool) -> None:
    a = _model("anthropic", server)
    same = ResolvedModel("light", "anthropic", "other-model", a.base_url, a.api_key, 10)
    other_key = ResolvedModel("main", "anthropic", "m", a.base_url, "sk-ant-other", 10)
    assert pool.get(a) is pool.get(same)
    assert pool.get(a) is not pool.get(other_key)
    assert pool.get(a) is not pool.get(_model("openai", server))
