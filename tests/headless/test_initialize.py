"""The settings a program sends in its `initialize` request (`headless.init_fields`), written to agentcli's standard
input as the TypeScript Claude Agent SDK writes them, against the scripted fake server: each one honoured with its
flag's meaning, or one warning line that says why not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import cli_env

pytestmark = pytest.mark.e2e  # agentcli end to end (the fast loop, `-m "not e2e and not terminal"`, leaves it out)

INITIALIZE: dict[str, Any] = {
    "subtype": "initialize",
    "systemPrompt": ["PART-ONE You are the test role.", "PART-TWO Be brief."],
    "appendSystemPrompt": "APPENDED-NOTE",
    "settings": {"permissions": {"defaultMode": "plan", "deny": ["WebFetch"]},
                 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                     {"type": "command", "command": "echo blocked-by-settings >&2; exit 2"}]}]}},
    "disallowedTools": ["TodoWrite"],
    "appendSubagentSystemPrompt": "SUBAGENT-APPEND-NOTE",
    "mcpServers": {"bad name!": {"command": "true"}},
    "sdkMcpServerManifests": {},
    "forwardSubagentText": True,  # what agentcli does: no warning
    "supportedDialogKinds": [],  # asks nothing of agentcli: no warning
    "promptSuggestions": True,
    "plugins": [{"type": "local", "path": "/nowhere"}],
    "perTaskStopAffordance": True,
    "brandNewField": 1,
}


def test_initialize_settings_shape_the_session_and_the_rest_are_warned_about(tmp_path: Path) -> None:
    task = ToolCall(name="Task", id="toolu_task", input={"subagent_type": "explore", "description": "Find it",
                                                          "prompt": "Find the notes"})
    script = Script(steps=[
        Step(match=Match(system_contains="PART-ONE You are the test role.\n\nPART-TWO Be brief.", turn=0,
                         tools_exclude=["TodoWrite"], tools_include=["Task", "Read"]),
             reply=Reply(tool_calls=[task])),
        Step(match=Match(system_contains="SUBAGENT-APPEND-NOTE"), reply=Reply(text="Found them.")),
        Step(match=Match(system_contains="APPENDED-NOTE", turn=1, last_user_contains="Found them."),
             reply=Reply(tool_calls=[ToolCall(name="Bash", id="toolu_bash", input={"command": "ls"})])),
        Step(match=Match(turn=2, last_user_contains="blocked-by-settings"), reply=Reply(text="Done.")),
    ])
    lines = [{"type": "control_request", "request_id": "init", "request": INITIALIZE},
             {"type": "user", "message": {"role": "user", "content": "go"}, "parent_tool_use_id": None,
              "session_id": ""}]
    (tmp_path / "ws").mkdir()
    with FakeLLMServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "--output-format", "stream-json", "--verbose", "--input-format",
             "stream-json", "--permission-mode", "bypassPermissions", "--await-initialize",
             "--initialize-fields=settings,disallowedTools"],
            input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True, text=True,
            env=cli_env("anthropic", server, tmp_path / "home"), cwd=tmp_path / "ws", timeout=120)
        server.assert_done()
        main_system = json.dumps(server.requests[0].body["system"])
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    (answer,) = [o["response"] for o in out if o["type"] == "control_response"]
    applied = {k: v for k, v in answer["response"].items() if k.endswith(("_applied", "_supported"))}
    assert applied == {"settings_applied": True, "disallowed_tools_applied": True, "mcp_servers_applied": True,
                       "plugins_applied": False, "hook_on_failure_supported": True}
    assert "You are agentcli, a coding assistant" not in main_system  # the role is the program's
    init = next(o for o in out if o.get("subtype") == "init")
    assert init["permissionMode"] == "bypassPermissions"  # the flag's mode stands over the settings' defaultMode
    assert "TodoWrite" not in init["tools"] and out[-1]["result"] == "Done."
    warnings = [line.removeprefix("agentcli: warning: ") for line in proc.stderr.splitlines()]
    assert warnings == [
        "MCP server 'bad name!' in initialize (mcpServers): a server name is 1-32 letters, digits, '_' or '-', "
        "starting with a letter or digit; skipped",
        "initialize: plugins: plugin /nowhere: not found (No such file or directory)",
        "initialize: promptSuggestions is not honoured: agentcli suggests no next prompts",
        "initialize: perTaskStopAffordance=true is not honoured: agentcli's is false",
        "initialize: brandNewField is not a field agentcli knows; ignored",
    ]


def test_an_initialize_with_a_field_of_the_wrong_shape_is_an_error_answer(tmp_path: Path) -> None:
    lines = [{"type": "control_request", "request_id": "init",
              "request": {"subtype": "initialize", "systemPrompt": 42}}]
    with FakeLLMServer(Script(steps=[])) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "--output-format", "stream-json", "--verbose", "--input-format",
             "stream-json"], input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True,
            text=True, env=cli_env("anthropic", server, tmp_path / "home"), cwd=tmp_path, timeout=120)
    (answer,) = [json.loads(line)["response"] for line in proc.stdout.splitlines() if "control_response" in line]
    assert answer == {"subtype": "error", "request_id": "init",
                      "error": "initialize: systemPrompt must be a string or a list of strings"}
    assert "Traceback" not in proc.stderr
