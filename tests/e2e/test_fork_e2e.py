"""Forks (issue 23, item 4) through the real CLI against the scripted fake server: a fork's first request starts
with its parent's exact prefix (system prompt, tool list, messages), a tool its type lacks is refused when called
and never runs, depth and cycles still hold, and a resumed fork finds its stored context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.subagents.fork import OWN_CALL
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.testing.fake_llm_models import RecordedRequest
from tests.e2e.helpers import MAIN, cli_env, db, last_json, run_cli

FORKED = "You are now a fork of the conversation above"


def _fork(description: str, prompt: str, subagent_type: str = "explore", **extra: object) -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": prompt, "subagent_type": subagent_type,
                                        "fork_context": True, **extra})


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "config.py").write_text("def load_config():\n    return {'debug': True}\n")
    (ws / "src" / "auth.py").write_text("def login(user):\n    return user == 'admin'\n")
    return ws


def _run(server: FakeLLMServer, tmp_path: Path, ws: Path, *args: str, api: str = "anthropic",
         **env: str) -> dict[str, Any]:
    proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), *args], cli_env(api, server, tmp_path, **env))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return last_json(proc.stdout)


def _bare(value: Any) -> Any:
    """A request part without Anthropic's cache breakpoints (they mark where a prefix ends, not what it holds)."""
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value


def _requests(server: FakeLLMServer, text: str) -> list[RecordedRequest]:
    return [r for r in server.requests if text in json.dumps(r.body)]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_forks_first_request_starts_with_its_parents_exact_prefix(api: str, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    secret = "the parent's own context: codename BLUEBIRD"
    script = Script(steps=[
        Step(match=Match(api=api, system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "src/config.py"})])),
        Step(match=Match(api=api, system_contains=MAIN, turn=1, last_user_contains="def load_config"),
             reply=Reply(text="Forking.", tool_calls=[_fork("Find the login", "Where is login defined?")])),
        Step(match=Match(api=api, system_contains=MAIN, turn=2, last_user_contains=FORKED),
             reply=Reply(tool_calls=[ToolCall(name="Grep", input={"pattern": "def login"})])),
        Step(match=Match(api=api, system_contains=MAIN, turn=3, last_user_contains="auth.py"),
             reply=Reply(text="login is at src/auth.py:1 (and BLUEBIRD is in its context).")),
        Step(match=Match(api=api, system_contains=MAIN, turn=2, last_user_contains="login is at src/auth.py:1"),
             reply=Reply(text="Done.")),
    ])
    with FakeLLMServer(script) as server:
        result = _run(server, tmp_path, ws, f"Where are config and login? ({secret})", api=api)
    server.assert_done()
    assert result["result"] == "Done."
    (task,) = result["tasks"]
    assert task["status"] == "completed" and task["inherited_messages"] == 4
    assert task["model_used"] == "main"  # the parent's model (explore's own is light): the cache is per model
    asked, fork_first, parent_after = (server.requests[i] for i in (1, 2, 4))
    assert FORKED in json.dumps(fork_first.body) and "login is at" in json.dumps(parent_after.body)
    fork_body, parent_body = fork_first.body, parent_after.body
    # The same model, system prompt and tool list, byte for byte (cache breakpoints sit at the same place).
    assert fork_body["model"] == parent_body["model"] == asked.body["model"]
    assert json.dumps(fork_body["tools"]) == json.dumps(parent_body["tools"]) == json.dumps(asked.body["tools"])
    tools = [t.get("name") or t["function"]["name"] for t in fork_body["tools"]]
    assert {"Write", "Bash", "Task"} <= set(tools)  # the parent's list, though explore may call none of them
    if api == "anthropic":
        assert json.dumps(fork_body["system"]) == json.dumps(parent_body["system"])
        opening = fork_body["messages"][-1:]  # tool results, then the fork's task, in one user message
    else:
        opening = fork_body["messages"][-2:]  # a tool message, then the fork's task as a user message
    history = fork_body["messages"][: -len(opening)]
    # The parent's messages, unchanged, from its first prompt to the assistant turn holding the Task call:
    # everything the parent sent next, but the Task call's own result.
    assert _bare(history) == _bare(parent_body["messages"][:-1]) and secret in json.dumps(history)
    assert _bare(asked.body["messages"]) == _bare(history[: len(asked.body["messages"])])
    task_call = next(c for c in _tool_uses(history[-1]) if c["name"] == "Task")
    if api == "anthropic":
        results = [b for b in opening[0]["content"] if b["type"] == "tool_result"]
        assert results == [{"type": "tool_result", "tool_use_id": task_call["id"], "content": OWN_CALL,
                            "is_error": False}]
        text = opening[0]["content"][-1]["text"]
    else:
        assert opening[0] == {"role": "tool", "tool_call_id": task_call["id"], "content": OWN_CALL}
        text = opening[1]["content"]
    assert text.startswith(FORKED) and "subagent of type explore" in text
    assert "# Task\nFind the login" in text and text.endswith("# Prompt\nWhere is login defined?")
    # The parent's own history is unaffected: the Task call's result is the fork's answer.
    assert "login is at src/auth.py:1" in json.dumps(parent_body["messages"][-1])
    assert FORKED not in json.dumps(parent_body)


