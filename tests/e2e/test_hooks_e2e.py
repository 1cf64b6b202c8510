"""Claude Code hooks through the real CLI and the fake server: a PreToolUse hook blocks Bash with a reason the
model reads, a SubagentStop hook gets the task's record, and an untrusted project's hooks never run."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, db, last_json, run_cli

REASON = "no shell commands in this repository: use the Read tool"


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _claude_settings(where: Path, hooks: dict[str, Any]) -> None:
    where.mkdir(parents=True, exist_ok=True)
    (where / "settings.json").write_text(json.dumps({"model": "ignored-by-agentcli", "hooks": hooks}))


def _run(server: FakeLLMServer, home: Path, ws: Path, *args: str) -> tuple[dict[str, Any], str]:
    proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), *args],
                   cli_env("anthropic", server, home, HOME=str(home)))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return last_json(proc.stdout), proc.stderr


def test_a_pre_tool_use_hook_blocks_bash_and_the_model_reads_its_reason(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    seen = tmp_path / "pre_input.json"
    hook = _script(tmp_path / "guard.sh", f'cat > {seen}\necho "{REASON}" >&2\nexit 2\n')
    _claude_settings(home / ".claude", {"PreToolUse": [{"matcher": "Bash|Write", "hooks": [
        {"type": "command", "command": str(hook), "timeout": 30}]}]})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": "touch ran.txt"})])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains=REASON),
             reply=Reply(text="The hook refused the command.")),
    ])
    with FakeLLMServer(script) as server:
        result, stderr = _run(server, home, ws, "--yes", "--verbose", "make a file")
    server.assert_done()
    assert result["result"] == "The hook refused the command."
    assert not (ws / "ran.txt").exists(), "a blocked call never runs, even with --yes"
    # the reason reaches the model as the call's error result in the next request
    blocked = server.requests[-1].body["messages"][-1]["content"][0]
    assert blocked["type"] == "tool_result" and blocked["is_error"] is True
    assert f"Blocked by a PreToolUse hook: {REASON}" in str(blocked["content"])
    given = json.loads(seen.read_text())
    assert given["hook_event_name"] == "PreToolUse" and given["tool_name"] == "Bash"
    assert given["tool_input"] == {"command": "touch ran.txt"} and given["cwd"] == str(ws)
    assert given["session_id"] == result["session_id"] and given["permission_mode"] == "bypassPermissions"
    assert "agentcli: hook PreToolUse [Bash] " in stderr and f"→ blocked exit 2: {REASON}" in stderr  # --verbose
    rows = db(home).execute("SELECT event, tool_name, outcome, exit_code, reason, session_id FROM hook_runs").fetchall()
    assert rows == [("PreToolUse", "Bash", "blocked", 2, REASON, result["session_id"])]


def test_a_subagent_stop_hook_receives_the_task_record(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "notes.txt").write_text("the answer is 42\n")
    seen = tmp_path / "stop_input.json"
    config = home / "config" / "agentcli"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(
        '[[hooks.SubagentStop]]\nmatcher = "explore"\n'
        f'hooks = [{{ type = "command", command = "cat > {seen}" }}]\n'
    )
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[ToolCall(name="Task", input={
            "description": "Read the notes", "prompt": "What does notes.txt say?", "subagent_type": "explore"})])),
        Step(match=Match(system_contains="# Task\nRead the notes", turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "notes.txt"})])),
        Step(match=Match(system_contains="# Task\nRead the notes", turn=1), reply=Reply(text="It says 42.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="The notes say 42.")),
    ])
    with FakeLLMServer(script) as server:
        result, _ = _run(server, home, ws, "what do the notes say?")
    server.assert_done()
    (task,) = result["tasks"]
    given = json.loads(seen.read_text())
    assert given["hook_event_name"] == "SubagentStop"
    assert given["session_id"] == result["session_id"]  # the parent's session
    assert (given["task_id"], given["agent_id"], given["agent_type"]) == (task["task_id"],) * 2 + ("explore",)
    assert (given["status"], given["result"], given["error"]) == ("completed", "It says 42.", None)
    record = given["task"]
    assert record["task_id"] == task["task_id"] and record["subagent_type"] == "explore"
    assert record["status"] == "completed" and record["result"] == "It says 42."
    assert record["tool_summary"] == [{"tool": "Read", "count": 1}] and record["description"] == "Read the notes"


def test_an_untrusted_projects_hooks_never_run_until_it_is_trusted(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    marker = tmp_path / "ran.txt"
    _claude_settings(ws / ".claude", {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": f"echo ran >> {marker}"}]}]})

    def once(*args: str) -> str:
        script = Script(steps=[Step(match=Match(system_contains=MAIN), reply=Reply(text="done"))])
        with FakeLLMServer(script) as server:
            _, stderr = _run(server, home, ws, *args, "hello")
        return stderr

    stderr = once()
    assert not marker.exists()
    assert "not run: the workspace is not trusted" in stderr
    once("--trust")
    assert marker.read_text() == "ran\n"


def test_a_user_prompt_submit_hook_blocks_the_prompt_before_any_request(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    guard = _script(tmp_path / "no-secrets.sh", 'grep -q password && { echo "prompt names a password" >&2; exit 2; }\n'
                    'echo "Context: the tests live in tests/"\n')
    _claude_settings(home / ".claude", {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": str(guard)}]}]})
    context = "Context: the tests live in tests/"
    script = Script(steps=[Step(match=Match(system_contains=MAIN, last_user_contains=context), reply=Reply(text="ok"))])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--cwd", str(ws), "my password is hunter2"], cli_env("anthropic", server, home,
                                                                                  HOME=str(home)))
        assert proc.returncode == 1 and server.requests == []
        assert "agentcli: prompt blocked by a UserPromptSubmit hook: prompt names a password" in proc.stderr
        result, _ = _run(server, home, ws, "where are the tests?")  # plain stdout is context for the model
    server.assert_done()
    assert result["result"] == "ok"
