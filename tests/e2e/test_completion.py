"""A subagent that ends without a final answer is never `completed` (issue 23, item 6), through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli


def _task(prompt: str, **extra: object) -> ToolCall:
    return ToolCall(name="Task", input={"description": prompt, "prompt": prompt,
                                        "subagent_type": "general", **extra})


def _run(tmp_path: Path, sub_steps: list[Step], prompt: str, **extra: object) -> tuple[dict[str, object], str]:
    """Main delegates `prompt`, the subagent follows `sub_steps`, main answers; (the task record, what main read)."""
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task(prompt, **extra)])),
        *sub_steps,
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Noted.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--yes", "--cwd", str(tmp_path), "go"],
                       cli_env("anthropic", server, tmp_path))
        assert proc.returncode == 0, proc.stderr
        server.assert_done()
        parent_read = json.dumps(server.requests[-1].body)
    tasks = last_json(proc.stdout)["tasks"]
    assert isinstance(tasks, list) and len(tasks) == 1
    return tasks[0], parent_read


def test_an_empty_last_reply_is_not_completed(tmp_path: Path) -> None:
    sub = "# Task\nFind the entry point"
    record, parent_read = _run(tmp_path, [
        Step(match=Match(system_contains=sub, turn=0), reply=Reply(tool_calls=[ToolCall(name="LS", input={})])),
        Step(match=Match(system_contains=sub, turn=1), reply=Reply(text="")),
    ], "Find the entry point")
    assert record["status"] == "failed"
    assert record["error"] == "the model's last reply was empty"
    assert "without a final answer" in parent_read or "before producing an answer" in parent_read


def test_a_reply_cut_at_the_token_limit_names_the_limit(tmp_path: Path) -> None:
    sub = "# Task\nSummarize"
    record, parent_read = _run(tmp_path, [
        Step(match=Match(system_contains=sub, turn=0), reply=Reply(text="Three parts: the", stop_reason="max_tokens")),
    ], "Summarize")
    assert record["status"] == "budget_exceeded"
    assert "output token limit (max_output_tokens = " in str(record["error"])
    assert record["result"].startswith("Three parts: the")  # type: ignore[union-attr]
    assert "without a final answer" in parent_read and "Three parts: the" in parent_read


def test_a_subagent_stopped_mid_tool_call_is_not_completed(tmp_path: Path) -> None:
    sub = "# Task\nWait for the build"
    sleep = ToolCall(name="Bash", input={"command": "sleep 30"})
    record, parent_read = _run(tmp_path, [
        Step(match=Match(system_contains=sub, turn=0), reply=Reply(text="Starting the build.", tool_calls=[sleep])),
    ], "Wait for the build", timeout_seconds=2)
    assert record["status"] == "timed_out"
    assert record["result"] == "Starting the build."
    assert "without a final answer" in parent_read and "timed out" in parent_read
