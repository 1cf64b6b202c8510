"""A subagent's context is kept inside its own window like the main agent's: it compacts on its own, the parent
sees the compaction as one of its events, and the task still finishes with its result."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.events import CompactionEvent, SubagentEvent, unwrap
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from tests.subagents.harness import MAIN, Make, sub, task_call


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for n in range(15):
        (workspace / f"f{n}.txt").write_text(f"<<f{n}>>\n")
    return workspace


async def test_a_subagent_compacts_its_own_context_and_finishes(make: Make, server: ScriptedLLM) -> None:
    def reading(n: int) -> Reply:
        return Reply(text=f"reading {n}", tool_calls=[ToolCall(name="Read", input={"file_path": f"f{n}.txt"})])

    server.add_steps(
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task_call("Read all", "read f*")])),
        Step(match=Match(system_contains=sub("Read all"), turn=0), reply=reading(0)),
        *[Step(match=Match(system_contains=sub("Read all"), last_user_contains=f"<<f{n - 1}>>"), reply=reading(n))
          for n in range(1, 15)],
        Step(match=Match(system_contains=sub("Read all"), last_user_contains="<<f14>>"),
             reply=Reply(text="Read all fifteen.")),
        Step(match=Match(system_contains=MAIN, last_user_contains="Read all fifteen."), reply=Reply(text="ok")),
    )
    h = make({"context.max_messages": 20, "task_tool.max_tool_calls": 50})
    outcome = await h.run("read everything")
    assert outcome.status == "completed" and outcome.result == "ok"
    relayed = [unwrap(e)[1] for e in h.events if isinstance(e, SubagentEvent)]
    compactions = [e for e in relayed if isinstance(e, CompactionEvent)]
    assert compactions and all(e.agent.startswith("explore") for e in compactions)
    assert not any(isinstance(e, CompactionEvent) for e in h.events)  # the main agent's context stayed small
    child = [r for r in server.requests if sub("Read all") in r.request.system]
    assert max(len(r.request.messages) for r in child) <= 21
    assert any("<compacted_context>" in r.text() for r in child)
    (record,) = h.runner.records()
    assert record.status == "completed" and record.result == "Read all fifteen."
    server.assert_done()
