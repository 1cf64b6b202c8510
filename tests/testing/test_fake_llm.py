"""The fake LLM server, driven by the real anthropic and openai SDKs over 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from pydantic import ValidationError

from agentcli.testing.fake_llm import (
    FakeLLMServer,
    Fault,
    Match,
    Reply,
    Script,
    Step,
    ToolCall,
    is_loopback,
)
from agentcli.testing.fake_llm_match import RequestView, mismatch

MakeServer = Callable[..., FakeLLMServer]
USER_HI: list[Any] = [{"role": "user", "content": "hi"}]
READ_TOOL: dict[str, Any] = {"name": "Read", "description": "read", "input_schema": {"type": "object"}}
OPENAI_READ_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "Read", "description": "read", "parameters": {"type": "object"}},
}


@pytest.fixture(autouse=True)
def _isolated_sdk_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the SDKs away from real profiles, keys and endpoints."""
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "anthropic-config"))
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def make_server() -> Iterator[MakeServer]:
    """Start servers with the given steps; all are stopped after the test."""
    servers: list[FakeLLMServer] = []

    def make(*steps: Step, **kwargs: Any) -> FakeLLMServer:
        server = FakeLLMServer(Script(steps=list(steps)), **kwargs).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
async def clients(make_server: MakeServer) -> AsyncIterator[Callable[..., Any]]:
    """Factory of SDK clients bound to a server; closed after the test."""
    made: list[anthropic.AsyncAnthropic | openai.AsyncOpenAI] = []

    def client(server: FakeLLMServer, api: str, **kwargs: Any) -> Any:
        c: anthropic.AsyncAnthropic | openai.AsyncOpenAI
        if api == "anthropic":
            c = anthropic.AsyncAnthropic(api_key="test-key", base_url=server.base_url, **kwargs)
        else:
            c = openai.AsyncOpenAI(api_key="test-key", base_url=server.base_url + "/v1", **kwargs)
        made.append(c)
        return c

    yield client
    for c in made:
        await c.close()


# ---------------------------------------------------------------- Anthropic


