"""Thinking is kept apart from the answer, persisted, and sent back unchanged after tool use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.events import Event, TextDeltaEvent, ThinkingDeltaEvent
from agentcli.llm.base import Message, RedactedThinkingBlock, ThinkingBlock
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.testing.fake_llm import FakeLLMServer, Match, Raw, RawFrame, Reply, Step
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools
from tests.llm.replay import assert_valid_request, openai_chunk

SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds2lfzv2"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"


def _loop(model: ResolvedModel, pool: ProviderPool, workspace: Path, events: list[Event] | None = None) -> AgentLoop:
    session = Session(system_prompt="You are the thinking test.", model=model, workspace=workspace)
    ctx = ToolContext(workspace=workspace, agent="main", session_id=session.id,
                      permissions=PermissionPolicy("auto"), file_locks=FileLocks())
    sink = events.append if events is not None else (lambda e: None)
    return AgentLoop(session, pool.get(model), build_tools(), ctx, sink, max_turns=4)


def _ev(event: str, data: dict[str, Any]) -> RawFrame:
    return RawFrame(event=event, data={"type": event, **data})


def _claude_thinking_then_tool() -> Raw:
    # Claude with thinking: thinking_delta pieces, then one signature_delta, then the tool call
    # (Anthropic's documented streaming order for extended thinking).
    return Raw(frames=[
        _ev("message_start", {"message": {"id": "msg_01T", "type": "message", "role": "assistant",
                                          "model": "claude-sonnet-5-5", "content": [], "stop_reason": None,
                                          "stop_sequence": None, "usage": {"input_tokens": 50, "output_tokens": 1}}}),
        _ev("content_block_start",
            {"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        _ev("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "I should read "}}),
        _ev("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "a.txt first."}}),
        _ev("content_block_delta", {"index": 0, "delta": {"type": "signature_delta", "signature": SIGNATURE}}),
        _ev("content_block_stop", {"index": 0}),
        _ev("content_block_start", {"index": 1, "content_block": {"type": "redacted_thinking", "data": REDACTED}}),
        _ev("content_block_stop", {"index": 1}),
        _ev("content_block_start", {"index": 2, "content_block": {"type": "text", "text": ""}}),
        _ev("content_block_delta", {"index": 2, "delta": {"type": "text_delta", "text": "\n\n"}}),
        _ev("content_block_stop", {"index": 2}),
        _ev("content_block_start", {"index": 3, "content_block": {"type": "tool_use", "id": "toolu_01R",
                                                                  "name": "Read", "input": {}}}),
        _ev("content_block_delta", {"index": 3, "delta": {"type": "input_json_delta",
                                                          "partial_json": '{"file_path": "a.txt"}'}}),
        _ev("content_block_stop", {"index": 3}),
        _ev("message_delta", {"delta": {"stop_reason": "tool_use", "stop_sequence": None},
                              "usage": {"output_tokens": 90}}),
        _ev("message_stop", {}),
    ])


async def test_signed_thinking_goes_back_unchanged_after_a_tool_call(
    server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    server.add_steps(
        Step(match=Match(api="anthropic", turn=0), raw=_claude_thinking_then_tool()),
        Step(match=Match(api="anthropic", turn=1, last_user_contains="alpha"), reply=Reply(text="It says alpha.")),
    )
    model = ResolvedModel("main", "anthropic", "claude-sonnet-5-5", server.base_url, "sk-ant-test", 1024)
    events: list[Event] = []
    loop = _loop(model, pool, tmp_path, events)
    outcome = await loop.run("what is in a.txt?")
    streamed = [e.text for e in events if isinstance(e, ThinkingDeltaEvent)]
    assert streamed == ["I should read ", "a.txt first."]  # live, apart from the answer
    assert not any(isinstance(e, TextDeltaEvent) and "a.txt first" in e.text for e in events)
    assert outcome.result == "It says alpha."
    server.assert_done()
    second = server.requests[1].body
    assert_valid_request("anthropic", second)
    assert second["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "I should read a.txt first.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED},
        {"type": "tool_use", "id": "toolu_01R", "name": "Read", "input": {"file_path": "a.txt"}},
    ]
    stored = loop.session.messages[1]
    assert Message.model_validate_json(stored.model_dump_json()) == stored  # persisted as is
    assert stored.text() == ""  # thinking never counts as the answer


def _deepseek_reasoning(answer: str) -> Raw:
    # DeepSeek reasoner / vLLM: reasoning streams in delta.reasoning_content, the answer in delta.content.
    frames: list[Any] = [
        openai_chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        openai_chunk({"content": None, "reasoning_content": "The user greets; "}),
        openai_chunk({"content": None, "reasoning_content": "answer briefly."}),
    ]
    if answer:
        frames.append(openai_chunk({"content": answer, "reasoning_content": None}))
    frames += [openai_chunk({"content": ""}, "stop",
                            usage={"prompt_tokens": 9, "completion_tokens": 20, "total_tokens": 29}), "[DONE]"]
    return Raw(frames=frames)


@pytest.mark.parametrize("answer", ["Hello!", ""])
async def test_reasoning_content_is_kept_apart_and_never_sent_back(
    answer: str, server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    server.add_steps(
        Step(match=Match(api="openai", turn=0), raw=_deepseek_reasoning(answer)),
        Step(match=Match(api="openai", turn=1), reply=Reply(text="Again.")),
    )
    model = ResolvedModel("main", "openai-compatible", "deepseek-reasoner", server.base_url + "/v1", "sk", 1024)
    loop = _loop(model, pool, tmp_path)
    first = await loop.run("hi")
    stored = loop.session.messages[1]
    assert stored.content[0] == ThinkingBlock(thinking="The user greets; answer briefly.")
    assert first.result == (answer or "(empty response: the model returned no text)")
    await loop.run("again")
    server.assert_done()
    second = server.requests[1].body
    assert_valid_request("openai", second)
    assert "answer briefly" not in str(second)  # DeepSeek rejects reasoning_content sent back
    assert not any(isinstance(b, RedactedThinkingBlock) for b in stored.content)


async def test_unsigned_reasoning_is_not_sent_to_anthropic_after_a_model_switch(
    server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    server.add_steps(Step(match=Match(api="anthropic"), reply=Reply(text="ok")))
    model = ResolvedModel("main", "anthropic", "claude-sonnet-5-5", server.base_url, "sk-ant-test", 1024)
    loop = _loop(model, pool, tmp_path)
    loop.session.messages.extend([Message.user("hi"), Message(role="assistant", content=[
        ThinkingBlock(thinking="from a compatible server"), ThinkingBlock(thinking="signed", signature=SIGNATURE)])])
    await loop.run("go on")
    body = server.requests[0].body
    assert_valid_request("anthropic", body)
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "signed", "signature": SIGNATURE}
    assert "from a compatible server" not in str(body)
