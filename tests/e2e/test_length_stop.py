"""A reply cut at the token limit is never reported as a normal completion (json, text, Task result)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

CUT = "[cut: the reply reached the model's output token limit (max_output_tokens); it is incomplete]"


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_json_output_says_max_tokens(api: str, tmp_path: Path) -> None:
    script = Script(steps=[Step(match=Match(api=api), reply=Reply(text="The first half of", stop_reason="max_tokens"))])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "write a lot"],
                       cli_env(api, server, tmp_path))
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    result = last_json(proc.stdout)
    assert result["stop_reason"] == "max_tokens" and result["result"] == "The first half of"
    assert "cut at the output token limit" in proc.stderr and "Traceback" not in proc.stderr


def test_a_normal_end_says_end_turn(tmp_path: Path) -> None:
    with FakeLLMServer(Script(steps=[Step(reply=Reply(text="All of it."))])) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "write"],
                       cli_env("anthropic", server, tmp_path))
    assert last_json(proc.stdout)["stop_reason"] == "end_turn"
    assert "cut at" not in proc.stderr


def test_text_output_shows_a_marker(tmp_path: Path) -> None:
    script = Script(steps=[Step(reply=Reply(text="The first half of", stop_reason="max_tokens"))])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--cwd", str(tmp_path), "write a lot"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("The first half of")
    assert "agentcli: warning: the reply was cut at the output token limit (max_output_tokens = 8192)" in proc.stderr


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_subagent_cut_at_the_limit_says_so_to_its_parent(api: str, tmp_path: Path) -> None:
    task = ToolCall(name="Task", input={"description": "Summarize", "prompt": "Summarize the repo",
                                        "subagent_type": "explore"})
    script = Script(steps=[
        Step(match=Match(api=api, system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        Step(match=Match(api=api, system_contains="# Task\nSummarize", turn=0),
             reply=Reply(text="The repo has three parts: first", stop_reason="max_tokens")),
        Step(match=Match(api=api, system_contains=MAIN, turn=1, last_user_contains=CUT),
             reply=Reply(text="The summary was cut; here is what I know.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "summarize"],
                       cli_env(api, server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert last_json(proc.stdout)["result"] == "The summary was cut; here is what I know."
    parent_second = json.dumps(server.requests[-1].body)
    assert "The repo has three parts: first" in parent_second and CUT in parent_second
