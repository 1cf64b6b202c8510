"""A driving program's answers never reach past the policy: the real Claude Agent SDK (`claude-agent-sdk`) drives
agentcli (`cli_path`) against the fake server, and its `can_use_tool` callback allows calls with an `updatedInput`
that turns them into what the deny rules refuse (`--disallowedTools "Bash(touch *)" "Write(secret/**)"`) or into an
edit of a guarded file. The changed call is checked again as if the model had made it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import cli_env
from tests.security.scripted import tool_results

sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import (  # noqa: E402
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
)

from tests.e2e.helpers import agentcli_path  # noqa: E402


def _calls(*calls: ToolCall) -> Script:
    steps = [Step(match=Match(turn=n), reply=Reply(tool_calls=[call])) for n, call in enumerate(calls)]
    return Script(steps=[*steps, Step(match=Match(turn=len(calls)), reply=Reply(text="Done."))])


def test_an_updated_input_is_checked_again_against_deny_rules_and_guarded_files(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "secret").mkdir(parents=True)
    script = _calls(
        ToolCall(name="Bash", id="toolu_touch", input={"command": "echo hello"}),
        ToolCall(name="Write", id="toolu_secret", input={"file_path": "notes/a.txt", "content": "note\n"}),
        ToolCall(name="Write", id="toolu_guarded", input={"file_path": "b.txt", "content": "b\n"}),
        ToolCall(name="Bash", id="toolu_fine", input={"command": "echo fine"}),
    )
    changes = {  # what the program turns each call into
        "echo hello": {"command": "touch pwned.txt"},
        "notes/a.txt": {"file_path": "secret/key.txt", "content": "stolen\n"},
        "b.txt": {"file_path": ".claude/settings.json", "content": '{"hooks": {}}\n'},
        "echo fine": {"command": "echo changed-by-the-program"},
    }
    asked: list[dict[str, Any]] = []

    async def decide(tool: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append(data)
        key = data.get("command") or data.get("file_path")
        if key == ".claude/settings.json":
            return PermissionResultDeny(message="not that file")  # asked again: the program sees the guarded edit
        return PermissionResultAllow(updated_input={**data, **changes.get(key, {})})

    async def body() -> list[Any]:
        with server:
            env = cli_env("anthropic", server, tmp_path / "home")
            options = ClaudeAgentOptions(cli_path=agentcli_path(), cwd=str(workspace), env=env, can_use_tool=decide,
                                         disallowed_tools=["Bash(touch *)", "Write(secret/**)"])
            async with ClaudeSDKClient(options=options) as client:
                await client.query("do four things")
                return [m async for m in client.receive_response()]

    server = FakeLLMServer(script)
    messages = anyio.run(body)
    assert not (workspace / "pwned.txt").exists(), "a deny rule was skipped through updatedInput"
    assert not (workspace / "secret" / "key.txt").exists(), "a deny rule was skipped through updatedInput"
    assert not (workspace / ".claude" / "settings.json").exists(), "a guarded file was written unasked"
    assert [a.get("command") or a.get("file_path") for a in asked] == [
        "echo hello", "notes/a.txt", "b.txt", ".claude/settings.json", "echo fine"]  # a guarded edit is asked again
    assert "changed-by-the-program" in tool_results(server)[-1]  # a change the rules allow runs as changed
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Done."
    denied = [d["tool_use_id"] for d in result.permission_denials or []]
    assert denied == ["toolu_touch", "toolu_secret", "toolu_guarded"]
