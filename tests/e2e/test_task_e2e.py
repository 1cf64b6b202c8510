"""The Task tool through the real CLI and the fake server: delegation, isolation, limits, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, db, last_json, run_cli

SECRET_PARENT_TEXT = "the parent's private context: codename BLUEBIRD"


def _task(description: str, prompt: str, subagent_type: str = "explore", **extra: object) -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": prompt,
                                        "subagent_type": subagent_type, **extra})


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "config.py").write_text("def load_config():\n    return {'debug': True}\n")
    (ws / "src" / "auth.py").write_text("def login(user):\n    return user == 'admin'\n")
    (ws / "README.md").write_text("demo project\n")
    return ws


def _run(server: FakeLLMServer, tmp_path: Path, ws: Path, prompt: str, api: str = "anthropic",
         extra_args: tuple[str, ...] = (), **env: str) -> dict[str, object]:
    proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), *extra_args, prompt],
                   cli_env(api, server, tmp_path, **env))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return last_json(proc.stdout)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_explore_subagent_reads_a_file_and_answers_the_parent(api: str, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(api=api, system_contains=MAIN, turn=0),
             reply=Reply(text="Delegating.",
                         tool_calls=[_task("Find config loader", "Where is load_config defined?")])),
        Step(match=Match(api=api, system_contains="# Task\nFind config loader", turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "src/config.py"})])),
        Step(match=Match(api=api, system_contains="# Task\nFind config loader", turn=1,
                         last_user_contains="def load_config"),
             reply=Reply(text="load_config is defined at src/config.py:1.")),
        Step(match=Match(api=api, system_contains=MAIN, turn=1,
                         last_user_contains="load_config is defined at src/config.py:1."),
             reply=Reply(text="It is in src/config.py, line 1.")),
    ])
    with FakeLLMServer(script) as server:
        result = _run(server, tmp_path, ws, f"Where is the config loaded? ({SECRET_PARENT_TEXT})", api)
    server.assert_done()
    assert result["result"] == "It is in src/config.py, line 1."
    (task,) = result["tasks"]
    assert task["status"] == "completed"
    assert task["subagent_type"] == "explore"
    assert task["model_used"] == "light"
    assert task["tool_summary"] == [{"tool": "Read", "count": 1}]
    assert task["result"] == "load_config is defined at src/config.py:1."
    parent_turn2 = str(server.requests[-1].body)
    assert "Subagent (explore, light) completed." in parent_turn2
    # Isolation: the subagent's first request holds the Task prompt only, none of the parent's messages,
    # and an explore subagent is never offered a tool that writes or runs commands.
    sub = next(r for r in server.requests if "Find config loader" in str(r.body.get("system", ""))
               or "Find config loader" in str(r.body["messages"][0]))
    body = sub.body
    assert SECRET_PARENT_TEXT not in str(body["messages"])
    user_messages = [m for m in body["messages"] if m["role"] == "user"]
    assert len(user_messages) == 1 and "Where is load_config defined?" in str(user_messages[0])
    tools = {t.get("name") or t["function"]["name"] for t in body["tools"]}
    assert tools == {"LS", "Glob", "Grep", "Read", "TodoWrite", "LSP", "SendMessage", "ListAgents"}


def test_three_task_calls_in_one_turn_run_at_once(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    topics = ["Inspect config module", "Inspect auth module", "Inspect readme file"]
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[
        _task(topic, f"Report on: {topic}") for topic in topics]))]
    steps += [Step(match=Match(system_contains=f"# Task\n{topic}"), reply=Reply(text=f"report: {topic}"),
                   latency_ms=400) for topic in topics]
    steps.append(Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="All three reported.")))
    with FakeLLMServer(Script(steps=steps)) as server:
        result = _run(server, tmp_path, ws, "inspect everything")
    server.assert_done()
    assert result["result"] == "All three reported."
    subs = [r for r in server.requests if MAIN not in str(r.body.get("system", r.body.get("messages")))]
    assert len(subs) == 3
    first_done = min(r.finished_at for r in subs if r.finished_at is not None)
    assert all(r.received_at < first_done for r in subs), "all three subagent requests were in flight together"
    assert server.in_flight_max >= 3
    assert sorted(t["description"] for t in result["tasks"]) == sorted(topics)  # type: ignore[union-attr]


def _agents(ws: Path) -> None:
    agents = ws / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    for name in ("worker", "helper"):
        (agents / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: A {name} that can delegate further.\n---\nYou are the {name}.\n"
        )


def test_nested_delegation_stops_at_max_depth(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _agents(ws)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Level one work", "go one level down", "worker")])),
        Step(match=Match(system_contains="# Task\nLevel one work", turn=0),
             reply=Reply(tool_calls=[_task("Level two work", "go another level down", "helper")])),
        Step(match=Match(system_contains="# Task\nLevel two work", turn=0, tools_exclude=["Task"]),
             reply=Reply(tool_calls=[_task("Level three work", "and one more", "worker")])),
        Step(match=Match(system_contains="# Task\nLevel two work", turn=1,
                         last_user_contains="Maximum sub-agent depth exceeded (max_depth=2)"),
             reply=Reply(text="Cannot go deeper.")),
        Step(match=Match(system_contains="# Task\nLevel one work", turn=1), reply=Reply(text="level one done")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        result = _run(server, tmp_path, ws, "go deep", AGENTCLI_TASK_TOOL__MAX_DEPTH="2")
    server.assert_done()
    depths = sorted(t["depth"] for t in result["tasks"])  # type: ignore[union-attr]
    assert depths == [1, 2]
    # One ledger: the whole tree's usage is the main agent's own plus what it delegated, and the
    # delegated part is the level-one task's figures (which include level two's).
    ledger: Any = result["ledger"]
    usage: Any = result["usage"]
    for key in ("input_tokens", "output_tokens", "cache_read_tokens"):
        assert ledger["total"][key] == ledger["own"][key] + ledger["delegated"][key] == usage[key]
    level_one = next(t for t in result["tasks"] if t["depth"] == 1)  # type: ignore[union-attr]
    level_two = next(t for t in result["tasks"] if t["depth"] == 2)  # type: ignore[union-attr]
    assert ledger["delegated"]["input_tokens"] == level_one["input_tokens"] > level_two["input_tokens"] > 0


def test_cycle_is_refused_with_the_chain(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _agents(ws)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Review the code", "review it", "worker")])),
        Step(match=Match(system_contains="# Task\nReview the code", turn=0),
             reply=Reply(tool_calls=[_task("Review again please", "review it again", "worker")])),
        Step(match=Match(system_contains="# Task\nReview the code", turn=1,
                         last_user_contains="Circular delegation prevented: main → worker → worker"),
             reply=Reply(text="No recursion then.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="ok")),
    ])
    with FakeLLMServer(script) as server:
        _run(server, tmp_path, ws, "review")
    server.assert_done()


def test_unknown_type_lists_the_available_types(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Do quantum things", "x" * 20, "quantum-physicist")])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains=(
            "Subagent 'quantum-physicist' not found. Available: general, explore, plan, summary")),
             reply=Reply(text="No such agent.")),
    ])
    with FakeLLMServer(script) as server:
        result = _run(server, tmp_path, ws, "physics")
    server.assert_done()
    assert result["tasks"] == []
    (call,) = result["tool_calls"]  # type: ignore[misc]
    assert (call["name"], call["status"], call["code"]) == ("Task", "error", "NOT_FOUND")
    assert call["short_result"] == "Task delegation failed"
    (row,) = db(tmp_path).execute("SELECT code, short_result FROM tool_calls WHERE name = 'Task'").fetchall()
    assert row == ("NOT_FOUND", "Task delegation failed")


def test_the_event_lines_carry_the_error_code_with_the_event(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Slow investigation", "look around", timeout_seconds=1)])),
        Step(match=Match(system_contains="# Task\nSlow investigation"),
             reply=Reply(text="never arrives"), fault=Fault(kind="stall", after_events=0, seconds=30)),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="It timed out.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "events", "--cwd", str(ws), "investigate"],
                       cli_env("anthropic", server, tmp_path))
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    (finished,) = [e for e in lines if e.get("kind") == "tool_call_finished" and e["name"] == "Task"]
    assert (finished["code"], finished["short_result"]) == (
        "TIMEOUT", "Task failed: timed out"
    )
    assert lines[-1]["tool_calls"][0]["code"] == "TIMEOUT"


def test_timeout_keeps_partial_work(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Slow investigation", "look around", timeout_seconds=2)])),
        Step(match=Match(system_contains="# Task\nSlow investigation", turn=0),
             reply=Reply(text="Partial finding: auth lives in src/auth.py.",
                         tool_calls=[ToolCall(name="LS", input={"path": "src"})])),
        Step(match=Match(system_contains="# Task\nSlow investigation", turn=1),
             reply=Reply(text="never arrives"), fault=Fault(kind="stall", after_events=1, seconds=30),
             optional=True),
        Step(match=Match(system_contains=MAIN, turn=1,
                         last_user_contains="Subagent task timed out after 2000ms"),
             reply=Reply(text="It timed out but found auth.")),
    ])
    with FakeLLMServer(script) as server:
        result = _run(server, tmp_path, ws, "investigate")
    server.assert_done()
    (task,) = result["tasks"]  # type: ignore[misc]
    assert task["status"] == "timed_out"
    assert task["error"] == "Subagent task timed out after 2000ms"
    assert "Partial finding: auth lives in src/auth.py." in task["result"]
    assert "Partial finding" in str(server.requests[-1].body)  # the parent got the partial work


def test_long_result_is_cut_with_marker_and_full_text_in_tasks_show(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    long_answer = "".join(f"line {i:04d}: something the explorer found\n" for i in range(200))
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("List every finding", "list all findings")])),
        Step(match=Match(system_contains="# Task\nList every finding"), reply=Reply(text=long_answer, chunk_size=500)),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="TaskOutput(task_id="),
             reply=Reply(text="Got the first part.")),
    ])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path, AGENTCLI_TASK_TOOL__MAX_RESULT_TOKENS="100")
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "findings"], env)
        assert proc.returncode == 0, proc.stderr
        result = last_json(proc.stdout)
        shown = str(server.requests[-1].body)
    server.assert_done()
    (task,) = result["tasks"]  # type: ignore[misc]
    assert task["result"] == long_answer.strip() or task["result"] == long_answer
    assert "line 0199" not in shown  # cut for the parent...
    assert f"of {len(task['result'])}" in shown and "characters were left out" in shown
    show = run_cli(["tasks", "show", task["task_id"]], env)
    assert show.returncode == 0, show.stderr
    assert "line 0199: something the explorer found" in show.stdout  # ...but stored whole
