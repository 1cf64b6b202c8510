"""Replays of real traffic shapes (tests/llm/recordings/*.json), byte for byte, through the real SDKs over HTTP.

Each recording names the public recording whose shape it reproduces (event order, fields, chunking,
quirks, usage layout, error body) with this project's own text. A two-turn session runs over each:
the first turn is the recording, the second a scripted reply; the outcome and the second request
(checked against the SDKs' own param types) are asserted.

A recording: `source` (the public recording it reproduces), `api` (anthropic | openai), `provider`
(openai | openai-compatible), `model`, `status`, optional `headers` / `content_type` / `retries` /
`workspace` (files for the tools), then either `frames` (each a bare `data:` payload string or
{event, data}, sent one write each) or `body` (sent byte for byte), and `expect`: text, thinking,
signature, redacted, tool_calls, input_error_contains, tool_result_contains, usage, stop_reason,
marker, stored_text, refusal_text, reasoning_sent / reasoning_not_sent, continues (pause_turn),
no_file, error {contains} with requests (how many went out), or retried {contains}.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.agent.loop import AgentLoop, RunOutcome
from agentcli.agent.session import Session
from agentcli.events import Event, RetryEvent, UsageEvent
from agentcli.llm.base import Message, ProviderName, RedactedThinkingBlock, RetryPolicy, ThinkingBlock
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools
from tests.llm.replay import RECORDINGS_DIR, assert_valid_request, recording_raw

RECORDINGS = sorted(RECORDINGS_DIR.glob("*.json"))
SECOND = "Second turn done."


def _loop(rec: dict[str, Any], server: FakeLLMServer, pool: ProviderPool, workspace: Path,
          events: list[Event]) -> AgentLoop:
    api = rec["api"]
    provider: ProviderName = "anthropic" if api == "anthropic" else rec["provider"]
    base = server.base_url if api == "anthropic" else server.base_url + "/v1"
    model = ResolvedModel("main", provider, rec["model"], base, "sk-recording-test", 1024)
    session = Session(system_prompt="You are the recordings test.", model=model, workspace=workspace)
    ctx = ToolContext(workspace=workspace, agent="main", session_id=session.id,
                      permissions=PermissionPolicy("auto"), file_locks=FileLocks())
    return AgentLoop(session, pool.get(model), build_tools(), ctx, events.append, max_turns=4)


def _assistant_blocks(body: dict[str, Any], api: str) -> list[Any]:
    """Every content block of every assistant message in an outgoing body."""
    blocks: list[Any] = []
    for m in body["messages"]:
        if m["role"] == "assistant":
            blocks.extend(m["content"] if api == "anthropic" else [m])
    return blocks


def _check_first_turn(rec: dict[str, Any], first: RunOutcome, stored: Message, events: list[Event]) -> None:
    exp = rec["expect"]
    assert first.status == "completed", first.error
    calls = stored.tool_uses()
    if exp.get("text"):
        assert stored.text() == exp["text"]
    if "stored_text" in exp:
        assert stored.text() == exp["stored_text"]
    if "refusal_text" in exp:
        assert exp["refusal_text"] in stored.text() and first.stop_reason == "refusal"
    if "thinking" in exp:
        assert "".join(b.thinking for b in stored.content if isinstance(b, ThinkingBlock)) == exp["thinking"]
    if "signature" in exp:
        assert [b.signature for b in stored.content if isinstance(b, ThinkingBlock)] == [exp["signature"]]
    if "redacted" in exp:
        assert [b.data for b in stored.content if isinstance(b, RedactedThinkingBlock)] == exp["redacted"]
    if "tool_calls" in exp:
        got = [{k: getattr(c, k) for k in want} for c, want in zip(calls, exp["tool_calls"], strict=True)]
        assert got == exp["tool_calls"]
    else:
        assert not calls
    for piece in exp.get("input_error_contains", []):
        assert calls[0].input_error is not None and piece in calls[0].input_error
    if "usage" in exp:
        usage = next(e for e in events if isinstance(e, UsageEvent))
        got_usage = {"input": usage.input_tokens, "output": usage.output_tokens,
                     "cache_read": usage.cache_read_tokens, "cache_write": usage.cache_write_tokens}
        assert got_usage == exp["usage"]
    if not calls and not exp.get("continues"):
        if "stop_reason" in exp:
            assert first.stop_reason == exp["stop_reason"]
        if "stop_reason_in" in exp:
            assert first.stop_reason in exp["stop_reason_in"]
        if "marker" in exp:
            assert exp["marker"] in first.marked_result()


def _check_second_request(rec: dict[str, Any], body: dict[str, Any]) -> None:
    exp, api = rec["expect"], rec["api"]
    assert_valid_request(api, body)
    sent = _assistant_blocks(body, api)
    if "signature" in exp:  # signed thinking goes back exactly as received
        thinking = [b for b in sent if b.get("type") == "thinking"]
        assert thinking == [{"type": "thinking", "thinking": exp["thinking"], "signature": exp["signature"]}]
    if "redacted" in exp:
        assert [b["data"] for b in sent if b.get("type") == "redacted_thinking"] == exp["redacted"]
    if "reasoning_sent" in exp:  # DeepSeek's thinking mode: the tool loop's reasoning goes back with its message
        assert [m.get("reasoning_content") for m in sent] == exp["reasoning_sent"]
    if "reasoning_not_sent" in exp:
        assert exp["reasoning_not_sent"] not in json.dumps(body)
    if "tool_result_contains" in exp:
        assert exp["tool_result_contains"] in json.dumps(body["messages"][-2:])
    if exp.get("continues"):  # pause_turn: the paused turn goes back as the last message, to be continued
        assert body["messages"][-1]["role"] == "assistant"


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
async def test_recording_two_turn_session(path: Path, tmp_path: Path) -> None:
    rec = json.loads(path.read_text())
    assert rec["source"] and rec["api"] in ("anthropic", "openai")
    for name, text in rec.get("workspace", {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    exp, api = rec["expect"], rec["api"]
    events: list[Event] = []
    pool = ProviderPool(RetryPolicy(max_retries=rec.get("retries", 0), initial_delay=0.001, max_delay=0.001))
    try:
        with FakeLLMServer(Script(steps=[])) as server:
            server.add_steps(Step(match=Match(api=api), raw=recording_raw(rec)),
                             Step(match=Match(api=api), reply=Reply(text=SECOND)))
            loop = _loop(rec, server, pool, tmp_path, events)
            first = await loop.run("First prompt of the recording test.")
            if "error" in exp:
                assert first.status == "failed" and first.error is not None
                line = first.error
                assert "\n" not in line and "Traceback" not in line, line
                for piece in exp["error"]["contains"]:
                    assert piece in line, line
                assert len(server.requests) == exp.get("requests", 1)  # never retried into a second billed request
                outcome = await loop.run("Try again, please.")
            elif "retried" in exp:  # a passing failure: retried once, then the scripted reply
                (retry,) = [e for e in events if isinstance(e, RetryEvent)]
                assert "\n" not in retry.error, retry.error
                for piece in exp["retried"]["contains"]:
                    assert piece in retry.error, retry.error
                outcome = first  # the retry was the second request
            else:
                _check_first_turn(rec, first, loop.session.messages[1], events)
                if first.result == SECOND:  # tool calls or pause_turn: the loop already made the second request
                    outcome = first
                else:
                    outcome = await loop.run("Second prompt of the recording test.")
            assert outcome.status == "completed" and outcome.result == SECOND
            if "no_file" in exp:  # a call cut at the token limit never runs with half its arguments
                assert not (tmp_path / exp["no_file"]).exists()
            server.assert_done()
            assert len(server.requests) == 2
            _check_second_request(rec, server.requests[1].body)
    finally:
        await pool.aclose()
