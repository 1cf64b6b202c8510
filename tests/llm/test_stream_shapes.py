"""Real stream shapes and error bodies, replayed byte for byte through the real SDKs over HTTP.

Each payload follows a public API's documented or commonly recorded behaviour (named per test).
"""

from __future__ import annotations

import json

import pytest

from agentcli.llm.base import (
    BadRequestError,
    Message,
    ModelRequest,
    ProviderError,
    RateLimitError,
    ResponseDone,
    RetryPolicy,
    StreamEvent,
    StreamInterruptedError,
    StreamRetry,
    TextDelta,
)
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.testing.fake_llm import FakeLLMServer, Raw, Step
from tests.llm.replay import openai_chunk


@pytest.fixture
def retry_policy() -> RetryPolicy:
    return RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.001)


def _compatible(srv: FakeLLMServer) -> ResolvedModel:
    return ResolvedModel("main", "openai-compatible", "replay-model", srv.base_url + "/v1", "sk-test", 512)


async def _turn(pool: ProviderPool, model: ResolvedModel) -> tuple[list[StreamEvent], ResponseDone]:
    request = ModelRequest(model=model.model, system="s", messages=[Message.user("hi")])
    events = [event async for event in pool.get(model).stream(request)]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    return events, done


def _tool_delta(index: int, call_id: str | None, name: str | None, args: str) -> dict[str, object]:
    call: dict[str, object] = {"index": index, "function": {"arguments": args}}
    if call_id is not None:
        call.update(id=call_id, type="function")
        call["function"] = {"name": name, "arguments": args}
    return {"tool_calls": [call]}


async def test_mistral_content_as_typed_parts_is_text_and_thinking_stays_out(
    server: FakeLLMServer, pool: ProviderPool
) -> None:
    # Mistral's reasoning models (magistral) stream delta.content as a list of typed chunks.
    server.add_steps(Step(raw=Raw(frames=[
        openai_chunk({"role": "assistant", "content": ""}),
        openai_chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Two plus two"}]}]}),
        openai_chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": " is four."}]}]}),
        openai_chunk({"content": [{"type": "text", "text": "The answer "}]}),
        openai_chunk({"content": "is 4."}),
        openai_chunk({"content": ""}, "stop",
                     usage={"prompt_tokens": 10, "completion_tokens": 30, "total_tokens": 40}),
        "[DONE]",
    ])))
    events, done = await _turn(pool, _compatible(server))
    assert done.response.text() == "The answer is 4."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The answer is 4."
    assert done.response.stop_reason == "end_turn" and done.response.usage.output_tokens == 30
    assert done.response.thinking() == "Two plus two is four."  # kept, apart from the answer


