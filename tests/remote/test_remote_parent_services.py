"""What a remote subagent gets from its parent, through the real CLI on a real Ray: the parent's MCP server (the real
`mcp-server-time` from PyPI, a process of the parent's) serves the subagent's call, and the person's PreToolUse hook
(a command of the parent's machine) blocks its Bash call with the reason the subagent's model reads."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, db, git, last_json, run_cli
from tests.remote.helpers import ray_env, repo

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
pytest.importorskip("mcp_server_time")

TOOL = "mcp__time__get_current_time"
REASON = "no shell commands from remote subagents"
SUB = "# Task\nAsk the clock"


def test_a_remote_subagent_calls_the_parents_mcp_server_and_the_parents_hook_blocks_its_bash(cluster: Any,
                                                                                              tmp_path: Path) -> None:
    ws, home = repo(tmp_path), tmp_path / "home"
    (ws / ".claude" / "agents").mkdir(parents=True)
    (ws / ".claude" / "agents" / "clock.md").write_text(
        f"---\nname: clock\ndescription: Tells the time.\ntools: Read, Bash, {TOOL}\nisolation: remote\n---\n"
        "You tell the time.\n")
    seen, pid_file = tmp_path / "hook_input.json", tmp_path / "server.pid"
    hook = tmp_path / "guard.sh"
    hook.write_text(f'#!/usr/bin/env bash\ncat > {seen}\necho "{REASON}" >&2\nexit 2\n')
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    server_script = f'echo $$ > "{pid_file}"; exec "{sys.executable}" -m mcp_server_time --local-timezone UTC'
    config = home / "config" / "agentcli"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(
        f'[mcp.servers.time]\ncommand = "sh"\nargs = ["-c", {json.dumps(server_script)}]\n\n'
        f'[[hooks.PreToolUse]]\nmatcher = "Bash"\nhooks = [{{ type = "command", command = "{hook}" }}]\n')
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[ToolCall(name="Task", input={
            "description": "Ask the clock", "prompt": "What time is it in UTC?", "subagent_type": "clock"})])),
        Step(match=Match(system_contains=SUB, turn=0, tools_exclude=[TOOL]),  # deferred, as for a local subagent
             reply=Reply(tool_calls=[ToolCall(name="ToolSearch", input={"query": "select:" + TOOL})])),
        Step(match=Match(system_contains=SUB, turn=1, tools_include=[TOOL]),
             reply=Reply(tool_calls=[ToolCall(name=TOOL, input={"timezone": "UTC"})])),
        Step(match=Match(system_contains=SUB, turn=2, last_user_contains="day_of_week"),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": "touch ran.txt"})])),
        Step(match=Match(system_contains=SUB, turn=3, last_user_contains=REASON),
             reply=Reply(text="Tuesday-ish in UTC; the shell was refused.")),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="Tuesday-ish"), reply=Reply(text="Done.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "time?"],
                       {**ray_env(server, tmp_path, cluster), "XDG_CONFIG_HOME": str(home / "config"),
                        "XDG_DATA_HOME": str(home / "data")}, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    server.assert_done()
    result = last_json(proc.stdout)
    (task,) = result["tasks"]
    assert task["status"] == "completed" and {"tool": TOOL, "count": 1} in task["tool_summary"]
    mcp_answer = json.dumps(server.requests[3].body["messages"][-1])
    assert "mcp_result server=" in mcp_answer and "day_of_week" in mcp_answer  # the parent's server answered
    given = json.loads(seen.read_text())
    assert (given["hook_event_name"], given["tool_name"], given["tool_input"]) == (
        "PreToolUse", "Bash", {"command": "touch ran.txt"})
    assert given["cwd"] == str(ws)  # run by the parent, in the person's workspace
    rows = db(home).execute("SELECT event, tool_name, outcome, reason FROM hook_runs").fetchall()
    assert rows == [("PreToolUse", "Bash", "blocked", REASON)]  # reported like a local subagent's hook run
    assert not (ws / "ran.txt").exists() and git(ws, "status", "--porcelain") == "?? .claude/"


def test_messages_reach_a_running_remote_subagent_and_its_messages_reach_the_parent(cluster: Any,
                                                                                      tmp_path: Path) -> None:
    import threading
    import time

    from tests.remote.helpers import ancestor_worker, kill_marked

    ws = repo(tmp_path)
    marker = "sleep 8.642"
    label = "general#1"
    task = ToolCall(name="Task", input={"description": "Slow work", "prompt": "Do the slow work", "isolation": "remote",
                                        "subagent_type": "general", "run_in_background": True})
    slow = "# Task\nSlow work"
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        Step(match=Match(system_contains=slow, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": marker})])),
        Step(match=Match(system_contains=MAIN, turn=1), hold="send", reply=Reply(tool_calls=[ToolCall(
            name="SendMessage", input={"to": label, "message": "please also write notes.txt"})])),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(tool_calls=[ToolCall(
            name="TaskOutput", input={"task_id": label, "wait_seconds": 120})])),
        Step(match=Match(system_contains=slow, turn=1, last_user_contains="please also write notes.txt"),
             reply=Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "notes.txt", "content": "notes\n"}),
                                     ToolCall(name="SendMessage", input={"to": "parent",
                                                                         "message": "notes are coming"})])),
        Step(match=Match(system_contains=slow, turn=2), reply=Reply(text="Notes written.")),
        Step(match=Match(system_contains=MAIN, turn=3, last_user_contains="notes are coming"),
             reply=Reply(text="Done.")),
    ])

    def release_when_running() -> None:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and ancestor_worker(marker) is None:
            time.sleep(0.2)
        server.release("send")

    with FakeLLMServer(script) as server:
        threading.Thread(target=release_when_running, daemon=True).start()
        try:
            proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "go"],
                           {**ray_env(server, tmp_path, cluster), "AGENTCLI_TOOLS__DEFER": "none"}, timeout=240)
        finally:
            server.release("send")
            kill_marked(marker)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    result = last_json(proc.stdout)
    assert result["result"] == "Done."
    (record,) = result["tasks"]
    assert (record["status"], record["merge"]) == ("completed", "merged")
    assert (ws / "notes.txt").read_text() == "notes\n"  # it acted on the letter it got while it ran


def test_a_remote_subagent_loads_a_skill_from_the_parents_catalog(cluster: Any, tmp_path: Path) -> None:
    ws = repo(tmp_path)
    skill = ws / ".claude" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: How to greet.\n---\nSay bonjour, twice.\n")
    task = ToolCall(name="Task", input={"description": "Greet them", "prompt": "Greet", "isolation": "remote",
                                        "subagent_type": "general"})
    sub = "# Task\nGreet them"
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        Step(match=Match(system_contains=sub, turn=0, tools_include=["Skill"]),
             reply=Reply(tool_calls=[ToolCall(name="Skill", input={"skill": "greet"})])),
        Step(match=Match(system_contains=sub, turn=1, last_user_contains="Say bonjour, twice."),
             reply=Reply(text="Bonjour, bonjour.")),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="Bonjour, bonjour."),
             reply=Reply(text="Done.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--trust", "--output-format", "json", "--cwd", str(ws), "greet"],
                       {**ray_env(server, tmp_path, cluster), "AGENTCLI_TOOLS__DEFER": "none"}, timeout=240)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    offered = next(t for t in server.requests[1].body["tools"] if t["name"] == "Skill")
    assert "greet: How to greet." in offered["description"]  # the parent's catalog, listed on the worker
    assert last_json(proc.stdout)["result"] == "Done."
