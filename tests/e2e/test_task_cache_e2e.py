"""Reused results through the real CLI and the fake server: the request count proves a hit sent nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.subagents.result_cache.fingerprints import window_ns
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

DESCRIPTION, PROMPT = "Find config loader", "Where is load_config defined?"
SUB = f"# Task\n{DESCRIPTION}"
ANSWER = "load_config is defined at src/config.py:1."


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "config.py").write_text("def load_config():\n    return {'debug': True}\n")
    (ws / "README.md").write_text("demo project\n")
    time.sleep(window_ns(os.stat(ws / "README.md")) / 1e9 + 0.02)  # older than a read can be confused with
    return ws


def _task(**extra: object) -> ToolCall:
    return ToolCall(name="Task", input={"description": DESCRIPTION, "prompt": PROMPT, "subagent_type": "explore",
                                        **extra})


def _explore(times: int = 1) -> list[Step]:
    return [
        Step(match=Match(system_contains=SUB, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "src/config.py"})]), times=times),
        Step(match=Match(system_contains=SUB, turn=1), reply=Reply(text=ANSWER), times=times),
    ]


def _subagent_requests(server: FakeLLMServer) -> int:
    def system(body: dict[str, Any]) -> str:
        value = body.get("system", "")
        return "\n".join(str(b.get("text", "")) for b in value) if isinstance(value, list) else str(value)

    return sum(SUB in system(r.body) for r in server.requests)


def test_a_repeated_explore_task_costs_no_request_and_says_it_is_cached(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task()])),
        *_explore(),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains=ANSWER), reply=Reply(tool_calls=[_task()])),
        Step(match=Match(system_contains=MAIN, turn=2, last_user_contains="cached: the result of the identical task"),
             reply=Reply(text="Same answer twice.")),
    ])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "where is the config loaded?"], env)
        assert proc.returncode == 0, proc.stderr
        result = last_json(proc.stdout)
        shown = run_cli(["tasks", "show", result["tasks"][1]["task_id"]], env)
        listed = run_cli(["tasks", "list"], env)
    server.assert_done()
    assert len(server.requests) == 5  # three of the main agent, two of the first run: none for the second
    assert _subagent_requests(server) == 2
    first, second = result["tasks"]
    assert second["cached_from"] == first["task_id"] and first["cached_from"] is None
    assert second["status"] == "completed" and second["result"] == first["result"] == ANSWER
    assert (second["input_tokens"], second["output_tokens"], second["tool_calls"]) == (0, 0, 0)
    assert f"cached: the result of the identical task {first['task_id']}" in json.dumps(server.requests[-1].body)
    assert shown.returncode == 0, shown.stderr
    assert f"completed (cached: the result of {first['task_id']}, no model request)" in shown.stdout
    assert ANSWER in shown.stdout
    assert "cached" in listed.stdout


@pytest.mark.parametrize("case", ["no_cache", "general", "cache_results = false", "Bash in between"])
def test_what_runs_the_task_again(tmp_path: Path, case: str) -> None:
    ws = _workspace(tmp_path)
    kind = "general" if case == "general" else "explore"
    second = _task(subagent_type=kind, **({"no_cache": True} if case == "no_cache" else {}))
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task(subagent_type=kind)])),
             *_explore(2)]
    turn = 1
    if case == "Bash in between":  # a command of the session may have written anything
        steps.append(Step(match=Match(system_contains=MAIN, turn=1),
                          reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": "true"})])))
        turn = 2
    steps += [Step(match=Match(system_contains=MAIN, turn=turn), reply=Reply(tool_calls=[second])),
              Step(match=Match(system_contains=MAIN, turn=turn + 1), reply=Reply(text="done"))]
    extra = {"AGENTCLI_TASK_TOOL__CACHE_RESULTS": "false"} if case == "cache_results = false" else {}
    with FakeLLMServer(Script(steps=steps)) as server:
        env = cli_env("anthropic", server, tmp_path, **extra)
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "twice please"], env)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert _subagent_requests(server) == 4
    assert [t["cached_from"] for t in last_json(proc.stdout)["tasks"]] == [None, None]


def _user(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def _until_result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    for line in proc.stdout:
        data: dict[str, Any] = json.loads(line)
        if data.get("type") == "result":
            return data
    raise AssertionError("the run ended without a result line")


def test_a_file_changed_between_turns_runs_the_task_again(tmp_path: Path) -> None:
    """Turn 1 runs the task, turn 2 (nothing changed) reuses it, the person edits the file it read, turn 3 runs
    it again: one session, driven line by line over stream-json input."""
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task()])),
        *_explore(2),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="first")),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(tool_calls=[_task()])),
        Step(match=Match(system_contains=MAIN, turn=3, last_user_contains="cached"), reply=Reply(text="second")),
        Step(match=Match(system_contains=MAIN, turn=4), reply=Reply(tool_calls=[_task()])),
        Step(match=Match(system_contains=MAIN, turn=5, last_user_contains=ANSWER), reply=Reply(text="third")),
    ])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "run", "--input-format", "stream-json", "--output-format",
             "stream-json", "--cwd", str(ws)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert proc.stdin is not None
        try:
            answers = []
            for turn, prompt in enumerate(("look once", "look again", "and once more")):
                if turn == 2:
                    (ws / "src" / "config.py").write_text("def load_config():\n    return {'debug': False}\n")
                proc.stdin.write(_user(prompt))
                proc.stdin.flush()
                answers.append(_until_result(proc)["result"])
                if turn == 1:
                    assert _subagent_requests(server) == 2  # the second turn's task sent nothing
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    server.assert_done()
    assert answers == ["first", "second", "third"]
    assert _subagent_requests(server) == 4
