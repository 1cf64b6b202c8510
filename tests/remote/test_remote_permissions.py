"""A remote subagent's permission questions reach the parent's approver: the real Claude Agent SDK drives agentcli
(its `can_use_tool` callback is the approver), the subagent runs on a Ray worker of a real local cluster. The
callback's changed input and its refusal's message reach the worker, and a mode the callback sets (acceptEdits)
reaches the worker's copy of the policy, so its next edit is not asked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, NO_IDENTITY, agentcli_path, cli_env, git, git_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import (  # noqa: E402
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ResultMessage,
    ToolPermissionContext,
)

SUB = "# Task\nWrite remotely"


def _sub(turn: int, reply: Reply, **match: Any) -> Step:
    return Step(match=Match(system_contains=SUB, turn=turn, **match), reply=reply)


def _drive(script: Script, prompt: str, decide: Callable[..., Awaitable[Any]], cluster: Any, ws: Path,
           tmp_path: Path) -> list[Any]:
    """Run `prompt` through the Agent SDK with `decide` as its can_use_tool, tasks on the cluster; its messages."""

    async def body(opts: ClaudeAgentOptions) -> list[Any]:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query(prompt)
            return [m async for m in client.receive_response()]

    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path / "home", AGENTCLI_EXECUTOR__KIND="ray",
                      AGENTCLI_EXECUTOR__ADDRESS=cluster.address, **NO_IDENTITY)
        opts = ClaudeAgentOptions(cli_path=agentcli_path(), cwd=str(ws), env=env, can_use_tool=decide)
        messages: list[Any] = anyio.run(body, opts)
        server.assert_done()
    return messages


def test_a_remote_subagents_questions_are_answered_by_the_parents_approver(cluster: Any, tmp_path: Path) -> None:
    ws = git_workspace(tmp_path, "print('hi')\n")
    task = ToolCall(name="Task", input={"description": "Write remotely", "prompt": "Write two files, run a command",
                                        "subagent_type": "general", "isolation": "remote"})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        _sub(0, Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "a.txt",
                                                                "content": "from the model\n"})])),
        _sub(1, Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "b.txt", "content": "not asked\n"})])),
        _sub(2, Reply(tool_calls=[ToolCall(name="Bash", input={"command": "touch denied.txt"})])),
        _sub(3, Reply(text="Two files written."), last_user_contains="not on my watch"),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done.")),
    ])
    asked: list[tuple[str, dict[str, Any]]] = []

    async def decide(tool: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append((tool, data))
        if tool == "Write":  # allowed with changed content, and edits allowed from now on
            return PermissionResultAllow(updated_input={**data, "content": "from the callback\n"}, updated_permissions=[
                PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")])
        return PermissionResultDeny(message="not on my watch")

    messages = _drive(script, "Delegate the writing", decide, cluster, ws, tmp_path)
    assert [tool for tool, _ in asked] == ["Write", "Bash"]  # b.txt was not asked: the worker followed acceptEdits
    assert asked[0][1]["file_path"] == "a.txt" and asked[1][1] == {"command": "touch denied.txt"}
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Done.", result
    assert (ws / "a.txt").read_text() == "from the callback\n"  # the changed input ran on the worker, merged back
    assert (ws / "b.txt").read_text() == "not asked\n"
    assert not (ws / "denied.txt").exists()
    assert sorted(git(ws, "status", "--porcelain").splitlines()) == ["?? a.txt", "?? b.txt"]


def test_a_remote_subagents_question_is_asked_of_the_person_at_the_parent(cluster: Any, tmp_path: Path) -> None:
    ws = git_workspace(tmp_path, "print('hi')\n")
    task = ToolCall(name="Task", input={"description": "Write remotely", "prompt": "Pick a name, then write it",
                                        "subagent_type": "general", "isolation": "remote"})
    question = {"question": "Which name should the file use?", "header": "Name",
                "options": [{"label": "alpha", "description": "short"}, {"label": "beta", "description": "long"}],
                "multiSelect": False}
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        _sub(0, Reply(tool_calls=[ToolCall(name="AskUserQuestion", input={"questions": [question]})])),
        _sub(1, Reply(text="The person chose beta."), last_user_contains="beta"),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done.")),
    ])
    asked: list[tuple[str, dict[str, Any]]] = []

    async def decide(tool: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append((tool, data))
        return PermissionResultAllow(updated_input={**data, "answers": {question["question"]: "beta"}})

    messages = _drive(script, "Delegate the naming", decide, cluster, ws, tmp_path)
    assert [tool for tool, _ in asked] == ["AskUserQuestion"]
    assert asked[0][1]["questions"] == [question]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Done.", result