def _tool_uses(message: dict[str, Any]) -> list[dict[str, Any]]:
    """An assistant message's tool calls as {id, name}, in either API's shape."""
    if isinstance(message.get("content"), list):
        return [{"id": b["id"], "name": b["name"]} for b in message["content"] if b.get("type") == "tool_use"]
    return [{"id": c["id"], "name": c["function"]["name"]} for c in message.get("tool_calls") or []]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_read_only_fork_is_refused_what_its_type_lacks_and_nothing_runs(api: str, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(api=api, system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_fork("Look around here", "Look at the code")])),
        Step(match=Match(api=api, system_contains=MAIN, last_user_contains=FORKED),
             reply=Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "pwned.txt", "content": "x"}),
                                     ToolCall(name="Bash", input={"command": "touch pwned-too"}),
                                     ToolCall(name="Read", input={"file_path": "src/auth.py"})])),
        Step(match=Match(api=api, system_contains=MAIN, last_user_contains="is not available to this fork"),
             reply=Reply(text="I may only read: login is in src/auth.py.")),
        Step(match=Match(api=api, system_contains=MAIN, last_user_contains="I may only read"),
             reply=Reply(text="Done.")),
    ])
    with FakeLLMServer(script) as server:
        result = _run(server, tmp_path, ws, "--yes", "look", api=api)  # --yes: the main agent could write
    server.assert_done()
    assert not (ws / "pwned.txt").exists() and not (ws / "pwned-too").exists()
    (task,) = result["tasks"]
    answered = json.dumps(_requests(server, "is not available to this fork")[0].body)
    allowed = "A fork sees its parent's tools but may call only its own: Read, LS, Glob, Grep, TodoWrite"
    for tool in ("Write", "Bash"):
        assert f"{tool} is not available to this fork: agent type 'explore' does not have it. {allowed}" in answered
    assert "def login(user)" in answered  # its own tools run
    with db(tmp_path) as conn:
        rows = dict(conn.execute("SELECT name, is_error FROM tool_calls WHERE session_id = ?",
                                 (task["child_session_id"],)).fetchall())
    assert rows == {"Write": 1, "Bash": 1, "Read": 0}


def test_depth_still_holds_for_a_fork(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_fork("Go one level down", "Delegate further", "general")])),
        Step(match=Match(system_contains=MAIN, last_user_contains=FORKED, tools_include=["Task"]),
             reply=Reply(tool_calls=[ToolCall(name="Task", input={
                 "description": "Go deeper still", "prompt": "deeper", "subagent_type": "explore"})])),
        Step(match=Match(system_contains=MAIN, last_user_contains="Maximum sub-agent depth exceeded (max_depth=1)"),
             reply=Reply(text="Cannot delegate from here.")),
        Step(match=Match(system_contains=MAIN, last_user_contains="Cannot delegate from here."),
             reply=Reply(text="Done.")),
    ])
    with FakeLLMServer(script) as server:
        result = _run(server, tmp_path, ws, "go", AGENTCLI_TASK_TOOL__MAX_DEPTH="1")
    server.assert_done()
    assert [t["depth"] for t in result["tasks"]] == [1]  # the fork's own Task call never started a task
    (refused,) = [r for r in server.requests if r.step_index == 2]
    assert "Task is not available to this fork: Maximum sub-agent depth exceeded (max_depth=1)" in json.dumps(
        refused.body)


def test_an_agent_files_fork_is_refused_a_cycle_and_resumes_from_its_stored_context(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    agents = ws / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    (agents / "twin.md").write_text("---\nname: twin\ndescription: Works beside you.\nfork_context: true\n---\n"
                                    "You are the twin.\n")
    cycle = "Circular delegation prevented: main → twin → twin"
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Task", input={
                 "description": "Work beside me", "prompt": "Take half of it", "subagent_type": "twin"})])),
        Step(match=Match(system_contains=MAIN, last_user_contains=FORKED),
             reply=Reply(tool_calls=[ToolCall(name="Task", input={
                 "description": "Another twin", "prompt": "the other half", "subagent_type": "twin"})])),
        Step(match=Match(system_contains=MAIN, last_user_contains=cycle), reply=Reply(text="Half done alone.")),
        Step(match=Match(system_contains=MAIN, last_user_contains="Half done alone."), reply=Reply(text="Done.")),
    ])
    with FakeLLMServer(script) as server:
        first = _run(server, tmp_path, ws, "split the work")
        server.assert_done()
        (task,) = first["tasks"]
        assert task["inherited_messages"] == 2 and task["status"] == "completed"
        # A later run resumes the fork: its stored context (the parent's messages it started from, then its
        # own) is sent, valid, with its type's system prompt now (a resume goes on from its own conversation).
        server.add_steps(
            Step(match=Match(system_contains=MAIN, last_user_contains="Go on"),
                 reply=Reply(tool_calls=[ToolCall(name="Task", input={
                     "description": "Finish the work", "prompt": "Finish it", "subagent_type": "twin",
                     "resume": task["task_id"]})])),
            Step(match=Match(system_contains="You are the twin.", last_user_contains="Finish it"),
                 reply=Reply(text="Finished.")),
            Step(match=Match(system_contains=MAIN, last_user_contains="Finished."), reply=Reply(text="All done.")),
        )
        second = _run(server, tmp_path, ws, "--resume", first["session_id"], "Go on")
    server.assert_done()
    assert second["result"] == "All done."
    resumed = json.dumps(_requests(server, "Finish it")[0].body["messages"])
    for said in ("split the work", OWN_CALL, "Take half of it", cycle, "Half done alone.", "Finish it"):
        assert json.dumps(said)[1:-1] in resumed
    with db(tmp_path) as conn:
        shown = conn.execute("SELECT inherited_messages, description FROM tasks WHERE task_id = ?",
                             (task["task_id"],)).fetchone()
    assert shown == (2, "Work beside me")
    proc = run_cli(["tasks", "show", task["task_id"]], cli_env("anthropic", server, tmp_path))
    assert "fork:" in proc.stdout and "yes: it started from its parent's 2 messages" in proc.stdout
    assert "its first 2 messages, its parent's conversation, are not shown" in proc.stdout
    assert "split the work" not in proc.stdout.split("Transcript")[1]
