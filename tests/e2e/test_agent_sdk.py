"""The real Claude Agent SDK (`claude-agent-sdk` from PyPI) drives agentcli: `ClaudeAgentOptions(cli_path=<agentcli>)`
spawns agentcli with Claude Code's headless flags and speaks stream-json plus the control protocol to it, against
the scripted fake server. The SDK's wheel bundles Claude Code's own binary: `cli_path` always names agentcli's
console script, so that binary never runs here.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import cli_env

sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    query,
)

SDK_ROLE = "You are agentcli, a coding agent run by a program"  # `--system-prompt ""`: the SDK's default role


def agentcli_path() -> str:
    """This venv's `agentcli` console script (never Claude Code's binary)."""
    found = Path(sys.executable).with_name("agentcli")
    path = str(found) if found.exists() else shutil.which("agentcli")
    assert path, "the agentcli console script is not installed"
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("first line\n")
    return ws


@pytest.fixture
def run_sdk(tmp_path: Path, workspace: Path) -> Iterator[Callable[..., Any]]:
    """Serve a script and run an SDK coroutine against agentcli; returns what the coroutine returns."""
    servers: list[FakeLLMServer] = []

    def run(script: Script, body: Callable[[ClaudeAgentOptions, FakeLLMServer], Awaitable[Any]], **options: Any) -> Any:
        server = FakeLLMServer(script)
        server.__enter__()
        servers.append(server)
        env = cli_env("anthropic", server, tmp_path / "home")
        opts = ClaudeAgentOptions(cli_path=agentcli_path(), cwd=str(workspace), env=env, **options)
        return anyio.run(body, opts, server)

    yield run
    for server in servers:
        server.__exit__(None, None, None)


def test_query_returns_init_the_answer_and_a_success_result(run_sdk: Callable[..., Any]) -> None:
    script = Script(steps=[Step(match=Match(system_contains=SDK_ROLE, turn=0, last_user_contains="Say hello"),
                                reply=Reply(text="Hello from agentcli."))])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> list[Any]:
        return [m async for m in query(prompt="Say hello", options=opts)]

    messages = run_sdk(script, body)
    init, answer, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["permissionMode"] == "default" and "Read" in init.data["tools"]
    assert isinstance(answer, AssistantMessage) and answer.content == [TextBlock(text="Hello from agentcli.")]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result, result.num_turns) == (
        "success", False, "Hello from agentcli.", 1)
    assert result.terminal_reason == "completed" and result.permission_denials == []


def test_a_client_session_of_three_turns_reports_each_turns_usage(run_sdk: Callable[..., Any]) -> None:
    from agentcli.testing.fake_llm import Usage

    script = Script(steps=[
        Step(match=Match(turn=0, last_user_contains="one"),
             reply=Reply(text="First.", usage=Usage(input_tokens=100, output_tokens=10))),
        Step(match=Match(turn=1, last_user_contains="two", any_message_contains="First."),
             reply=Reply(text="Second.", usage=Usage(input_tokens=200, output_tokens=20))),
        Step(match=Match(turn=2, last_user_contains="three", any_message_contains="Second."),
             reply=Reply(text="Third.", usage=Usage(input_tokens=300, output_tokens=30))),
    ])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> list[ResultMessage]:
        results: list[ResultMessage] = []
        inits = 0
        async with ClaudeSDKClient(options=opts) as client:
            for prompt in ("one", "two", "three"):
                await client.query(prompt)
                async for message in client.receive_response():
                    inits += isinstance(message, SystemMessage) and message.subtype == "init"
                    if isinstance(message, ResultMessage):
                        results.append(message)
        assert inits == 3  # Claude Code writes init at the start of every turn
        return results

    results = run_sdk(script, body)
    assert [r.result for r in results] == ["First.", "Second.", "Third."]
    assert [r.num_turns for r in results] == [1, 1, 1]  # per turn, not summed over the session
    assert [r.usage["input_tokens"] for r in results if r.usage] == [100, 200, 300]
    assert len({r.session_id for r in results}) == 1


def test_the_permission_callback_allows_with_changed_input_and_denies_with_a_message(
    run_sdk: Callable[..., Any], workspace: Path
) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Write", id="toolu_write", input={"file_path": "a.txt", "content": "from the model\n"})])),
        Step(match=Match(turn=1, last_user_is_tool_result=True), reply=Reply(tool_calls=[
            ToolCall(name="Bash", id="toolu_bash", input={"command": "touch denied.txt"})])),
        Step(match=Match(turn=2, last_user_contains="not on my watch"), reply=Reply(text="Done.")),
    ])
    asked: list[tuple[str, dict[str, Any], list[Any]]] = []

    async def decide(tool: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append((tool, data, context.suggestions))
        if tool == "Write":
            return PermissionResultAllow(updated_input={**data, "content": "from the callback\n"})
        return PermissionResultDeny(message="not on my watch")

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> list[Any]:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("Write a file, then run a command")
            return [m async for m in client.receive_response()]

    messages = run_sdk(script, body, can_use_tool=decide)
    assert [tool for tool, _, _ in asked] == ["Write", "Bash"]
    assert asked[0][1]["file_path"] == "a.txt" and asked[0][2][0].type == "setMode"
    assert (workspace / "a.txt").read_text() == "from the callback\n"
    assert not (workspace / "denied.txt").exists()
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success" and result.result == "Done."
    assert result.permission_denials == [
        {"tool_name": "Bash", "tool_use_id": "toolu_bash", "tool_input": {"command": "touch denied.txt"}}]


def test_interrupt_ends_the_turn_and_the_session_takes_the_next_message(run_sdk: Callable[..., Any]) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0, last_user_contains="slow"), reply=Reply(text="never sent"), hold="slow"),
        Step(match=Match(last_user_contains="after"), reply=Reply(text="Back again.")),
    ])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> tuple[list[Any], list[Any]]:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("a slow question")
            deadline = time.monotonic() + 30
            while not server.requests and time.monotonic() < deadline:  # the request is waiting on the hold
                await anyio.sleep(0.02)
            await client.interrupt()
            first = [m async for m in client.receive_response()]
            await client.query("after the interrupt")
            second = [m async for m in client.receive_response()]
        server.release("slow")
        return first, second

    first, second = run_sdk(script, body)
    stopped = first[-1]
    assert isinstance(stopped, ResultMessage) and stopped.is_error
    assert (stopped.subtype, stopped.terminal_reason) == ("error_during_execution", "aborted_streaming")
    again = second[-1]
    assert isinstance(again, ResultMessage) and (again.subtype, again.result) == ("success", "Back again.")


def test_set_permission_mode_changes_the_next_calls_and_init_says_so(
    run_sdk: Callable[..., Any], workspace: Path
) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Write", input={"file_path": "b.txt", "content": "accepted\n"})])),
        Step(match=Match(turn=1, last_user_is_tool_result=True), reply=Reply(text="Written.")),
    ])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> list[Any]:
        async with ClaudeSDKClient(options=opts) as client:
            await client.set_permission_mode("acceptEdits")
            await client.query("write b.txt")
            return [m async for m in client.receive_response()]

    messages = run_sdk(script, body)  # no callback: an edit that asked would be refused
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.data["permissionMode"] == "acceptEdits"
    assert (workspace / "b.txt").read_text() == "accepted\n"
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Written."
