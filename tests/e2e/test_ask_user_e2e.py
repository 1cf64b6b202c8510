"""AskUserQuestion end to end: `agentcli run` has no one to ask (a refusal the model acts on), and Claude Code's
headless mode asks the driving program through the real Claude Agent SDK's `can_use_tool`."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, agentcli_path, cli_env, last_json, run_cli

LIBRARY = {"question": "Which date library should we use?", "header": "Library",
           "options": [{"label": "date-fns", "description": "small, functional"},
                       {"label": "luxon", "description": "time zones built in"}]}
FEATURES = {"question": "Which features do you want?", "header": "Features", "multiSelect": True,
            "options": [{"label": "Dark mode", "description": "a second theme"},
                        {"label": "Search", "description": "find anything"},
                        {"label": "Export", "description": "to CSV"}]}
ASK = ToolCall(name="AskUserQuestion", id="toolu_ask", input={"questions": [LIBRARY, FEATURES]})


def _last_tool_result(server: FakeLLMServer) -> str:
    last = server.requests[-1].body["messages"][-1]
    (result,) = [b for b in last["content"] if b.get("type") == "tool_result"]
    content = result["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def test_a_one_shot_run_refuses_the_question_and_the_model_goes_on(tmp_path: Path) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[ASK])),
        Step(match=Match(turn=1, last_user_contains="No person is available to answer questions"),
             reply=Reply(text="Assuming luxon.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "add dates", "--output-format", "json"], cli_env("anthropic", server, tmp_path),
                       cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = last_json(proc.stdout)
    assert (result["status"], result["result"]) == ("completed", "Assuming luxon.")
    (call,) = result["tool_calls"]
    assert (call["name"], call["status"], call["code"]) == ("AskUserQuestion", "error", "permission_denied")
    assert "decide yourself" in _last_tool_result(server).lower()
    server.assert_done()


sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import (  # noqa: E402
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
)

Decide = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[Any]]


def _headless(tmp_path: Path, script: Script, decide: Decide) -> tuple[list[Any], FakeLLMServer]:
    """One turn of a ClaudeSDKClient session against agentcli (the SDK's `cli_path`), `decide` its can_use_tool."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with FakeLLMServer(script) as server:
        options = ClaudeAgentOptions(cli_path=agentcli_path(), cwd=str(workspace),
                                     env=cli_env("anthropic", server, tmp_path / "home"), can_use_tool=decide)

        async def body() -> list[Any]:
            async with ClaudeSDKClient(options=options) as client:
                await client.query("add dates")
                return [m async for m in client.receive_response()]

        messages = anyio.run(body)
    server.assert_done()
    return messages, server


def test_headless_asks_the_program_and_its_answers_reach_the_model(tmp_path: Path) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ASK])),
        Step(match=Match(turn=1, last_user_contains='(Library): "luxon"'), reply=Reply(text="Luxon, with search.")),
    ])
    asked: list[tuple[str, dict[str, Any], str | None]] = []

    async def decide(tool: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append((tool, data, context.tool_use_id))
        answers = {LIBRARY["question"]: "luxon", FEATURES["question"]: "Search, Export"}
        return PermissionResultAllow(updated_input={**data, "answers": answers})

    messages, server = _headless(tmp_path, script, decide)
    ((tool, data, tool_use_id),) = asked
    assert (tool, tool_use_id) == ("AskUserQuestion", "toolu_ask")
    assert [q["question"] for q in data["questions"]] == [LIBRARY["question"], FEATURES["question"]]
    assert data["questions"][1]["multiSelect"] is True and data["questions"][0]["options"][1]["label"] == "luxon"
    assert _last_tool_result(server).splitlines()[1:3] == [
        '- "Which date library should we use?" (Library): "luxon"',
        '- "Which features do you want?" (Features): "Search", "Export"']
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Luxon, with search." and not result.is_error


def test_headless_deny_is_a_refusal_with_the_programs_message(tmp_path: Path) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ASK])),
        Step(match=Match(turn=1, last_user_contains="pick whatever you like"), reply=Reply(text="date-fns then.")),
    ])

    async def decide(tool: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        return PermissionResultDeny(message="pick whatever you like")

    messages, server = _headless(tmp_path, script, decide)
    last = json.dumps(server.requests[-1].body["messages"][-1])
    assert '"is_error": true' in last and _last_tool_result(server) == "pick whatever you like"
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "date-fns then."
    assert [d["tool_name"] for d in result.permission_denials] == ["AskUserQuestion"]
