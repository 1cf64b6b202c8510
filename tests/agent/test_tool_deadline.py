"""Every tool call has a deadline (`[agent] tool_timeout_seconds`): a hung tool becomes a tool error."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.events import Event
from agentcli.llm.base import ToolResultBlock
from agentcli.llm.models import ResolvedModel
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext, ToolResult
from agentcli.tools.files.read import ReadTool
from agentcli.tools.files.write import WriteTool
from agentcli.tools.permissions.approvals import PermissionRequest
from agentcli.tools.permissions.policy import PermissionPolicy


class HangingRead(ReadTool):
    """A Read that never returns (a tool stuck on a pathological input)."""

    entered: asyncio.Event

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.entered.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def _loop(
    llm: ScriptedLLM, workspace: Path, tools: list[Any], policy: PermissionPolicy, timeout: float
) -> AgentLoop:
    model = ResolvedModel("main", "anthropic", "fake", None, "sk-ant-test", 1024)
    session = Session(system_prompt="deadline test", model=model, workspace=workspace)
    ctx = ToolContext(
        workspace=workspace,
        agent="main",
        session_id=session.id,
        permissions=policy,
        file_locks=FileLocks(),
        tool_timeout_seconds=timeout,
    )
    events: list[Event] = []
    return AgentLoop(session, llm.provider(), tools, ctx, events.append, max_turns=4)


async def test_a_hung_tool_times_out_and_the_run_goes_on(
    llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.add_steps(
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "x.txt"})])),
        Step(match=Match(turn=1, last_user_contains="timed out"), reply=Reply(text="It hung; moving on.")),
    )
    hanging = HangingRead()
    hanging.entered = asyncio.Event()
    loop = _loop(llm, tmp_path, [hanging], PermissionPolicy("auto"), timeout=0.2)
    outcome = await loop.run("read x")
    assert hanging.entered.is_set()
    assert outcome.status == "completed" and outcome.result == "It hung; moving on."
    (block,) = loop.session.messages[2].content
    assert isinstance(block, ToolResultBlock) and block.is_error
    assert block.content == "Read timed out after 0.2s"
    llm.assert_done()


async def test_waiting_for_approval_does_not_count(llm: ScriptedLLM, tmp_path: Path) -> None:
    llm.add_steps(
        Step(
            match=Match(turn=0),
            reply=Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "a.txt", "content": "hi\n"})]),
        ),
        Step(match=Match(turn=1, last_user_contains="Created a.txt"), reply=Reply(text="done")),
    )
    asked: list[str] = []

    async def slow_person(request: PermissionRequest) -> Any:
        asked.append(request.tool)
        await asyncio.sleep(0.5)  # the person thinks for longer than the tool deadline
        return "allow_once"

    policy = PermissionPolicy("ask", approver=slow_person)
    loop = _loop(llm, tmp_path, [WriteTool()], policy, timeout=0.1)
    outcome = await loop.run("write a")
    assert asked == ["Write"] and outcome.result == "done"
    assert (tmp_path / "a.txt").read_text() == "hi\n"
    llm.assert_done()


def test_tool_context_default_deadline() -> None:
    fields = {f.name: f.default for f in dataclasses.fields(ToolContext)}
    assert fields["tool_timeout_seconds"] == 300
