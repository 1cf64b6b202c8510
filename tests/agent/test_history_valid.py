"""History is always valid: a turn that produced nothing is recorded as such and the next prompt works.

Each test runs two prompts through AgentLoop and the real SDKs over HTTP, and checks the second
request body at the fake server against what the APIs reject.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.events import Event, NoticeEvent
from agentcli.llm.base import Message, TextBlock, ToolUseBlock
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Raw, Reply, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools
from tests.llm.replay import anthropic_frames, assert_valid_request, openai_chunk

APIS = ("anthropic", "openai")


def _loop(api: str, srv: FakeLLMServer, pool: ProviderPool, workspace: Path, events: list[Event]) -> AgentLoop:
    if api == "anthropic":
        model = ResolvedModel("main", "anthropic", "claude-sonnet-5-5", srv.base_url, "sk-ant-test", 1024)
    else:
        model = ResolvedModel("main", "openai", "gpt-fake", srv.base_url + "/v1", "sk-test", 1024)
    session = Session(system_prompt="You are the history test.", model=model, workspace=workspace)
    ctx = ToolContext(workspace=workspace, agent="main", session_id=session.id,
                      permissions=PermissionPolicy("auto"), file_locks=FileLocks())
    return AgentLoop(session, pool.get(model), build_tools(), ctx, events.append, max_turns=6)


def _stored_valid(loop: AgentLoop) -> None:
    for message in loop.session.messages:
        assert message.content, f"empty {message.role} message stored"
        for block in message.content:
            if isinstance(block, TextBlock):
                assert block.text.strip(), f"whitespace-only text stored: {message}"


def _notices(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, NoticeEvent)]


@pytest.mark.parametrize("api", APIS)
async def test_an_empty_reply_is_recorded_as_such_and_the_next_prompt_works(
    api: str, server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    server.add_steps(
        Step(match=Match(api=api, turn=0), reply=Reply(text="")),
        Step(match=Match(api=api, turn=1, last_user_contains="again"), reply=Reply(text="Here it is.")),
    )
    events: list[Event] = []
    loop = _loop(api, server, pool, tmp_path, events)
    first = await loop.run("answer me")
    assert first.status == "completed" and first.result == "(empty response: the model returned no text)"
    assert _notices(events) == ["the model returned an empty reply"]
    second = await loop.run("again please")
    assert second.result == "Here it is."
    server.assert_done()
    _stored_valid(loop)
    assert_valid_request(api, server.requests[1].body)
    assert "(empty response: the model returned no text)" in str(server.requests[1].body["messages"])


async def test_whitespace_only_text_from_claude_is_never_stored_or_sent(
    server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    # Claude often opens a tool-use turn with a "\n\n" text block.
    call = {"type": "tool_use", "id": "toolu_01A", "name": "Read", "json": '{"file_path": "a.txt"}'}
    first = anthropic_frames([{"type": "text", "text": "\n\n"}, call], "tool_use")
    server.add_steps(
        Step(match=Match(turn=0), raw=first),
        Step(match=Match(turn=1, last_user_contains="alpha"),
             raw=anthropic_frames([{"type": "text", "text": "\n\n"}], "end_turn")),
        Step(match=Match(turn=2, last_user_contains="next"), reply=Reply(text="Done.")),
    )
    events: list[Event] = []
    loop = _loop("anthropic", server, pool, tmp_path, events)
    await loop.run("read a.txt")
    assert loop.session.messages[1].content == [
        ToolUseBlock(id="toolu_01A", name="Read", input={"file_path": "a.txt"})]
    assert (await loop.run("next")).result == "Done."
    server.assert_done()
    _stored_valid(loop)
    for request in server.requests[1:]:
        assert_valid_request("anthropic", request.body)


def _refusal(api: str) -> Raw:
    if api == "anthropic":  # stop_reason "refusal" (Claude's streaming classifiers), here with no text at all
        return anthropic_frames([], "refusal")
    # OpenAI: the refusal text streams in delta.refusal, content stays null.
    return Raw(frames=[
        openai_chunk({"role": "assistant", "content": None, "refusal": ""}),
        openai_chunk({"refusal": "I'm sorry, I can't "}),
        openai_chunk({"refusal": "help with that."}),
        openai_chunk({}, "stop"),
        openai_chunk(None, usage={"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}),
        "[DONE]",
    ])


@pytest.mark.parametrize("api", APIS)
async def test_a_refusal_is_recorded_with_its_text_and_the_next_prompt_works(
    api: str, server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    server.add_steps(
        Step(match=Match(api=api, turn=0), raw=_refusal(api)),
        Step(match=Match(api=api, turn=1, last_user_contains="something else"), reply=Reply(text="Sure.")),
    )
    events: list[Event] = []
    loop = _loop(api, server, pool, tmp_path, events)
    first = await loop.run("do the forbidden thing")
    assert first.stop_reason == "refusal"
    expected = "(the model refused to answer)" if api == "anthropic" else "I'm sorry, I can't help with that."
    assert first.result == expected and loop.session.messages[1] == Message(
        role="assistant", content=[TextBlock(text=expected)])
    assert _notices(events) == ["the model refused to answer"]
    assert first.marked_result().endswith("[the model refused: this is not an answer]")
    assert (await loop.run("something else")).result == "Sure."
    server.assert_done()
    assert_valid_request(api, server.requests[1].body)


@pytest.mark.parametrize("api", APIS)
async def test_broken_history_from_the_store_is_repaired_on_the_way_out(
    api: str, server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    server.add_steps(Step(match=Match(api=api), reply=Reply(text="ok")))
    loop = _loop(api, server, pool, tmp_path, [])
    # What an older agentcli stored after an empty turn and a whitespace block.
    loop.session.messages.extend([
        Message.user("hi"), Message(role="assistant", content=[]),
        Message.user("and?"), Message(role="assistant", content=[TextBlock(text=" \n")]),
    ])
    await loop.run("go on")
    server.assert_done()
    assert_valid_request(api, server.requests[0].body)


@pytest.mark.parametrize("api", APIS)
async def test_a_stream_error_after_whitespace_stores_no_blank_message(
    api: str, server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    server.add_steps(
        Step(match=Match(api=api, turn=0), reply=Reply(text="\n\n", chunk_size=1),
             fault=Fault(kind="cut", after_events=4 if api == "anthropic" else 2)),
        Step(match=Match(api=api, last_user_contains="retry"), reply=Reply(text="fine")),
    )
    loop = _loop(api, server, pool, tmp_path, [])
    assert (await loop.run("first")).status == "failed"
    assert (await loop.run("retry")).result == "fine"
    _stored_valid(loop)
    assert_valid_request(api, server.requests[-1].body)


async def test_groq_tool_use_failed_is_told_to_the_model_which_retries(
    server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    failed = {"error": {"message": "Failed to call a function. Please adjust your prompt.",
                        "type": "invalid_request_error", "code": "tool_use_failed",
                        "failed_generation": '<function=Read{"file_path": "a.txt"</function>'}}
    server.add_steps(
        Step(match=Match(api="openai", turn=0),
             raw=Raw(frames=[openai_chunk({"role": "assistant", "content": ""}), failed])),
        Step(match=Match(api="openai", turn=1, last_user_contains="Failed to call a function"),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "a.txt"})])),
        Step(match=Match(api="openai", turn=2, last_user_contains="alpha"), reply=Reply(text="It says alpha.")),
    )
    loop = _loop("openai", server, pool, tmp_path, [])
    outcome = await loop.run("read a.txt")
    assert outcome.status == "completed" and outcome.result == "It says alpha."
    server.assert_done()
    second = server.requests[1].body
    assert_valid_request("openai", second)
    tool_msg = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_msg["content"].startswith("Error: Invalid arguments for Read: the server rejected this tool call")


async def test_a_paused_turn_is_continued_not_reported_as_done(
    server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    # Anthropic's pause_turn: a long turn stops early; sending the history back lets the model go on.
    server.add_steps(
        Step(match=Match(turn=0), raw=anthropic_frames([{"type": "text", "text": "Searching the docs... \n"}],
                                                       "pause_turn")),
        Step(match=Match(turn=1), reply=Reply(text="Found it.")),
    )
    events: list[Event] = []
    loop = _loop("anthropic", server, pool, tmp_path, events)
    outcome = await loop.run("look it up")
    assert outcome.status == "completed" and outcome.result == "Found it." and outcome.turns == 2
    assert _notices(events) == []
    server.assert_done()
    second = server.requests[1].body
    assert_valid_request("anthropic", second)
    assert second["messages"][-1]["role"] == "assistant"
    assert second["messages"][-1]["content"][-1]["text"] == "Searching the docs..."


async def test_a_full_context_window_is_marked_like_a_cut(
    server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    server.add_steps(Step(raw=anthropic_frames([{"type": "text", "text": "Partial"}], "model_context_window_exceeded")))
    events: list[Event] = []
    outcome = await _loop("anthropic", server, pool, tmp_path, events).run("go")
    assert outcome.stop_reason == "model_context_window_exceeded" and outcome.result == "Partial"
    assert _notices(events) == ["the reply was cut: the conversation filled the model's context window"]
    assert outcome.marked_result().endswith("filled the model's context window; it is incomplete]")
