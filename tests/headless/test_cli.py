"""`agentcli` with Claude Code's headless flags and no command, run as a person (or CI) runs `claude -p`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from tests.e2e.helpers import cli_env, run_cli

pytestmark = pytest.mark.e2e  # agentcli end to end (the fast loop, `-m "not e2e and not terminal"`, leaves it out)


def test_print_mode_answers_with_json_and_honours_the_flags(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "CLAUDE.md").write_text("PROJECT-MEMORY-MARKER\n")
    script = Script(steps=[Step(
        match=Match(system_contains="Answer tersely.", tools_exclude=["Bash", "Write"], tools_include=["Read"]),
        reply=Reply(text="Terse answer."))])
    with FakeLLMServer(script) as server:
        proc = run_cli(["-p", "what is here?", "--output-format", "json", "--append-system-prompt", "Answer tersely.",
                        "--tools", "Read,Grep", "--setting-sources", "user", "--add-dir", "..",
                        "--effort", "low", "--cwd", str(workspace)], cli_env("anthropic", server, tmp_path / "home"))
        system, thinking = server.requests[0].body["system"], server.requests[0].body.get("thinking")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (result["type"], result["subtype"], result["result"]) == ("result", "success", "Terse answer.")
    text = json.dumps(system)
    assert "You are agentcli, a coding assistant" in text  # no --system-prompt: agentcli's own role
    assert "PROJECT-MEMORY-MARKER" not in text  # --setting-sources without project: no CLAUDE.md
    assert "--add-dir" not in proc.stderr  # honoured: the folder is an additional directory, named to the model
    assert f"Additional directories: {tmp_path.resolve()}" in text
    assert thinking == {"type": "enabled", "budget_tokens": 2048}  # --effort low, as a Task call's effort


def test_a_bad_flag_is_one_line_and_a_json_error_result(tmp_path: Path) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        proc = run_cli(["-p", "x", "--output-format", "stream-json", "--verbose", "--permission-mode", "yolo"],
                       cli_env("anthropic", server, tmp_path / "home"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "agentcli: --permission-mode 'yolo' is not one of default, acceptEdits, plan, bypassPermissions, dontAsk"]
    result = json.loads(proc.stdout)
    assert (result["type"], result["is_error"]) == ("result", True) and "Traceback" not in proc.stderr


def test_bad_control_requests_get_error_answers_and_the_session_goes_on(tmp_path: Path) -> None:
    lines = [
        {"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize", "hooks": None}},
        {"type": "control_request", "request_id": "r2", "request": {"subtype": "rewind_files"}},
        {"type": "control_request", "request_id": "r3", "request": {"subtype": "set_permission_mode", "mode": "yolo"}},
        {"type": "control_request", "request_id": "r4", "request": {"subtype": "no_such_request"}},
        {"type": "control_request", "request_id": "r5",
         "request": {"subtype": "rewind_files", "user_message_id": "u-1", "dry_run": True}},
        "{not json",
        {"type": "user", "message": {"role": "user", "content": "still there?"}},
    ]
    stdin = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    script = Script(steps=[Step(match=Match(last_user_contains="still there?"), reply=Reply(text="Yes."))])
    with FakeLLMServer(script) as server:
        proc = subprocess.run([sys.executable, "-m", "agentcli", "--output-format", "stream-json", "--verbose",
                               "--input-format", "stream-json"], input=stdin, capture_output=True, text=True,
                              env=cli_env("anthropic", server, tmp_path / "home"), cwd=tmp_path, timeout=120)
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    answers = {o["response"]["request_id"]: o["response"] for o in out if o["type"] == "control_response"}
    assert answers["r1"]["subtype"] == "success" and answers["r1"]["response"]["pid"] > 0
    assert answers["r2"] == {"subtype": "error", "request_id": "r2",
                             "error": "rewind_files needs a user_message_id (the uuid of a user message)"}
    assert answers["r4"]["error"] == "Unsupported control request subtype: no_such_request"
    assert answers["r5"] == {"subtype": "success", "request_id": "r5",  # a dry run answers; file checkpointing off
                             "response": {"canRewind": False, "error": "File rewinding is not enabled."}}
    assert answers["r3"]["subtype"] == "error" and "Invalid permission mode 'yolo'" in answers["r3"]["error"]
    assert "agentcli: standard input line 6: not JSON" in proc.stderr and "Traceback" not in proc.stderr
    result = out[-1]
    assert (result["type"], result["result"]) == ("result", "Yes.")
    assert proc.returncode == 0  # the last turn completed


def test_the_fallback_model_answers_when_the_main_one_is_overloaded(tmp_path: Path) -> None:
    from agentcli.testing.fake_llm import Fault

    script = Script(steps=[
        Step(match=Match(model="claude-sonnet-5-5"),
             fault=Fault(kind="http", status=529, error_type="overloaded_error")),
        Step(match=Match(model="claude-haiku-5-5"), reply=Reply(text="The light model answered.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["-p", "hello", "--output-format", "json", "--model", "claude-sonnet-5-5",
                        "--fallback-model", "haiku"], cli_env("anthropic", server, tmp_path / "home"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["result"] == "The light model answered."
    assert "going on with haiku" in proc.stderr


def test_replayed_user_messages_and_agents_from_the_command_line(tmp_path: Path) -> None:
    agents = {"critic": {"description": "Finds faults", "prompt": "CRITIC-ROLE Find faults.", "tools": ["Read"]}}
    script = Script(steps=[
        Step(match=Match(last_user_contains="which agents?"), reply=Reply(text="The critic is there."))])
    user = {"type": "user", "message": {"role": "user", "content": "which agents?"}, "uuid": "u-1"}
    with FakeLLMServer(script) as server:
        argv = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                "--replay-user-messages", "--agents", json.dumps(agents)]
        proc = subprocess.run([sys.executable, "-m", "agentcli", *argv], input=json.dumps(user) + "\n",
                              capture_output=True, text=True, env=cli_env("anthropic", server, tmp_path / "home"),
                              cwd=tmp_path, timeout=120)
        task = next(tool for tool in server.requests[0].body["tools"] if tool["name"] == "Task")
    assert proc.returncode == 0, proc.stderr
    assert "- critic (inherit, read-only): Finds faults" in task["description"]
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    replayed = next(o for o in out if o["type"] == "user")
    assert (replayed["uuid"], replayed["isReplay"], replayed["message"]["content"]) == ("u-1", True, "which agents?")
    init = next(o for o in out if o.get("subtype") == "init")
    assert "critic" in init["agents"] and out[-1]["result"] == "The critic is there."
