"""Thinking and effort through the real CLI and the fake server: a Task call's or agent file's effort reaches
the subagent's request (per provider), thinking never becomes a Task result, is counted in usage, and is
printed only where asked for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Raw, RawFrame, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli
from tests.llm.replay import openai_chunk

SIGNATURE = "EqQBCgIYAhIMsigE2eThinkingTestSignature"
SECRET_THOUGHT = "the reasoning word is PELICAN"
WIDE = {"AGENTCLI_MODELS__MAIN__MAX_OUTPUT_TOKENS": "32000", "AGENTCLI_MODELS__LIGHT__MAX_OUTPUT_TOKENS": "32000"}


def _task(description: str, subagent_type: str = "explore", **extra: object) -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": f"Please do: {description}",
                                        "subagent_type": subagent_type, **extra})


def _workspace(tmp_path: Path, effort: str = "low") -> Path:
    ws = tmp_path / "ws"
    agents = ws / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    (agents / "thinker.md").write_text(
        f"---\nname: thinker\ndescription: Thinks things through.\ntools: Read\neffort: {effort}\n---\n"
        "You are the thinker.\n"
    )
    return ws


def _run(server: FakeLLMServer, tmp_path: Path, ws: Path, api: str, fmt: str = "json",
         extra_args: tuple[str, ...] = (), **env: str) -> tuple[str, str]:
    proc = run_cli(["run", "--output-format", fmt, "--cwd", str(ws), *extra_args, "think about it"],
                   cli_env(api, server, tmp_path, **env))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout, proc.stderr


def _sub_request(server: FakeLLMServer, description: str) -> dict[str, Any]:
    wanted = json.dumps(f"# Task\n{description}")[1:-1]  # as it appears inside the JSON body
    return next(r.body for r in server.requests if wanted in json.dumps(r.body))


def _three_tasks(api: str) -> Script:
    calls = [_task("Explore hard question", effort="high"), _task("Think with file effort", "thinker"),
             _task("Think with call effort", "thinker", effort="medium")]
    steps = [Step(match=Match(api=api, system_contains=MAIN, turn=0), reply=Reply(tool_calls=calls))]
    steps += [Step(match=Match(api=api, system_contains=f"# Task\n{c.input['description']}"),
                   reply=Reply(text=f"answer of {c.input['description']}")) for c in calls]
    steps.append(Step(match=Match(api=api, system_contains=MAIN, turn=1), reply=Reply(text="All done.")))
    return Script(steps=steps)


def test_effort_on_anthropic_turns_thinking_on_with_a_budget_per_level(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, effort="low")
    with FakeLLMServer(_three_tasks("anthropic")) as server:
        stdout, _ = _run(server, tmp_path, ws, "anthropic", **WIDE)
    server.assert_done()
    assert last_json(stdout)["result"] == "All done."
    assert "thinking" not in server.requests[0].body  # the main agent keeps its model's own setting
    # The Task call's effort; the agent file's; the Task call's over the agent file's.
    for description, budget in (("Explore hard question", 24576), ("Think with file effort", 2048),
                                ("Think with call effort", 8192)):
        body = _sub_request(server, description)
        assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}, description
        assert "output_config" not in body and "temperature" not in body


def test_effort_budget_stays_below_max_output_tokens(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task("Explore hard question",
                                                                                      effort="high")])),
        Step(match=Match(system_contains="# Task\nExplore hard question"), reply=Reply(text="ok")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        _run(server, tmp_path, ws, "anthropic", AGENTCLI_MODELS__LIGHT__MAX_OUTPUT_TOKENS="10000")
    server.assert_done()
    body = _sub_request(server, "Explore hard question")
    assert body["max_tokens"] == 10000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 10000 - 1024}


def test_effort_on_an_adaptive_anthropic_model_is_sent_as_output_config_effort(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Explore hard question", effort="medium")])),
        Step(match=Match(system_contains="# Task\nExplore hard question"), reply=Reply(text="ok")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        _run(server, tmp_path, ws, "anthropic", AGENTCLI_MODELS__LIGHT__THINKING="adaptive")
    server.assert_done()
    body = _sub_request(server, "Explore hard question")
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "medium"}


def test_effort_on_openai_is_reasoning_effort(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, effort="low")
    with FakeLLMServer(_three_tasks("openai")) as server:
        stdout, _ = _run(server, tmp_path, ws, "openai")
    server.assert_done()
    assert last_json(stdout)["result"] == "All done."
    assert "reasoning_effort" not in server.requests[0].body
    for description, effort in (("Explore hard question", "high"), ("Think with file effort", "low"),
                                ("Think with call effort", "medium")):
        body = _sub_request(server, description)
        assert body["reasoning_effort"] == effort, description
        assert "thinking" not in body


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_bad_effort_is_an_invalid_parameter_and_starts_no_subagent(api: str, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(api=api, system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Explore hard question", effort="maximum")])),
        Step(match=Match(api=api, system_contains=MAIN, turn=1,
                         last_user_contains="Invalid parameters: effort: Input should be 'low', 'medium' or 'high'"),
             reply=Reply(text="I will use a valid effort next time.")),
    ])
    with FakeLLMServer(script) as server:
        stdout, _ = _run(server, tmp_path, ws, api)
    server.assert_done()
    assert len(server.requests) == 2 and last_json(stdout)["tasks"] == []


def test_a_bad_effort_in_an_agent_file_is_ignored_with_a_warning(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, effort="extreme")
    with FakeLLMServer(Script()) as server:
        proc = run_cli(["agents", "show", "thinker"], cli_env("anthropic", server, tmp_path), cwd=ws)
    out = proc.stdout + proc.stderr
    assert "'effort: extreme' ignored: expected low, medium or high" in out, out


# --- thinking never becomes a Task result; it is counted in usage -----------------------------------


def _ev(event: str, data: dict[str, Any]) -> RawFrame:
    return RawFrame(event=event, data={"type": event, **data})


def _claude_thinks_then_answers(answer: str) -> Raw:
    return Raw(frames=[
        _ev("message_start", {"message": {"id": "msg_01S", "type": "message", "role": "assistant",
                                          "model": "claude-haiku-5-5", "content": [], "stop_reason": None,
                                          "stop_sequence": None, "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        _ev("content_block_start", {"index": 0, "content_block": {"type": "thinking", "thinking": "",
                                                                  "signature": ""}}),
        _ev("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": SECRET_THOUGHT}}),
        _ev("content_block_delta", {"index": 0, "delta": {"type": "signature_delta", "signature": SIGNATURE}}),
        _ev("content_block_stop", {"index": 0}),
        _ev("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}),
        _ev("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": answer}}),
        _ev("content_block_stop", {"index": 1}),
        _ev("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                              "usage": {"output_tokens": 120}}),
        _ev("message_stop", {}),
    ])


def _openai_reasons_then_answers(answer: str) -> Raw:
    usage = {"prompt_tokens": 30, "completion_tokens": 150, "total_tokens": 180,
             "completion_tokens_details": {"reasoning_tokens": 128}}
    return Raw(frames=[
        RawFrame(data=openai_chunk({"role": "assistant", "content": None, "reasoning_content": SECRET_THOUGHT})),
        RawFrame(data=openai_chunk({"content": answer})),
        RawFrame(data=openai_chunk({}, "stop")),
        RawFrame(data=openai_chunk(None, usage=usage)),
        RawFrame(data="[DONE]"),
    ])


@pytest.mark.parametrize("answer", ["The loader is in config.py.", ""])
@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_thinking_never_becomes_part_of_a_task_result_and_counts_as_output(
    api: str, answer: str, tmp_path: Path
) -> None:
    ws = _workspace(tmp_path)
    raw = _claude_thinks_then_answers(answer) if api == "anthropic" else _openai_reasons_then_answers(answer)
    expected = answer or "(empty response: the model returned no text)"  # a reasoning-only reply is not an answer
    script = Script(steps=[
        Step(match=Match(api=api, system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task("Find the loader")])),
        Step(match=Match(api=api, system_contains="# Task\nFind the loader"), raw=raw),
        Step(match=Match(api=api, system_contains=MAIN, turn=1, last_user_contains=expected), reply=Reply(text="ok")),
    ])
    with FakeLLMServer(script) as server:
        stdout, _ = _run(server, tmp_path, ws, api, fmt="events")
    server.assert_done()
    lines = [json.loads(line) for line in stdout.splitlines()]
    result = lines[-1]
    (task,) = result["tasks"]
    assert task["result"] == expected
    assert SECRET_THOUGHT not in json.dumps(server.requests[-1].body)  # the parent never sees the reasoning
    # the event lines: the subagent's thinking is its own event type, wrapped like its other events.
    thoughts = [ln["event"] for ln in lines if ln.get("kind") == "subagent_event"
                and ln["event"]["kind"] == "thinking_delta"]
    assert [t["text"] for t in thoughts] == [SECRET_THOUGHT]
    usages = [ln["event"] for ln in lines if ln.get("kind") == "subagent_event" and ln["event"]["kind"] == "usage"]
    if api == "anthropic":  # Anthropic counts thinking in output_tokens and reports no separate figure
        assert usages[0]["output_tokens"] == 120 and usages[0]["reasoning_tokens"] == 0
    else:  # OpenAI: completion_tokens include the reasoning tokens it reports apart
        assert (usages[0]["output_tokens"], usages[0]["reasoning_tokens"]) == (150, 128)
        assert result["usage"]["reasoning_tokens"] == 128
        assert result["usage"]["output_tokens"] >= 150


# --- text output --------------------------------------------------------------------------------


def _main_thinks(api: str) -> Script:
    raw = _claude_thinks_then_answers("Forty-two.") if api == "anthropic" else \
        _openai_reasons_then_answers("Forty-two.")
    return Script(steps=[Step(match=Match(api=api, system_contains=MAIN), raw=raw)])


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_text_output_hides_thinking_unless_verbose(api: str, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with FakeLLMServer(_main_thinks(api)) as server:
        stdout, stderr = _run(server, tmp_path, ws, api, fmt="text")
    assert stdout == "Forty-two.\n"
    assert SECRET_THOUGHT not in stderr
    with FakeLLMServer(_main_thinks(api)) as server:
        stdout, stderr = _run(server, tmp_path, ws, api, fmt="text", extra_args=("--verbose",))
    assert stdout == "Forty-two.\n"  # the answer alone on stdout
    assert f"thinking: {SECRET_THOUGHT}\n" in stderr
    assert "\x1b" not in stderr  # not a terminal: no dimming codes
