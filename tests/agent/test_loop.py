"""AgentLoop against a scripted model (in-process, either provider's events): turns, tool dispatch, errors, cancel."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.agent.tool_calls import CANCELLED_RESULT
from agentcli.events import Event, MessageAddedEvent, RunFinishedEvent, ToolCallFinishedEvent, ToolCallStartedEvent
from agentcli.llm.base import RetryPolicy, ToolResultBlock
from agentcli.llm.models import ResolvedModel
from agentcli.testing.scripted import Fault, Match, Reply, ScriptedLLM, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext, ToolResult
from agentcli.tools.files.read import ReadTool
from agentcli.tools.permissions.approvals import Approval
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools

APIS = ("anthropic", "openai")


POLICY = RetryPolicy(max_retries=1, initial_delay=0.01, max_delay=0.01)


def _loop(
    api: str,
    llm: ScriptedLLM,
    workspace: Path,
    events: list[Event],
    tools: list[Any] | None = None,
) -> AgentLoop:
    model = ResolvedModel("main", api, "fake", None, "sk-test", 1024)  # type: ignore[arg-type]
    session = Session(system_prompt="You are the loop under test.", model=model, workspace=workspace)
    ctx = ToolContext(
        workspace=workspace, agent="main", session_id=session.id,
        permissions=PermissionPolicy("auto"), file_locks=FileLocks(),
    )
    provider = llm.provider(api, policy=POLICY)  # type: ignore[arg-type]
    return AgentLoop(session, provider, tools or build_tools(), ctx, events.append, max_turns=6)


@pytest.mark.parametrize("api", APIS)
async def test_tool_round_trip_and_transcript(api: str, llm: ScriptedLLM, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    llm.add_steps(
        Step(match=Match(api=api, turn=0), reply=Reply(text="Reading.", tool_calls=[
            ToolCall(name="Read", input={"file_path": "notes.txt"})])),
        Step(match=Match(api=api, turn=1, last_user_contains="beta"), reply=Reply(text="It says alpha and beta.")),
    )
    events: list[Event] = []
    loop = _loop(api, llm, tmp_path, events)
    outcome = await loop.run("what is in notes.txt?")
    assert outcome.status == "completed"
    assert outcome.result == "It says alpha and beta."
    roles = [m.role for m in loop.session.messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert [e.seq for e in events if isinstance(e, MessageAddedEvent)] == [0, 1, 2, 3]
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "completed"
    assert loop.session.usage.output_tokens > 0
    llm.assert_done()


@pytest.mark.parametrize("api", APIS)
async def test_bad_arguments_and_unknown_tool_become_tool_errors(
    api: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.add_steps(
        Step(match=Match(api=api, turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Read", arguments_json='{"file_path": "x.txt", '),  # malformed JSON
            ToolCall(name="Read", input={"path_typo": "x.txt"}),  # schema violation
            ToolCall(name="Teleport", input={"to": "mars"}),  # no such tool
        ])),
        Step(match=Match(api=api, turn=1), reply=Reply(text="I will stop guessing.")),
    )
    events: list[Event] = []
    loop = _loop(api, llm, tmp_path, events)
    outcome = await loop.run("go")
    assert outcome.status == "completed"
    results = loop.session.messages[2].content
    assert all(isinstance(r, ToolResultBlock) and r.is_error for r in results)
    texts = [r.content for r in results if isinstance(r, ToolResultBlock)]
    assert "not valid JSON" in texts[0]
    assert "file_path" in texts[1] and "path_typo" in texts[1]
    assert "Unknown tool 'Teleport'" in texts[2] and "Read" in texts[2]
    # The model was told: the errors are in the next request.
    assert "Unknown tool 'Teleport'" in llm.requests[-1].text()
    llm.assert_done()


class GatedRead(ReadTool):
    """A Read that waits until every gated call of the turn has started: it proves overlap structurally."""

    started: list[str]
    gate: asyncio.Event
    expected = 2

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.started.append(ctx.tool_call_id)
        if len(self.started) >= self.expected:
            self.gate.set()
        await asyncio.wait_for(self.gate.wait(), timeout=5)  # sequential dispatch would time out here
        return await super().run(args, ctx)


async def test_two_reads_of_one_turn_overlap_and_keep_order(
    llm: ScriptedLLM, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("AAA\n")
    (tmp_path / "b.txt").write_text("BBB\n")
    llm.add_steps(
        Step(match=Match(turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Read", input={"file_path": "a.txt"}),
            ToolCall(name="Read", input={"file_path": "b.txt"}),
        ])),
        Step(match=Match(turn=1), reply=Reply(text="both read")),
    )
    gated = GatedRead()
    gated.started, gated.gate = [], asyncio.Event()
    events: list[Event] = []
    loop = _loop("anthropic", llm, tmp_path, events, tools=[gated])
    outcome = await loop.run("read both")
    assert outcome.status == "completed"
    starts = [i for i, e in enumerate(events) if isinstance(e, ToolCallStartedEvent)]
    finishes = [i for i, e in enumerate(events) if isinstance(e, ToolCallFinishedEvent)]
    assert max(starts) < min(finishes), "both calls started before either finished"
    results = [b for b in loop.session.messages[2].content if isinstance(b, ToolResultBlock)]
    assert "AAA" in results[0].content and "BBB" in results[1].content  # call order kept
    llm.assert_done()


@pytest.mark.parametrize("api", APIS)
async def test_provider_failure_mid_run_keeps_transcript(
    api: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    llm.add_steps(
        Step(match=Match(api=api, turn=0), reply=Reply(text="Step one.", tool_calls=[
            ToolCall(name="Read", input={"file_path": "f.txt"})])),
        Step(match=Match(api=api, turn=1), fault=Fault(kind="http", status=500), times=2),
    )
    events: list[Event] = []
    loop = _loop(api, llm, tmp_path, events)
    outcome = await loop.run("go")
    assert outcome.status == "failed"
    assert outcome.error is not None and "500" in outcome.error
    assert [m.role for m in loop.session.messages] == ["user", "assistant", "user"]
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "failed"
    llm.assert_done()


async def test_cancel_during_tool_call_leaves_consistent_transcript(
    llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.add_steps(
        Step(match=Match(turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Bash", input={"command": "touch started.flag; sleep 30"})])),
    )
    events: list[Event] = []
    loop = _loop("anthropic", llm, tmp_path, events)
    task = asyncio.create_task(loop.run("run it"))
    flag = tmp_path / "started.flag"
    async with asyncio.timeout(10):
        while not flag.exists():
            await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    last = loop.session.messages[-1]
    assert last.role == "user"
    (block,) = last.content
    assert isinstance(block, ToolResultBlock) and block.content == CANCELLED_RESULT
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "cancelled"
    llm.assert_done()


async def test_two_loops_share_nothing(llm: ScriptedLLM, tmp_path: Path) -> None:
    llm.add_steps(
        Step(match=Match(last_user_contains="first"), reply=Reply(text="one")),
        Step(match=Match(last_user_contains="second"), reply=Reply(text="two")),
    )
    a_events: list[Event] = []
    b_events: list[Event] = []
    a = _loop("anthropic", llm, tmp_path, a_events)
    b = _loop("anthropic", llm, tmp_path, b_events)
    ra, rb = await asyncio.gather(a.run("first"), b.run("second"))
    assert (ra.result, rb.result) == ("one", "two")
    assert all("second" not in str(m) for m in a.session.messages)
    assert {e.session_id for e in a_events} == {a.session.id}
    assert a.session.id != b.session.id
    llm.assert_done()


async def test_a_tool_calls_duration_leaves_out_the_wait_for_approval(
    llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr("agentcli.agent.tool_calls.time.perf_counter", lambda: clock[0])

    async def slow_person(request: object) -> Approval:
        clock[0] += 90.0  # the person reads the dialog for a minute and a half
        return "allow_once"

    llm.add_steps(
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="Write", input={
            "file_path": "out.txt", "content": "hi\n"})])),
        Step(match=Match(turn=1), reply=Reply(text="written")),
    )
    events: list[Event] = []
    loop = _loop("anthropic", llm, tmp_path, events)
    loop.context = dataclasses.replace(loop.context, permissions=PermissionPolicy("ask", approver=slow_person))
    assert (await loop.run("write it")).status == "completed"
    (finished,) = [e for e in events if isinstance(e, ToolCallFinishedEvent)]
    assert not finished.is_error and (tmp_path / "out.txt").read_text() == "hi\n"
    assert finished.approval_ms == 90_000.0 and finished.duration_ms == 0.0


async def test_an_edit_reports_its_diff_on_the_finished_event(llm: ScriptedLLM, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    llm.add_steps(
        Step(match=Match(turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Edit", input={"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}),
            ToolCall(name="Edit", input={"file_path": "a.py", "old_string": "absent", "new_string": "z"}),
            ToolCall(name="Read", input={"file_path": "a.py"}),
        ])),
        Step(match=Match(turn=1), reply=Reply(text="done")),
    )
    events: list[Event] = []
    await _loop("anthropic", llm, tmp_path, events).run("edit it")
    edited, failed, read = [e for e in events if isinstance(e, ToolCallFinishedEvent)]
    assert edited.diff is not None and (edited.diff.path, edited.diff.stat) == ("a.py", "+1 \u22121")
    assert failed.is_error and failed.diff is None
    assert read.diff is None
    assert '"diff":{"path":"a.py"' in edited.model_dump_json()  # stream-json carries it
