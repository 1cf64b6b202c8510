"""What the loop tells consumers while work is under way: tool calls being written, a running tool's output,
TodoWrite's list on its finished event, and the spend of a request that was stopped before it finished."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentcli.events import (
    STREAMING_STEP_CHARS,
    Event,
    TextDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStreamingEvent,
    ToolOutputEvent,
    UsageEvent,
)
from agentcli.testing.scripted import Fault, Match, Reply, ScriptedLLM, Step, ToolCall
from tests.agent.test_loop_stop import make_loop


async def test_a_tool_call_being_written_is_announced_before_it_runs(llm: ScriptedLLM, tmp_path: Path) -> None:
    prompt = "x" * (STREAMING_STEP_CHARS * 2)
    llm.add_steps(
        Step(match=Match(turn=0), reply=Reply(args_chunk_size=64, tool_calls=[ToolCall(name="TodoWrite", input={
            "todos": [{"content": prompt, "status": "in_progress"}, {"content": "then this", "status": "pending"}]})])),
        Step(match=Match(turn=1), reply=Reply(text="ok")),
    )
    events: list[Event] = []
    await make_loop(llm, tmp_path, events).run("go")
    streaming = [e for e in events if isinstance(e, ToolCallStreamingEvent)]
    assert streaming[0].name == "TodoWrite" and streaming[0].chars == 0
    assert len(streaming) >= 3 and streaming[-1].chars >= STREAMING_STEP_CHARS * 2  # one per step of arguments
    assert [s.chars for s in streaming] == sorted(s.chars for s in streaming)
    first = events.index(streaming[0])
    finished = next(e for e in events if isinstance(e, ToolCallFinishedEvent))
    assert first < events.index(finished)
    # TodoWrite's whole list rides on its finished event.
    assert finished.todos == [
        {"id": "1", "content": prompt, "status": "in_progress"},
        {"id": "2", "content": "then this", "status": "pending"},
    ]
    llm.assert_done()


async def test_bash_output_is_reported_while_the_command_runs(llm: ScriptedLLM, tmp_path: Path) -> None:
    command = "for i in 1 2 3; do echo line-$i; done; sleep 0.6; echo last"
    llm.add_steps(
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": command})])),
        Step(match=Match(turn=1), reply=Reply(text="ok")),
    )
    events: list[Event] = []
    await make_loop(llm, tmp_path, events).run("go")
    outputs = [e for e in events if isinstance(e, ToolOutputEvent)]
    finished = next(e for e in events if isinstance(e, ToolCallFinishedEvent))
    assert outputs and all(events.index(o) < events.index(finished) for o in outputs)
    # Before the command ended (it sleeps 0.6 s before its last line): the first lines, in one event or several.
    assert any("line-3" in o.tail and "last" not in o.tail for o in outputs) and outputs[0].name == "Bash"
    assert outputs[-1].tail.endswith("last\n") and outputs[-1].total_bytes == len("line-1\n" * 3) + 5
    llm.assert_done()


async def test_a_request_stopped_mid_stream_is_counted(llm: ScriptedLLM, tmp_path: Path) -> None:
    llm.add_steps(Step(match=Match(turn=0), reply=Reply(text="a long answer that never ends " * 4, chunk_size=10),
                       fault=Fault(kind="stall", after_events=6, seconds=30)))
    events: list[Event] = []
    loop = make_loop(llm, tmp_path, events)
    run = asyncio.create_task(loop.run("go"))
    while not any(isinstance(e, TextDeltaEvent) for e in events):
        await asyncio.sleep(0.01)
    assert loop.stop("cancelled", "cancelled by the person")
    outcome = await run
    assert outcome.status == "cancelled"
    (usage,) = [e for e in events if isinstance(e, UsageEvent)]
    streamed = sum(len(e.text) for e in events if isinstance(e, TextDeltaEvent))
    assert usage.estimated and usage.output_tokens == -(-streamed // 4) and usage.input_tokens > 0
    assert loop.session.ledger.own.requests == 1
    assert loop.session.ledger.own.usage.output_tokens == usage.output_tokens


async def test_a_request_stopped_before_anything_streamed_is_not_counted(llm: ScriptedLLM, tmp_path: Path) -> None:
    llm.add_steps(Step(match=Match(turn=0), reply=Reply(text="never"), latency_ms=30_000))
    events: list[Event] = []
    loop = make_loop(llm, tmp_path, events)
    run = asyncio.create_task(loop.run("go"))
    await llm.wait_until_async(lambda s: len(s.requests) == 1)
    assert loop.stop("cancelled", "cancelled")
    await run
    assert not [e for e in events if isinstance(e, UsageEvent)]
    assert loop.session.ledger.own.requests == 0