async def test_anthropic_stream_text_and_split_tool_args(make_server: MakeServer, clients: Any) -> None:
    server = make_server(
        Step(
            match=Match(api="anthropic", system_contains="explore", tools_include=["Read"], turn=0),
            reply=Reply(
                text="hello world",
                chunk_size=4,
                tool_calls=[ToolCall(name="Read", input={"path": "src/agentcli/a_long_name.py", "limit": 200})],
                usage={"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 3},
            ),
        )
    )
    client = clients(server, "anthropic")
    texts: list[str] = []
    json_parts: list[str] = []
    async with client.messages.stream(
        model="claude-test", max_tokens=100, system="You explore code.", messages=USER_HI, tools=[READ_TOOL]
    ) as stream:
        async for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                texts.append(event.delta.text)
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                json_parts.append(event.delta.partial_json)
        message = await stream.get_final_message()
    assert texts == ["hell", "o wo", "rld"]
    assert len(json_parts) > 3
    assert message.stop_reason == "tool_use"
    assert message.content[0].type == "text" and message.content[0].text == "hello world"
    tool = message.content[1]
    assert tool.type == "tool_use" and tool.name == "Read" and tool.id.startswith("toolu_fake_")
    assert tool.input == {"path": "src/agentcli/a_long_name.py", "limit": 200}
    assert (message.usage.input_tokens, message.usage.output_tokens) == (10, 5)
    assert message.usage.cache_read_input_tokens == 3
    server.assert_done()
    [req] = server.wait_for_finished(1)
    assert req.api == "anthropic" and req.stream and req.step_index == 0 and req.outcome == "complete"
    assert req.body["system"] == "You explore code."


async def test_anthropic_raw_stream_event_order(make_server: MakeServer, clients: Any) -> None:
    server = make_server(Step(reply=Reply(text="ok", tool_calls=[ToolCall(name="Read", input={"p": 1}, id="toolu_x")])))
    stream = await clients(server, "anthropic").messages.create(model="m", max_tokens=10, messages=USER_HI, stream=True)
    events = [event async for event in stream]
    assert [e.type for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[4].content_block.id == "toolu_x"
    assert events[-2].usage.output_tokens > 0  # default usage is never zero
    server.assert_done()


async def test_anthropic_non_streaming(make_server: MakeServer, clients: Any) -> None:
    server = make_server(Step(reply=Reply(text="plain", tool_calls=[ToolCall(name="Grep", input={"q": "x"})])))
    message = await clients(server, "anthropic").messages.create(model="m", max_tokens=10, messages=USER_HI)
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"q": "x"}
    assert message.stop_reason == "tool_use"
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    server.assert_done()


def test_sync_client_and_redacted_headers(make_server: MakeServer) -> None:
    server = make_server(Step(reply=Reply(text="sync works")))
    with anthropic.Anthropic(api_key="sk-secret-123", base_url=server.base_url) as client:
        message = client.messages.create(model="m", max_tokens=10, messages=USER_HI)
    assert message.content[0].type == "text" and message.content[0].text == "sync works"
    [req] = server.wait_for_requests(1)
    assert "sk-secret-123" not in json.dumps(req.headers)
    assert req.headers.get("authorization", req.headers.get("x-api-key")) == "***"
    server.assert_done()


# ---------------------------------------------------------------- OpenAI


async def test_openai_stream_usage_and_tool_call_deltas(make_server: MakeServer, clients: Any) -> None:
    server = make_server(
        Step(
            match=Match(api="openai", system_contains="explore", tools_include=["Read"], turn=0),
            reply=Reply(
                text="hello world",
                chunk_size=4,
                tool_calls=[ToolCall(name="Read", input={"path": "a_rather_long_path.py"}), ToolCall(name="Read")],
                usage={"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 3},
            ),
        )
    )
    stream = await clients(server, "openai").chat.completions.create(
        model="gpt-test",
        messages=[{"role": "system", "content": "You explore."}, *USER_HI],
        tools=[OPENAI_READ_TOOL],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, finish, usage = "", None, None
    calls: dict[int, dict[str, str]] = {}
    arg_deltas = 0
    async for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for tc in choice.delta.tool_calls or []:
                call = calls.setdefault(tc.index, {"id": "", "name": "", "args": ""})
                call["id"] += tc.id or ""
                if tc.function is not None:
                    call["name"] += tc.function.name or ""
                    call["args"] += tc.function.arguments or ""
                    arg_deltas += bool(tc.function.arguments)
    assert text == "hello world"
    assert finish == "tool_calls"
    assert arg_deltas >= 4
    assert json.loads(calls[0]["args"]) == {"path": "a_rather_long_path.py"}
    assert json.loads(calls[1]["args"]) == {}
    assert calls[0]["id"].startswith("call_fake_") and calls[0]["id"] != calls[1]["id"]
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (13, 5)
    assert usage.prompt_tokens_details is not None and usage.prompt_tokens_details.cached_tokens == 3
    server.assert_done()


async def test_openai_sloppy_tool_deltas_omit_index(make_server: MakeServer, clients: Any) -> None:
    server = make_server(
        Step(reply=Reply(tool_calls=[ToolCall(name="Read", input={"path": "x.py"})], sloppy_tool_deltas=True))
    )
    stream = await clients(server, "openai").chat.completions.create(model="m", messages=USER_HI, stream=True)
    deltas = [tc async for chunk in stream for ch in chunk.choices for tc in ch.delta.tool_calls or []]
    assert deltas[0].id and deltas[0].type is None and deltas[0].function.name == "Read"
    assert all(d.id is None and getattr(d, "index", None) is None for d in deltas[1:])
    assert json.loads("".join(d.function.arguments or "" for d in deltas)) == {"path": "x.py"}
    server.assert_done()


async def test_openai_non_streaming(make_server: MakeServer, clients: Any) -> None:
    server = make_server(Step(reply=Reply(text="plain", tool_calls=[ToolCall(name="Read", input={"p": "a"})])))
    completion = await clients(server, "openai").chat.completions.create(model="m", messages=USER_HI)
    choice = completion.choices[0]
    assert choice.message.content == "plain" and choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls[0].function.name == "Read"
    assert json.loads(choice.message.tool_calls[0].function.arguments) == {"p": "a"}
    assert completion.usage is not None and completion.usage.total_tokens > 0
    server.assert_done()


# ---------------------------------------------------------------- faults


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_http_429_then_success_via_sdk_retry(make_server: MakeServer, clients: Any, api: str) -> None:
    server = make_server(
        Step(match=Match(api=api), fault=Fault(kind="http", status=429)),
        Step(match=Match(api=api), reply=Reply(text="after retry")),
    )
    client = clients(server, api, max_retries=1)
    started = time.monotonic()
    if api == "anthropic":
        message = await client.messages.create(model="m", max_tokens=10, messages=USER_HI)
        assert message.content[0].text == "after retry"
    else:
        completion = await client.chat.completions.create(model="m", messages=USER_HI)
        assert completion.choices[0].message.content == "after retry"
    assert time.monotonic() - started < 0.4  # retry-after-ms: 1 beats the SDK's 0.5 s backoff
    first, second = await server.wait_for_finished_async(2)
    assert (first.status, second.status) == (429, 200)
    assert second.headers["x-stainless-retry-count"] == "1"
    server.assert_done()


async def test_http_error_bodies_have_each_apis_shape(make_server: MakeServer, clients: Any) -> None:
    server = make_server(
        Step(match=Match(api="anthropic"), fault=Fault(kind="http", status=529, should_retry=False)),
        Step(match=Match(api="openai"), fault=Fault(kind="http", status=401, message="bad key")),
    )
    with pytest.raises(anthropic.OverloadedError) as a_err:
        await clients(server, "anthropic").messages.create(model="m", max_tokens=10, messages=USER_HI)
    body: Any = a_err.value.body
    assert body["type"] == "error" and body["error"]["type"] == "overloaded_error"
    with pytest.raises(openai.AuthenticationError) as o_err:
        await clients(server, "openai").chat.completions.create(model="m", messages=USER_HI)
    assert o_err.value.code == "invalid_api_key" and "bad key" in str(o_err.value)
    server.assert_done()


async def test_overloaded_inside_stream_raises_sdk_error(make_server: MakeServer, clients: Any) -> None:
    server = make_server(
        Step(
            match=Match(api="anthropic"),
            reply=Reply(text="partial text"),
            fault=Fault(kind="stream_error", after_events=4),
        ),
        Step(
            match=Match(api="openai"),
            reply=Reply(text="partial text"),
            fault=Fault(kind="stream_error", after_events=2),
        ),
    )
    seen: list[str] = []
    stream = await clients(server, "anthropic").messages.create(model="m", max_tokens=10, messages=USER_HI, stream=True)
    with pytest.raises(anthropic.APIStatusError) as a_err:
        async for event in stream:
            seen.append(event.type)
    assert seen == ["message_start", "content_block_start", "content_block_delta"]
    assert a_err.value.status_code == 200  # the SDK won't retry this one: the provider layer must
    assert a_err.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    o_stream = await clients(server, "openai").chat.completions.create(model="m", messages=USER_HI, stream=True)
    with pytest.raises(openai.APIError) as o_err:
        async for _ in o_stream:
            pass
    assert not isinstance(o_err.value, openai.APIStatusError)
    assert o_err.value.body["type"] == "server_error"  # type: ignore[index]
    assert [r.outcome for r in await server.wait_for_finished_async(2)] == ["stream_error", "stream_error"]
    server.assert_done()


async def test_cut_stream_clean_close_ends_quietly(make_server: MakeServer, clients: Any) -> None:
    """A body closed cleanly without message_stop / [DONE] does not raise in either SDK."""
    server = make_server(
        Step(
            match=Match(api="anthropic"),
            reply=Reply(text="hello world", chunk_size=2),
            fault=Fault(kind="cut", after_events=4),
        ),
        Step(
            match=Match(api="openai"),
            reply=Reply(text="hello world", chunk_size=2),
            fault=Fault(kind="cut", after_events=3),
        ),
    )
    async with clients(server, "anthropic").messages.stream(model="m", max_tokens=10, messages=USER_HI) as stream:
        message = await stream.get_final_message()
    assert message.stop_reason is None  # the only sign of the cut
    assert message.content[0].type == "text" and message.content[0].text == "he"
    o_stream = await clients(server, "openai").chat.completions.create(model="m", messages=USER_HI, stream=True)
    chunks = [c async for c in o_stream]
    assert [c.choices[0].finish_reason for c in chunks] == [None, None, None]
    assert [r.outcome for r in await server.wait_for_finished_async(2)] == ["cut", "cut"]
    server.assert_done()


async def test_cut_stream_transport_abort_raises(make_server: MakeServer, clients: Any) -> None:
    server = make_server(
        Step(
            match=Match(api="anthropic"), reply=Reply(text="abcdef", chunk_size=1), fault=Fault(kind="cut", abort=True)
        ),
        Step(match=Match(api="openai"), reply=Reply(text="abcdef", chunk_size=1), fault=Fault(kind="cut", abort=True)),
    )
    stream = await clients(server, "anthropic").messages.create(model="m", max_tokens=10, messages=USER_HI, stream=True)
    with pytest.raises(httpx2.RemoteProtocolError):  # raw transport error: the anthropic SDK does not wrap it
        async for _ in stream:
            pass
    o_stream = await clients(server, "openai").chat.completions.create(model="m", messages=USER_HI, stream=True)
    with pytest.raises(openai.APIConnectionError):
        async for _ in o_stream:
            pass
    assert [r.outcome for r in await server.wait_for_finished_async(2)] == ["aborted", "aborted"]
    server.assert_done()


async def test_stall_then_continue(make_server: MakeServer, clients: Any) -> None:
    server = make_server(
        Step(reply=Reply(text="slow but complete"), fault=Fault(kind="stall", after_events=3, seconds=0.3))
    )
    started = time.monotonic()
    async with clients(server, "anthropic").messages.stream(model="m", max_tokens=10, messages=USER_HI) as stream:
        text = await stream.get_final_text()
    assert text == "slow but complete"
    assert time.monotonic() - started >= 0.3
    server.assert_done()


async def test_stall_past_client_read_timeout(make_server: MakeServer, clients: Any) -> None:
    server = make_server(Step(reply=Reply(text="never seen"), fault=Fault(kind="stall", after_events=1, seconds=0.6)))
    client = clients(server, "openai", max_retries=0, timeout=httpx2.Timeout(5.0, read=0.15))
    stream = await client.chat.completions.create(model="m", messages=USER_HI, stream=True)
    with pytest.raises(openai.APITimeoutError):
        async for _ in stream:
            pass
    [req] = await server.wait_for_finished_async(1)
    assert req.outcome == "client_gone"
    server.assert_done()


# ---------------------------------------------------------------- strictness and routing


async def test_unexpected_request_is_500_not_retried_and_listed(make_server: MakeServer, clients: Any) -> None:
    server = make_server(Step(match=Match(system_contains="reviewer"), reply=Reply(text="x")))
    with pytest.raises(anthropic.InternalServerError) as err:
        await clients(server, "anthropic").messages.create(
            model="m", max_tokens=10, system="explorer", messages=USER_HI
        )
    message = err.value.body["error"]["message"]  # type: ignore[index]
    assert message.startswith("fake_llm: unexpected request")
    assert "system prompt lacks 'reviewer'" in message
    assert len(server.requests) == 1  # x-should-retry: false stops the SDK's own retries
    with pytest.raises(AssertionError) as done:
        server.assert_done()
    assert "unexpected request #0" in str(done.value) and "step 0 unused" in str(done.value)


def test_unused_step_listed_and_strict_on_exit(make_server: MakeServer) -> None:
    server = make_server(Step(name="never", reply=Reply(text="x")), Step(times=None, optional=True))
    assert server.problems() == ["step 0 (never) unused: 0 of 1 uses, match {}"]
    with pytest.raises(AssertionError, match="step 0"), FakeLLMServer([Step()], strict_on_exit=True):
        pass
    with FakeLLMServer([Step()]):  # not strict: exit does not raise
        pass


async def test_routing_by_system_prompt_with_concurrent_requests(make_server: MakeServer, clients: Any) -> None:
    server = make_server(
        Step(match=Match(system_contains="explore"), reply=Reply(text="explored"), latency_ms=150),
        Step(match=Match(system_contains="review"), reply=Reply(text="reviewed")),
    )
    client = clients(server, "anthropic")

    async def ask(system: str) -> str:
        message = await client.messages.create(model="m", max_tokens=10, system=system, messages=USER_HI)
        return str(message.content[0].text)

    assert await asyncio.gather(ask("please review"), ask("please explore")) == ["reviewed", "explored"]
    server.assert_done()


async def test_in_flight_max_counts_parallel_requests(make_server: MakeServer, clients: Any) -> None:
    server = make_server(Step(times=5, reply=Reply(text="slow")), latency_ms=300)
    client = clients(server, "openai")
    replies = await asyncio.gather(*(client.chat.completions.create(model="m", messages=USER_HI) for _ in range(5)))
    assert [r.choices[0].message.content for r in replies] == ["slow"] * 5
    await server.wait_for_finished_async(5)
    assert server.in_flight_max == 5 and server.in_flight == 0
    server.assert_done()


async def test_fifty_concurrent_streams(make_server: MakeServer, clients: Any) -> None:
    text = "streaming under load " * 4
    server = make_server(Step(times=None, reply=Reply(text=text, chunk_size=5)), chunk_delay_ms=2)
    client = clients(server, "anthropic")

    async def one(i: int) -> str:
        async with client.messages.stream(model="m", max_tokens=10, messages=USER_HI) as stream:
            return await stream.get_final_text()

    assert await asyncio.gather(*(one(i) for i in range(50))) == [text] * 50
    assert server.in_flight_max > 10, server.in_flight_max
    print("in_flight_max", server.in_flight_max)
    assert all(r.outcome == "complete" for r in await server.wait_for_finished_async(50))
    server.assert_done()


async def test_add_steps_and_wait_helpers(make_server: MakeServer, clients: Any) -> None:
    server = make_server()
    server.add_steps(Step(reply=Reply(text="added")))
    client = clients(server, "openai")
    task = asyncio.create_task(client.chat.completions.create(model="m", messages=USER_HI))
    [req] = await server.wait_for_requests_async(1)
    assert req.step_index == 0
    assert (await task).choices[0].message.content == "added"
    with pytest.raises(TimeoutError):
        server.wait_for_requests(2, timeout=0.05)
    server.assert_done()


async def test_a_held_step_answers_once_the_test_releases_it(make_server: MakeServer, clients: Any) -> None:
    server = make_server(Step(match=Match(last_user_contains="first"), reply=Reply(text="held"), hold="gate"),
                         Step(match=Match(last_user_contains="second"), reply=Reply(text="held too"), hold="gate"),
                         Step(reply=Reply(text="free")))
    client = clients(server, "anthropic")

    async def ask(text: str) -> str:
        message = await client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": text}])
        return str(message.content[0].text)

    held = asyncio.create_task(ask("first"))
    await server.wait_for_requests_async(1)
    assert await ask("other") == "free"  # the server goes on serving meanwhile
    assert not held.done() and server.requests[0].finished_at is None
    server.release("gate")
    assert await held == "held"
    assert await ask("second") == "held too"  # released: a later request of the same hold is not held
    server.assert_done()


def _anthropic_view(**body: Any) -> RequestView:
    return RequestView.of("anthropic", {"model": "m", "messages": USER_HI, **body})


def test_match_predicates_on_anthropic_requests() -> None:
    messages = [
        {"role": "user", "content": "find auth"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Grep", "input": {"q": "auth"}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "auth.py:3"}]}
            ],
        },
    ]
    view = _anthropic_view(
        messages=messages, system=[{"type": "text", "text": "You are an explorer"}], tools=[READ_TOOL]
    )
    assert view.turn == 1 and view.tools == ("Read",)
    assert mismatch(Match(api="anthropic", system_contains="explorer", turn=1, no_tools=False), view) is None
    assert mismatch(Match(last_user_contains="auth.py:3", tools_exclude=["Bash"]), view) is None
    assert mismatch(Match(last_user_contains="find auth"), view) is not None
    assert mismatch(Match(any_message_contains="find auth"), view) is None
    assert mismatch(Match(any_message_contains='"q": "auth"'), view) is None
    assert "turn is 1, not 0" in (mismatch(Match(turn=0), view) or "")
    assert "expected none" in (mismatch(Match(no_tools=True), view) or "")
    assert "excluded" in (mismatch(Match(tools_exclude=["Read"]), view) or "")
    assert "not offered" in (mismatch(Match(tools_include=["Read", "Bash"]), view) or "")
    assert "model is 'm'" in (mismatch(Match(model="other"), view) or "")
    assert "api is anthropic" in (mismatch(Match(api="openai"), view) or "")


def test_match_predicates_on_openai_requests() -> None:
    body = {
        "model": "gpt",
        "messages": [
            {"role": "developer", "content": "You review code"},
            {"role": "user", "content": [{"type": "text", "text": "review a.py"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "print(1)"},
        ],
        "tools": [OPENAI_READ_TOOL],
    }
    view = RequestView.of("openai", body)
    assert (view.system, view.tools, view.turn) == ("You review code", ("Read",), 1)
    assert (
        mismatch(Match(api="openai", model="gpt", system_contains="review", last_user_contains="print(1)"), view)
        is None
    )
    assert mismatch(Match(no_tools=True), RequestView.of("openai", {"model": "gpt", "messages": USER_HI})) is None


# ---------------------------------------------------------------- script files and CLI


def test_script_load_yaml_json_and_typos(tmp_path: Path) -> None:
    yaml_file = tmp_path / "s.yaml"
    yaml_file.write_text(
        "steps:\n"
        "  - match: {api: anthropic, system_contains: explore}\n"
        "    reply:\n"
        "      text: hi\n"
        "      tool_calls: [{name: Read, input: {path: a.py}}]\n"
        "    fault: {kind: http, status: 429}\n"
        "    times: 2\n"
    )
    script = Script.load(yaml_file)
    assert script.steps[0].reply.tool_calls[0].input == {"path": "a.py"}
    assert script.steps[0].fault is not None and script.steps[0].fault.status == 429
    json_file = tmp_path / "s.json"
    json_file.write_text(json.dumps([{"reply": {"text": "bare list"}}]))
    assert Script.load(json_file).steps[0].reply.text == "bare list"
    (tmp_path / "typo.yaml").write_text("steps:\n  - reply: {txt: hi}\n")
    with pytest.raises(ValidationError, match="txt"):
        Script.load(tmp_path / "typo.yaml")


def test_refuses_non_loopback_host() -> None:
    with pytest.raises(ValueError, match="loopback"):
        FakeLLMServer([], host="0.0.0.0")


def _start_cli(tmp_path: Path, script: str) -> tuple[subprocess.Popen[str], str]:
    (tmp_path / "script.yaml").write_text(script)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentcli.testing.fake_llm",
            "--script",
            str(tmp_path / "script.yaml"),
            "--port",
            "0",
            "--log",
            str(tmp_path / "log.jsonl"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("fake_llm listening on http://127.0.0.1:"), first
    return proc, first.split()[-1]


def test_cli_serves_script_and_exits_0(tmp_path: Path) -> None:
    proc, url = _start_cli(tmp_path, "steps:\n  - match: {api: anthropic}\n    reply: {text: from cli}\n")
    try:
        with anthropic.Anthropic(api_key="test-key", base_url=url) as client:
            message = client.messages.create(model="m", max_tokens=10, messages=USER_HI)
        assert message.content[0].type == "text" and message.content[0].text == "from cli"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    [line] = (tmp_path / "log.jsonl").read_text().splitlines()
    logged = json.loads(line)
    assert logged["api"] == "anthropic" and logged["step_index"] == 0 and logged["headers"]["authorization"] == "***"


def test_cli_exits_1_on_unused_step(tmp_path: Path) -> None:
    proc, _ = _start_cli(tmp_path, "- reply: {text: never asked}\n")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 1
    assert "step 0 unused" in err
    assert (tmp_path / "log.jsonl").read_text() == ""


async def test_async_context_manager_and_stop_during_stall(clients: Any) -> None:
    steps = [Step(reply=Reply(text="x"), fault=Fault(kind="stall", after_events=1, seconds=30))]
    async with FakeLLMServer(steps) as server:
        client = clients(server, "anthropic", max_retries=0)
        stream = await client.messages.create(model="m", max_tokens=10, messages=USER_HI, stream=True)
        await server.wait_for_requests_async(1)
        started = time.monotonic()
    assert time.monotonic() - started < 2.0  # a stalled response does not hold up shutdown
    [req] = server.requests
    assert req.outcome == "cancelled" and req.finished_at is not None
    with pytest.raises((httpx2.TransportError, anthropic.APIConnectionError)):
        async for _ in stream:
            pass
    server.assert_done()


@pytest.mark.parametrize(
    ("host", "ok"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.2", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, ok: bool) -> None:
    assert is_loopback(host) is ok


def test_unknown_endpoint_is_404_and_listed(make_server: MakeServer) -> None:
    server = make_server()
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(server.base_url + "/v1/files", timeout=5)
    assert err.value.code == 404
    [req] = server.requests
    assert req.api == "unknown" and req.unexpected == ["no such endpoint GET /v1/files"]
    assert len(server.problems()) == 1


def test_a_window_ask_is_no_step_and_no_problem(make_server: MakeServer) -> None:
    """agentcli asks an OpenAI-compatible server for its window: a 404 (no `context_window` in the script),
    listed apart from the requests the script answers."""
    server = make_server()
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(server.base_url + "/v1/models", timeout=5)
    assert err.value.code == 404
    assert server.requests == [] and server.window_asks == ["GET /v1/models"] and server.problems() == []


def test_echo_last_user_and_tool_result_predicate() -> None:
    """A reply can quote the request's tool results; steps can tell prompts from tool answers."""
    import httpx2

    script = Script(steps=[
        Step(match=Match(last_user_is_tool_result=False), reply=Reply(text="prompt seen")),
        Step(match=Match(last_user_is_tool_result=True), reply=Reply(text="Found: ", echo_last_user=9)),
    ])
    with FakeLLMServer(script) as server:
        url = server.base_url + "/v1/messages"
        first = httpx2.post(url, json={"model": "m", "max_tokens": 5,
                                       "messages": [{"role": "user", "content": "hello"}]})
        second = httpx2.post(url, json={"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "LS", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py\nb.py\nc.py"}]},
        ]})
    assert first.json()["content"][0]["text"] == "prompt seen"
    assert second.json()["content"][0]["text"] == "Found: a.py\nb.py"
    server.assert_done()


# ---------------------------------------------------------------- raw replay


async def test_raw_frames_replay_byte_for_byte_through_the_sdk(make_server: MakeServer, clients: Any) -> None:
    from agentcli.testing.fake_llm import Raw, RawFrame

    frames: list[Any] = [
        RawFrame(event="message_start", data='{"type":"message_start","message":{"id":"msg_raw","type":"message",'
                 '"role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,'
                 '"usage":{"input_tokens":3,"output_tokens":1}}}'),
        RawFrame(event="content_block_start",
                 data={"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        RawFrame(event="content_block_delta",
                 data={"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "raw"}}),
        RawFrame(event="content_block_stop", data={"type": "content_block_stop", "index": 0}),
        RawFrame(event="message_delta", data={"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                              "usage": {"output_tokens": 2}}),
        RawFrame(event="message_stop", data={"type": "message_stop"}),
    ]
    server = make_server(Step(raw=Raw(frames=frames, headers={"x-replayed": "yes"})))
    stream = await clients(server, "anthropic").messages.create(model="m", max_tokens=10, messages=USER_HI, stream=True)
    events = [event async for event in stream]
    assert events[0].message.id == "msg_raw" and events[2].delta.text == "raw"
    assert RawFrame(event="x", data={"a": 1}).encode() == b'event: x\ndata: {"a":1}\n\n'
    assert RawFrame(data="[DONE]").encode() == b"data: [DONE]\n\n"
    server.assert_done()


async def test_raw_frames_can_be_cut_by_a_fault(make_server: MakeServer, clients: Any) -> None:
    from agentcli.testing.fake_llm import Raw

    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}]}
    server = make_server(Step(raw=Raw(frames=[chunk, chunk, chunk, "[DONE]"]), fault=Fault(kind="cut", after_events=2)))
    stream = await clients(server, "openai").chat.completions.create(model="m", messages=USER_HI, stream=True)
    assert len([c async for c in stream]) == 2
    server.wait_for_finished(1)
    assert server.requests[0].outcome == "cut"


def test_raw_needs_exactly_one_of_frames_or_body() -> None:
    from agentcli.testing.fake_llm import Raw

    with pytest.raises(ValidationError, match="exactly one"):
        Raw()
    with pytest.raises(ValidationError, match="exactly one"):
        Raw(frames=["[DONE]"], body="{}")
    script = Script.model_validate({"steps": [{"raw": {"status": 429, "body": '{"error": {"code": 429}}'}}]})
    assert script.steps[0].raw is not None and script.steps[0].raw.status == 429