async def test_done_without_finish_reason_completes_a_whole_tool_call(
    server: FakeLLMServer, pool: ProviderPool
) -> None:
    # OpenRouter routing to some hosts: the tool call arrives whole, then [DONE], never a finish_reason.
    server.add_steps(Step(raw=Raw(frames=[
        openai_chunk({"role": "assistant", "content": None}),
        openai_chunk(_tool_delta(0, "call_abc", "Read", "")),
        openai_chunk(_tool_delta(0, None, None, '{"file_path": ')),
        openai_chunk(_tool_delta(0, None, None, '"a.txt"}')),
        openai_chunk(None, usage={"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}),
        "[DONE]",
    ])))
    _, done = await _turn(pool, _compatible(server))
    (call,) = done.response.tool_uses()
    assert (call.id, call.name, call.input, call.input_error) == ("call_abc", "Read", {"file_path": "a.txt"}, None)
    assert done.response.stop_reason == "tool_use"


async def test_done_without_finish_reason_after_text_is_complete(server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(Step(raw=Raw(frames=[openai_chunk({"role": "assistant", "content": "All done."}), "[DONE]"])))
    _, done = await _turn(pool, _compatible(server))
    assert done.response.text() == "All done." and done.response.stop_reason == "end_turn"


async def test_a_stream_cut_mid_tool_json_without_done_is_still_interrupted(
    server: FakeLLMServer, pool: ProviderPool
) -> None:
    cut = Raw(frames=[openai_chunk(_tool_delta(0, "call_x", "Read", '{"file_pa'))])
    server.add_steps(Step(raw=cut, times=3))
    model = _compatible(server)
    with pytest.raises(StreamInterruptedError):
        await _turn(pool, model)


async def test_text_cut_without_done_or_finish_reason_is_interrupted_not_complete(
    server: FakeLLMServer, pool: ProviderPool
) -> None:
    # The same text as the [DONE] case above, but the connection ends cleanly before [DONE]:
    # only the SSE stream itself tells the two apart.
    cut = Raw(frames=[openai_chunk({"role": "assistant", "content": "All done."})])
    server.add_steps(Step(raw=cut, times=3))
    with pytest.raises(StreamInterruptedError):
        await _turn(pool, _compatible(server))


def _openrouter_error(code: int, message: str) -> Raw:
    # OpenRouter: an error after the stream started arrives as a chunk with a numeric `code`
    # and finish_reason "error", inside the 200 response.
    return Raw(frames=[
        openai_chunk({"role": "assistant", "content": ""}),
        {**openai_chunk({"content": ""}, "error"), "error": {"code": code, "message": message}},
    ])


async def test_an_in_stream_4xx_code_is_not_retried_and_is_one_line(
    server: FakeLLMServer, pool: ProviderPool
) -> None:
    server.add_steps(Step(raw=_openrouter_error(400, "Input validation error:\n`max_tokens` too large"), times=None))
    with pytest.raises(BadRequestError) as caught:
        await _turn(pool, _compatible(server))
    assert len(server.requests) == 1  # one billed request, not five
    line = str(caught.value)
    assert "\n" not in line and "max_tokens" in line and "400" in line


@pytest.mark.parametrize("code", [408, 409, 429, 502])
async def test_in_stream_codes_worth_retrying_are_retried(
    code: int, server: FakeLLMServer, pool: ProviderPool
) -> None:
    server.add_steps(
        Step(raw=_openrouter_error(code, "try again")),
        Step(raw=Raw(frames=[openai_chunk({"content": "ok"}, "stop"), "[DONE]"])),
    )
    events, done = await _turn(pool, _compatible(server))
    assert [type(e) for e in events if isinstance(e, StreamRetry)] == [StreamRetry]
    assert done.response.text() == "ok"


async def test_a_proxied_429_shows_the_upstream_message(server: FakeLLMServer, pool: ProviderPool) -> None:
    # OpenRouter's 429 says only "Provider returned error"; the upstream's words are in metadata.raw.
    upstream = "google/gemini-2.5-pro is temporarily rate-limited upstream. Please retry shortly."
    body = {"error": {"message": "Provider returned error", "code": 429,
                      "metadata": {"raw": upstream, "provider_name": "Google AI Studio"}},
            "user_id": "user_2abc"}
    server.add_steps(Step(raw=Raw(status=429, body=json.dumps(body), headers={"retry-after": "0"}), times=None))
    no_retry = ProviderPool(RetryPolicy(max_retries=0))
    try:
        with pytest.raises(RateLimitError) as caught:
            await _turn(no_retry, _compatible(server))
    finally:
        await no_retry.aclose()
    assert str(caught.value) == (
        f"openai-compatible: Provider returned error: Google AI Studio: {upstream} (HTTP 429)"
    )


async def test_a_proxied_error_with_a_json_upstream_body_shows_its_message(
    server: FakeLLMServer, pool: ProviderPool
) -> None:
    raw = json.dumps({"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).",
                                "status": "RESOURCE_EXHAUSTED"}})
    body = {"error": {"message": "Provider returned error", "code": 429, "metadata": {"raw": raw}}}
    server.add_steps(Step(raw=Raw(status=429, body=json.dumps(body)), times=None))
    no_retry = ProviderPool(RetryPolicy(max_retries=0))
    try:
        with pytest.raises(ProviderError) as caught:
            await _turn(no_retry, _compatible(server))
    finally:
        await no_retry.aclose()
    assert "Resource has been exhausted (e.g. check quota)." in str(caught.value)


async def test_groq_usage_in_x_groq_is_read(server: FakeLLMServer, pool: ProviderPool) -> None:
    # Groq puts usage in x_groq.usage on the last content chunk, not in a top-level usage chunk.
    server.add_steps(Step(raw=Raw(frames=[
        openai_chunk({"role": "assistant", "content": ""}, x_groq={"id": "req_01abc"}),
        openai_chunk({"content": "Hi there."}),
        openai_chunk({}, "stop", x_groq={"id": "req_01abc", "usage": {
            "queue_time": 0.02, "prompt_tokens": 42, "prompt_time": 0.003, "completion_tokens": 7,
            "completion_time": 0.01, "total_tokens": 49, "total_time": 0.013}}),
        "[DONE]",
    ])))
    _, done = await _turn(pool, _compatible(server))
    usage = done.response.usage
    assert (usage.input_tokens, usage.output_tokens) == (42, 7)


async def test_openrouter_cache_write_tokens_are_read(server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(Step(raw=Raw(frames=[
        openai_chunk({"content": "cached"}, "stop"),
        openai_chunk(None, usage={"prompt_tokens": 1000, "completion_tokens": 5, "total_tokens": 1005,
                                  "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300}}),
        "[DONE]",
    ])))
    _, done = await _turn(pool, _compatible(server))
    u = done.response.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens) == (100, 600, 300, 5)


def _groq_tool_use_failed() -> dict[str, object]:
    return {"error": {
        "message": "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.",
        "type": "invalid_request_error", "code": "tool_use_failed",
        "failed_generation": '<function=Read{"file_path": "a.txt"</function>'}}


async def test_groq_tool_use_failed_in_stream_becomes_a_tool_error_for_the_model(
    server: FakeLLMServer, pool: ProviderPool
) -> None:
    server.add_steps(Step(raw=Raw(frames=[openai_chunk({"role": "assistant", "content": ""}),
                                          _groq_tool_use_failed()])))
    _, done = await _turn(pool, _compatible(server))
    (call,) = done.response.tool_uses()
    assert call.name == "Read" and call.input == {}
    assert call.input_error is not None and "Failed to call a function" in call.input_error
    assert '<function=Read{"file_path": "a.txt"</function>' in call.input_error
    assert done.response.stop_reason == "tool_use" and len(server.requests) == 1


async def test_groq_tool_use_failed_as_http_400_too(server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(Step(raw=Raw(status=400, body=json.dumps(_groq_tool_use_failed()))))
    _, done = await _turn(pool, _compatible(server))
    (call,) = done.response.tool_uses()
    assert call.input_error is not None and "Call the tool again" in call.input_error


async def test_openai_length_finish_is_a_max_tokens_stop(server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(Step(raw=Raw(frames=[openai_chunk({"content": "The first half of"}, "length"), "[DONE]"])))
    _, done = await _turn(pool, _compatible(server))
    assert done.response.stop_reason == "max_tokens"


async def test_a_raw_body_is_sent_byte_for_byte(server: FakeLLMServer) -> None:
    import aiohttp

    body = '{"error": {"message": "odd\\u00e9 spacing" ,  "code": 400}}'
    server.add_steps(Step(raw=Raw(status=400, body=body)))
    async with aiohttp.ClientSession() as client, client.post(
        server.base_url + "/v1/chat/completions", json={"model": "m", "messages": []}
    ) as got:
        assert got.status == 400 and await got.read() == body.encode()


async def test_a_whole_tool_call_in_one_chunk_with_stop(server: FakeLLMServer, pool: ProviderPool) -> None:
    # Ollama's OpenAI-compatible endpoint sends each tool call whole in one chunk, then finish_reason "stop".
    call = {"index": 0, "id": "call_k2v1", "type": "function",
            "function": {"name": "Grep", "arguments": '{"pattern":"def main"}'}}
    server.add_steps(Step(raw=Raw(frames=[
        openai_chunk({"role": "assistant", "content": "", "tool_calls": [call]}),
        openai_chunk({"role": "assistant", "content": ""}, "stop"),
        "[DONE]",
    ])))
    _, done = await _turn(pool, _compatible(server))
    (got,) = done.response.tool_uses()
    assert (got.id, got.name, got.input) == ("call_k2v1", "Grep", {"pattern": "def main"})
    assert done.response.stop_reason == "tool_use"


async def test_a_second_choice_never_mixes_into_the_first(server: FakeLLMServer, pool: ProviderPool) -> None:
    second = openai_chunk({"content": "OTHER"})
    second["choices"][0]["index"] = 1  # type: ignore[index]
    server.add_steps(Step(raw=Raw(frames=[openai_chunk({"content": "mine"}), second,
                                          openai_chunk({}, "stop"), "[DONE]"])))
    _, done = await _turn(pool, _compatible(server))
    assert done.response.text() == "mine"


async def test_litellm_top_level_cache_creation_tokens_are_read(server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(Step(raw=Raw(frames=[
        openai_chunk({"content": "hi"}, "stop"),
        openai_chunk(None, usage={"prompt_tokens": 500, "completion_tokens": 2, "total_tokens": 502,
                                  "cache_creation_input_tokens": 400, "cache_read_input_tokens": 0,
                                  "prompt_tokens_details": {"cached_tokens": 0}}),
        "[DONE]",
    ])))
    _, done = await _turn(pool, _compatible(server))
    u = done.response.usage
    assert (u.input_tokens, u.cache_write_tokens, u.cache_read_tokens) == (100, 400, 0)


async def test_deepseek_cache_hit_tokens_are_read(server: FakeLLMServer, pool: ProviderPool) -> None:
    server.add_steps(Step(raw=Raw(frames=[
        openai_chunk({"content": "hi"}, "stop",
                     usage={"prompt_tokens": 300, "completion_tokens": 2, "total_tokens": 302,
                            "prompt_cache_hit_tokens": 256, "prompt_cache_miss_tokens": 44}),
        "[DONE]",
    ])))
    _, done = await _turn(pool, _compatible(server))
    u = done.response.usage
    assert (u.input_tokens, u.cache_read_tokens) == (44, 256)
