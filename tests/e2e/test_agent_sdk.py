"""The real Claude Agent SDK (`claude-agent-sdk` from PyPI) drives agentcli: `ClaudeAgentOptions(cli_path=<agentcli>)`
spawns agentcli with Claude Code's headless flags and speaks stream-json plus the control protocol to it, against
the scripted fake server. The SDK's wheel bundles Claude Code's own binary: `cli_path` always names agentcli's
console script, so that binary never runs here.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import agentcli_path, cli_env, db

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


def test_a_hook_callback_blocks_a_call_and_reads_a_real_transcript(
    run_sdk: Callable[..., Any], workspace: Path
) -> None:
    from claude_agent_sdk import HookMatcher

    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(text="Trying.", tool_calls=[
            ToolCall(name="Bash", id="toolu_hooked", input={"command": "touch hooked.txt"})])),
        Step(match=Match(turn=1, last_user_contains="Blocked by the program"), reply=Reply(text="Blocked, then.")),
    ])
    seen: list[dict[str, Any]] = []

    async def guard(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        transcript = Path(data["transcript_path"])
        seen.append({**data, "lines": [json.loads(line) for line in transcript.read_text().splitlines()]})
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "Blocked by the program"}}

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> list[Any]:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("touch a file")
            return [m async for m in client.receive_response()]

    messages = run_sdk(script, body, hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]},
                       permission_mode="bypassPermissions")
    assert not (workspace / "hooked.txt").exists()
    (data,) = seen
    assert (data["hook_event_name"], data["tool_name"], data["tool_use_id"]) == ("PreToolUse", "Bash", "toolu_hooked")
    assert data["tool_input"] == {"command": "touch hooked.txt"} and data["permission_mode"] == "bypassPermissions"
    user, assistant = data["lines"][:2]  # the transcript so far, in Claude Code's line format
    assert (user["type"], user["message"]["content"][0]["text"]) == ("user", "touch a file")
    assert assistant["parentUuid"] == user["uuid"] and assistant["message"]["content"][1]["name"] == "Bash"
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Blocked, then."
    assert [d["tool_use_id"] for d in result.permission_denials or []] == ["toolu_hooked"]


def test_an_sdk_defined_agent_runs_a_task_and_its_messages_stream_with_the_call_id(
    run_sdk: Callable[..., Any]
) -> None:
    from claude_agent_sdk import (
        AgentDefinition,
        TaskNotificationMessage,
        TaskProgressMessage,
        TaskStartedMessage,
        TaskUpdatedMessage,
    )

    task = ToolCall(name="Task", id="toolu_task", input={
        "subagent_type": "reviewer", "description": "Review the notes", "prompt": "Review notes.txt"})
    script = Script(steps=[
        Step(match=Match(system_contains=SDK_ROLE, turn=0, tools_include=["Task"]),
             reply=Reply(text="Asking the reviewer.", tool_calls=[task])),
        Step(match=Match(system_contains="REVIEWER-SYS", turn=0, tools_exclude=["Bash", "Write"]),
             reply=Reply(tool_calls=[ToolCall(name="Read", id="toolu_read", input={"file_path": "notes.txt"})])),
        Step(match=Match(system_contains="REVIEWER-SYS", turn=1, last_user_contains="first line"),
             reply=Reply(text="The notes look fine.")),
        Step(match=Match(system_contains=SDK_ROLE, turn=1, last_user_contains="The notes look fine."),
             reply=Reply(text="Reviewed: fine.")),
    ])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> list[Any]:
        return [m async for m in query(prompt="Have the reviewer look at the notes", options=opts)]

    reviewer = AgentDefinition(description="Reviews notes", prompt="REVIEWER-SYS You review.", tools=["Read"],
                               model="inherit")
    messages = run_sdk(script, body, agents={"reviewer": reviewer})
    init = messages[0]
    assert isinstance(init, SystemMessage) and "reviewer" in init.data["agents"]
    started = next(m for m in messages if isinstance(m, TaskStartedMessage))
    assert (started.tool_use_id, started.task_type, started.data["subagent_type"]) == (
        "toolu_task", "local_agent", "reviewer")
    inside = [m for m in messages if getattr(m, "parent_tool_use_id", None) == "toolu_task"]
    assert any(isinstance(m, AssistantMessage) and m.content[0].id == "toolu_read" for m in inside)  # type: ignore[union-attr]
    (progress,) = [m for m in messages if isinstance(m, TaskProgressMessage)]  # one per tool call, as Claude Code
    assert (progress.task_id, progress.last_tool_name) == (started.task_id, "Read")
    updated = next(m for m in messages if isinstance(m, TaskUpdatedMessage))
    assert (updated.task_id, updated.status) == (started.task_id, "completed")
    done = next(m for m in messages if isinstance(m, TaskNotificationMessage))
    assert (done.task_id, done.status) == (started.task_id, "completed")
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Reviewed: fine."


def test_an_in_process_sdk_mcp_server_tool_is_called_through_the_program(run_sdk: Callable[..., Any]) -> None:
    from claude_agent_sdk import create_sdk_mcp_server, tool

    calls: list[dict[str, Any]] = []

    @tool("add", "Add two integers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    script = Script(steps=[
        Step(match=Match(turn=0, system_contains="- mcp__calc__add: "),
             reply=Reply(tool_calls=[ToolCall(name="mcp__calc__add", id="toolu_add", input={"a": 2, "b": 3})])),
        Step(match=Match(turn=1, last_user_contains="sum=5"), reply=Reply(text="2 + 3 = 5.")),
    ])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> list[Any]:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("add 2 and 3")
            messages = [m async for m in client.receive_response()]
            status = await client.get_mcp_status()
        return [*messages, status]

    calc = create_sdk_mcp_server("calc", "1.2.3", [add])
    *messages, status = run_sdk(script, body, mcp_servers={"calc": calc}, permission_mode="bypassPermissions")
    assert calls == [{"a": 2, "b": 3}]
    init = messages[0]
    assert "mcp__calc__add" in init.data["tools"] and init.data["mcp_servers"][0]["name"] == "calc"
    assert messages[-1].result == "2 + 3 = 5."
    (calc_status,) = status["mcpServers"]
    assert (calc_status["name"], calc_status["status"]) == ("calc", "connected")
    assert (calc_status["source"], calc_status["tools"]) == ("sdk", [{"name": "add"}])


def test_json_schema_gives_structured_output_after_one_repair_turn(run_sdk: Callable[..., Any]) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}},
              "required": ["answer", "score"]}
    script = Script(steps=[
        Step(match=Match(turn=0, last_user_contains="# Output format"), reply=Reply(text="It is forty-two.")),
        Step(match=Match(turn=1, last_user_contains="does not satisfy the required JSON schema"),
             reply=Reply(text='{"answer": "forty-two", "score": 42}')),
    ])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> list[Any]:
        return [m async for m in query(prompt="What is the answer?", options=opts)]

    result = run_sdk(script, body, output_format={"type": "json_schema", "schema": schema})[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert result.structured_output == {"answer": "forty-two", "score": 42}
    assert result.result == '{"answer":"forty-two","score":42}' and result.num_turns == 2


def test_resume_forks_a_session_and_session_id_names_a_new_one(run_sdk: Callable[..., Any], tmp_path: Path) -> None:
    chosen = "0b6f7f0e-2d0c-4c8e-9a59-5f3f1f0d8a11"
    script = Script(steps=[
        Step(match=Match(turn=0, last_user_contains="remember the word"), reply=Reply(text="Remembered: teal.")),
        Step(match=Match(turn=1, last_user_contains="which word", any_message_contains="Remembered: teal."),
             reply=Reply(text="It was teal.")),
    ])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> tuple[str, str, str]:
        from dataclasses import replace

        first = [m async for m in query(prompt="remember the word teal", options=replace(opts, session_id=chosen))]
        original = first[-1].session_id
        forked = [m async for m in query(prompt="which word was it?",
                                         options=replace(opts, resume=original, fork_session=True))]
        assert forked[-1].result == "It was teal."
        return original, forked[0].data["session_id"], forked[-1].session_id

    original, init_id, forked = run_sdk(script, body)
    assert original == chosen  # --session-id: the UUID the program chose is the session's id
    assert forked == init_id and forked != original
    with contextlib.closing(db(tmp_path / "home")) as conn:
        counts = dict(conn.execute("SELECT session_id, count(*) FROM messages GROUP BY session_id").fetchall())
    assert (counts[original], counts[forked]) == (2, 4)  # the fork holds the copied history and its own turn


def test_stop_task_stops_one_background_subagent(run_sdk: Callable[..., Any]) -> None:
    from claude_agent_sdk import TaskNotificationMessage, TaskStartedMessage

    task = ToolCall(name="Task", id="toolu_bg", input={
        "subagent_type": "explore", "description": "Search slowly", "prompt": "SLOW-SEARCH find it",
        "run_in_background": True})
    script = Script(steps=[
        Step(match=Match(system_contains=SDK_ROLE, turn=0), reply=Reply(tool_calls=[task])),
        Step(match=Match(last_user_contains="SLOW-SEARCH"), reply=Reply(text="never"), hold="sub"),
        Step(match=Match(system_contains=SDK_ROLE, turn=1), reply=Reply(text="Started it.")),
        Step(match=Match(system_contains=SDK_ROLE, last_user_contains="after"), reply=Reply(text="Noted."),
             optional=True),
    ])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> tuple[list[Any], list[Any]]:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("search in the background")
            first = [m async for m in client.receive_response()]
            started = next(m for m in first if isinstance(m, TaskStartedMessage))
            await client.stop_task(started.task_id)
            later: list[Any] = []
            async for message in client.receive_messages():
                later.append(message)
                if isinstance(message, TaskNotificationMessage):
                    break
        server.release("sub")
        return first, later

    first, later = run_sdk(script, body)
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "Started it."
    stopped = later[-1]
    assert isinstance(stopped, TaskNotificationMessage) and stopped.status == "stopped"


def test_a_deny_that_interrupts_ends_the_turn(run_sdk: Callable[..., Any], workspace: Path) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Bash", id="toolu_stop", input={"command": "touch stopped.txt"})])),
        Step(match=Match(last_user_contains="next question"), reply=Reply(text="Here again.")),
    ])

    async def decide(tool: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        return PermissionResultDeny(message="stop everything", interrupt=True)

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> tuple[list[Any], list[Any]]:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("touch a file")
            first = [m async for m in client.receive_response()]
            await client.query("next question")
            return first, [m async for m in client.receive_response()]

    first, second = run_sdk(script, body, can_use_tool=decide)
    stopped = first[-1]
    assert isinstance(stopped, ResultMessage) and stopped.is_error
    assert (stopped.subtype, stopped.terminal_reason) == ("error_during_execution", "aborted_tools")
    assert [d["tool_use_id"] for d in stopped.permission_denials or []] == ["toolu_stop"]
    assert not (workspace / "stopped.txt").exists()
    assert second[-1].result == "Here again."


def test_background_commands_are_local_bash_tasks_that_fail_or_stop(run_sdk: Callable[..., Any]) -> None:
    from claude_agent_sdk import TaskNotificationMessage, TaskStartedMessage, TaskUpdatedMessage

    build = ToolCall(name="Bash", id="toolu_build", input={
        "command": "printf 'building\\nbroken config\\n'; exit 3", "description": "Build it",
        "run_in_background": True})
    wait = {"task_id": "bash_1", "wait_seconds": 60}  # twice: for its output, then for its end (no clock)
    sleeper = ToolCall(name="Bash", id="toolu_sleep", input={"command": "sleep 300", "run_in_background": True})
    calls = [build, ToolCall(name="TaskOutput", input=wait), ToolCall(name="TaskOutput", input=wait), sleeper,
             ToolCall(name="TaskCancel", input={"task_id": "bash_2"})]
    script = Script(steps=[
        *[Step(match=Match(system_contains=SDK_ROLE, turn=n), reply=Reply(tool_calls=[call]))
          for n, call in enumerate(calls)],
        Step(match=Match(system_contains=SDK_ROLE, turn=len(calls)), reply=Reply(text="Done.")),
    ])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> list[Any]:
        return [m async for m in query(prompt="build, then start a sleeper and stop it", options=opts)]

    messages = run_sdk(script, body, permission_mode="bypassPermissions")
    started = [m for m in messages if isinstance(m, TaskStartedMessage)]
    assert [(m.task_id, m.tool_use_id, m.task_type, m.description) for m in started] == [
        ("bash_1", "toolu_build", "local_bash", "Build it"), ("bash_2", "toolu_sleep", "local_bash", "sleep 300")]
    assert started[0].data["is_backgrounded"] is True
    ended = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    assert [(m.task_id, m.tool_use_id, m.status, m.summary) for m in ended] == [
        ("bash_1", "toolu_build", "failed", 'Background command "Build it" failed with exit code 3'),
        ("bash_2", "toolu_sleep", "stopped", 'Background command "sleep 300" was stopped')]
    assert ended[0].output_file.endswith("bash_1.log") and ended[0].data["exit_code"] == 3
    assert "broken config" in ended[0].data["last_lines"] and ended[0].usage is None
    updated = [(m.task_id, m.status) for m in messages if isinstance(m, TaskUpdatedMessage)]
    assert updated == [("bash_1", "failed"), ("bash_2", "killed")]  # Claude Code's patch before each notification
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Done."


def test_an_image_content_block_from_the_sdk_reaches_the_request(run_sdk: Callable[..., Any]) -> None:
    import base64
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4000, 3000), (240, 240, 10)).save(out, "PNG")
    script = Script(steps=[Step(match=Match(system_contains=SDK_ROLE, turn=0), reply=Reply(text="Yellow."))])

    async def prompts() -> Any:
        yield {"type": "user", "session_id": "", "parent_tool_use_id": None, "message": {"role": "user", "content": [
            {"type": "text", "text": "what colour is this?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": base64.b64encode(out.getvalue()).decode()}}]}}

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> tuple[list[Any], dict[str, Any]]:
        messages = [m async for m in query(prompt=prompts(), options=opts)]
        return messages, server.requests[0].body

    messages, sent = run_sdk(script, body)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Yellow."
    [image] = [b for b in sent["messages"][0]["content"] if b["type"] == "image"]
    assert Image.open(io.BytesIO(base64.b64decode(image["source"]["data"]))).size == (1238, 928)
