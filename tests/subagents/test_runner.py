"""The subagent runtime end to end in-process: the real SubagentRunner, AgentLoops, SDKs and store.

Every test scripts the main agent (its system prompt is `MAIN`) and its subagents (their system
prompts hold `# Task\\n<description>`) on the fake LLM server, runs the main loop, and checks
what the parent, the server, the events and the store saw.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentcli.events import (
    Event,
    MessageAddedEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentBlockUpdatedEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
)
from agentcli.llm.base import ToolResultBlock
from agentcli.subagents.definitions.registry import AgentRegistry
from agentcli.testing.fake_llm_models import Usage
from agentcli.testing.scripted import Fault, Match, Reply, ScriptedLLM, Step, ToolCall
from tests.subagents.harness import (
    MAIN,
    Harness,
    Make,
    main_step,
    requests_for,
    sub,
    system_of,
    task_call,
    tools_of,
    write_agent,
)

EXPLORE_AVAILABLE = "general, explore, plan, summary"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src" / "api").mkdir(parents=True)
    (workspace / "src" / "api" / "auth.py").write_text("def login():\n    return True\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("# Guide\n")
    return workspace




def results_of(h: Harness) -> list[ToolResultBlock]:
    """Every tool result the main agent received, in order."""
    return [b for m in h.session.messages for b in m.content if isinstance(b, ToolResultBlock)]


def added(h: Harness) -> dict[str, SubagentBlockAddedEvent]:
    """SubagentBlockAdded events by description."""
    return {e.description: e for e in h.events if isinstance(e, SubagentBlockAddedEvent)}


def user_text(request_body: dict[str, Any], index: int = 0) -> str:
    """The text of the `index`-th user message of an Anthropic request."""
    users = [m for m in request_body["messages"] if m["role"] == "user"]
    content = users[index]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text") or b.get("content") or "") for b in content)


def on_added(h: Harness, callback: Callable[[SubagentBlockAddedEvent], None]) -> None:
    """Run `callback` when a subagent block is added (before the parent's next request is sent)."""

    def sink(event: Event) -> None:
        if isinstance(event, SubagentBlockAddedEvent):
            callback(event)

    h.bus.subscribe(sink)


# --- validation and resolution ----------------------------------------------------------------


async def test_invalid_parameters_are_all_listed_in_one_message(server: ScriptedLLM, make: Make) -> None:
    description = " ".join(f"word{i}" for i in range(14))
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(description, "do it", timeout_seconds=99999, colour="red")])),
        main_step(1, Reply(text="ok"), last_user_contains="Invalid parameters: "),
    )
    h = make()
    outcome = await h.run()
    assert outcome.status == "completed"
    (result,) = results_of(h)
    assert result.is_error
    text = result.content
    assert text.startswith("Invalid parameters: ")
    assert text.count("Invalid parameters") == 1
    assert "description: must be a 3-5 word summary, got 14 words" in text
    assert "timeout_seconds: must be between 1 and 1800 (task_tool.max_timeout_seconds)" in text
    assert "colour: unknown parameter" in text
    assert h.runner.handles == {}
    server.assert_done()


async def test_model_override_is_refused_when_disabled(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Find the code", "where", model="main")])),
        main_step(1, Reply(text="ok")),
    )
    h = make({"task_tool.allow_model_override": False})
    await h.run()
    (result,) = results_of(h)
    assert result.is_error
    assert result.content == (
        "Invalid parameters: model: model override is disabled by configuration (task_tool.allow_model_override)"
    )
    server.assert_done()


async def test_model_override_picks_the_model_when_allowed(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Find the code", "where", model="main")])),
        Step(match=Match(system_contains=sub("Find the code")), reply=Reply(text="here")),
        main_step(1, Reply(text="ok"), last_user_contains="Subagent (explore, main) completed."),
    )
    h = make()
    await h.run()
    (sub_request,) = requests_for(server, sub("Find the code"))
    assert sub_request.body["model"] == "m"  # main's model, not light's m-light
    server.assert_done()


async def test_no_subagent_types_at_all(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Find the code", "where")])),
        main_step(1, Reply(text="ok")),
    )
    h = make(registry=AgentRegistry([]))
    await h.run()
    (result,) = results_of(h)
    assert result.is_error and result.content == "No subagents available for delegation"
    server.assert_done()


async def test_unknown_type_lists_every_available_type(server: ScriptedLLM, ws: Path, make: Make) -> None:
    write_agent(ws, "reviewer", "Reviews diffs for bugs.")
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Find the code", "where", "x")])),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    (result,) = results_of(h)
    assert result.is_error
    assert result.content == f"Subagent 'x' not found. Available: {EXPLORE_AVAILABLE}, reviewer"
    server.assert_done()


@pytest.mark.parametrize(
    ("fallback", "requested", "resolved"),
    [
        ("error", "explore", "explore"),
        ("error", "Explore", None),
        ("normalize", "Explore", "explore"),
        ("normalize", "find code", None),
        ("best_match", "find code", "explore"),
        ("best_match", "EXPLORE", "explore"),
    ],
)
async def test_type_fallback(
    server: ScriptedLLM, make: Make, fallback: str, requested: str, resolved: str | None
) -> None:
    server.add_steps(main_step(0, Reply(tool_calls=[task_call("Find the code", "where", requested)])))
    if resolved:
        server.add_steps(
            Step(match=Match(system_contains=sub("Find the code")), reply=Reply(text="here")),
            main_step(1, Reply(text="ok"), last_user_contains=f"Subagent ({resolved}, light) completed."),
        )
    else:
        server.add_steps(main_step(1, Reply(text="ok")))
    h = make({"task_tool.type_fallback": fallback})
    await h.run()
    (result,) = results_of(h)
    if resolved:
        assert not result.is_error
        assert [r.subagent_type for r in h.runner.records()] == [resolved]
    else:
        assert result.content == f"Subagent '{requested}' not found. Available: {EXPLORE_AVAILABLE}"
    server.assert_done()


async def test_init_failure_when_the_model_cannot_resolve(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Find the code", "where", model="openai:gpt-x")])),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    (result,) = results_of(h)
    assert result.is_error
    assert result.content.startswith("Failed to initialize subagent: no API key for model openai:gpt-x (openai)")
    assert "OPENAI_API_KEY" in result.content
    assert h.runner.handles == {}
    server.assert_done()


async def test_write_paths_on_a_read_only_type_is_forbidden(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Find the code", "where", write_paths=["src/**"])])),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    (result,) = results_of(h)
    assert result.is_error
    assert result.content.startswith("Subagent lacks permission for required tools: ")
    assert not requests_for(server, sub("Find the code"))
    server.assert_done()


async def test_deny_tools_removes_tools_from_subagents_only(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(
            0, Reply(tool_calls=[task_call("Find the code", "where"), task_call("General work here", "do", "general")])
        ),
        Step(match=Match(system_contains=sub("Find the code")), reply=Reply(text="here")),
        Step(match=Match(system_contains=sub("General work here")), reply=Reply(text="done")),
        main_step(1, Reply(text="ok")),
    )
    h = make({"task_tool.deny_tools": ["Grep", "Bash"]})
    await h.run()
    (explore,) = requests_for(server, sub("Find the code"))
    assert tools_of(explore) == {"LS", "Glob", "Read", "TodoWrite", "LSP", "AskUserQuestion", "SendMessage",
                                 "ListAgents"}
    (general,) = requests_for(server, sub("General work here"))
    assert "Grep" not in tools_of(general) and "Bash" not in tools_of(general)
    assert {"Read", "Write", "Edit", "Task"} <= tools_of(general)
    main_request = requests_for(server, MAIN)[0]
    assert {"Grep", "Bash", "Task"} <= tools_of(main_request)
    server.assert_done()


async def test_an_explicit_tool_list_is_exact_and_names_the_messaging_tools_it_wants(
    server: ScriptedLLM, ws: Path, make: Make
) -> None:
    write_agent(ws, "reader", "Reads one file.", tools="Read")
    write_agent(ws, "talker", "Reads and reports.", tools="Read, SendMessage")
    write_agent(ws, "anything", "Does anything.")
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Read only", "r", "reader"), task_call("Read and talk", "t", "talker"),
                                       task_call("Do anything", "a", "anything")])),
        *(Step(match=Match(system_contains=sub(d)), reply=Reply(text="done"))
          for d in ("Read only", "Read and talk", "Do anything")),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    (reader,) = requests_for(server, sub("Read only"))
    assert [tool["name"] for tool in reader.body["tools"]] == ["Read"]  # no ListAgents, no SendMessage
    (talker,) = requests_for(server, sub("Read and talk"))
    assert tools_of(talker) == {"Read", "SendMessage"}
    (anything,) = requests_for(server, sub("Do anything"))
    assert {"SendMessage", "ListAgents", "Read", "Bash"} <= tools_of(anything)  # no list: every tool, messaging too
    server.assert_done()


# --- parallel writers -------------------------------------------------------------------------


async def test_overlapping_write_paths_conflict_while_the_first_runs(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(
            0,
            Reply(
                tool_calls=[
                    task_call("Edit the sources", "edit src", "general", write_paths=["src/**"]),
                    task_call("Edit the api", "edit api", "general", write_paths=["src/api/*.py"]),
                ]
            ),
        ),
        Step(match=Match(system_contains=sub("Edit the sources")), reply=Reply(text="edited"), latency_ms=400),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    first, second = results_of(h)
    assert not first.is_error and "Subagent (general, main) completed." in first.content
    assert second.is_error
    task_id = added(h)["Edit the sources"].task_id
    assert second.content == (f"Cannot acquire file locks. Conflicts: src/api/*.py overlaps src/** (held by {task_id})")
    assert not requests_for(server, sub("Edit the api"))
    assert len(h.runner.records()) == 1
    server.assert_done()


async def test_non_overlapping_write_paths_run_together(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(
            0,
            Reply(
                tool_calls=[
                    task_call("Edit the sources", "edit src", "general", write_paths=["src/**"]),
                    task_call("Edit the docs", "edit docs", "general", write_paths=["docs/*.md"]),
                ]
            ),
        ),
        Step(match=Match(system_contains=sub("Edit the sources")), reply=Reply(text="src edited"), latency_ms=300),
        Step(match=Match(system_contains=sub("Edit the docs")), reply=Reply(text="docs edited"), latency_ms=300),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    assert [r.is_error for r in results_of(h)] == [False, False]
    a, b = requests_for(server, sub("Edit the sources"))[0], requests_for(server, sub("Edit the docs"))[0]
    assert a.finished_at is not None and b.finished_at is not None
    assert b.received_at < a.finished_at and a.received_at < b.finished_at  # they overlapped
    server.assert_done()


async def test_write_paths_confine_writes_and_take_bash_away(server: ScriptedLLM, ws: Path, make: Make) -> None:
    desc = "Write the module"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "write it", "general", write_paths=["src/**"])])),
        Step(
            match=Match(system_contains=sub(desc), turn=0),
            reply=Reply(
                tool_calls=[
                    ToolCall(name="Write", input={"file_path": "other/x.txt", "content": "no\n"}),
                    ToolCall(name="Write", input={"file_path": "src/new.py", "content": "x = 1\n"}),
                ]
            ),
        ),
        Step(
            match=Match(system_contains=sub(desc), turn=1, last_user_contains="outside write_paths"),
            reply=Reply(text="wrote src/new.py"),
        ),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    (sub_first, _) = requests_for(server, sub(desc))
    offered = tools_of(sub_first)
    assert "Bash" not in offered and {"Write", "Edit", "MultiEdit"} <= offered
    assert "You may write only to files matching: src/**" in system_of(sub_first)
    assert not (ws / "other" / "x.txt").exists()
    assert (ws / "src" / "new.py").read_text() == "x = 1\n"
    (record,) = h.runner.records()
    assert record.files_modified == ["src/new.py"]
    refused = [e.event for e in h.subagent_events() if isinstance(e.event, ToolCallFinishedEvent) and e.event.is_error]
    assert len(refused) == 1
    assert "Subagent lacks permission for required tools: write to other/x.txt is outside write_paths (src/**)" in (
        refused[0].output
    )
    server.assert_done()


# --- concurrency limits -----------------------------------------------------------------------


async def test_on_limit_error_refuses_the_second_task(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("First search job", "a"), task_call("Second search job", "b")])),
        Step(match=Match(system_contains=sub("First search job")), reply=Reply(text="first"), latency_ms=300),
        main_step(1, Reply(text="ok")),
    )
    h = make({"task_tool.on_limit": "error", "task_tool.max_concurrent": 1})
    await h.run()
    first, second = results_of(h)
    assert not first.is_error
    assert second.is_error and second.content == "Maximum concurrent tasks limit reached"
    assert len(requests_for(server, "# Task\n")) == 1
    server.assert_done()


async def test_queue_mode_runs_at_most_max_concurrent_and_all_complete(server: ScriptedLLM, make: Make) -> None:
    names = ["Search job one", "Search job two", "Search job three", "Search job four"]
    latency = 300
    server.add_steps(main_step(0, Reply(tool_calls=[task_call(n, n) for n in names])))
    server.add_steps(
        *(Step(match=Match(system_contains=sub(n)), reply=Reply(text=f"done: {n}"), latency_ms=latency) for n in names)
    )
    server.add_steps(main_step(1, Reply(text="ok")))
    h = make({"task_tool.max_concurrent": 2})
    running: set[str] = set()
    peak = 0

    def track(event: Event) -> None:
        nonlocal peak
        if isinstance(event, SubagentBlockUpdatedEvent) and event.status == "running":
            running.add(event.task_id)
            peak = max(peak, len(running))
        elif isinstance(event, SubagentBlockFinishedEvent):
            running.discard(event.task_id)

    h.bus.subscribe(track)
    await h.run()
    assert [r.is_error for r in results_of(h)] == [False] * 4
    assert all(f"done: {n}" in r.content for n, r in zip(names, results_of(h), strict=True))
    assert peak == 2
    subs = sorted(requests_for(server, "# Task\n"), key=lambda r: r.received_at)
    assert len(subs) == 4
    # Each request takes `latency`; with two slots the k-th request can only start once k-1 earlier
    # ones finished, so it comes at least `latency` after the (k-2)-th one.
    for k in range(2, 4):
        assert subs[k].received_at - subs[k - 2].received_at >= latency / 1000 - 0.03
    assert subs[1].received_at < subs[0].received_at + latency / 1000  # while the first two run together
    server.assert_done()


async def test_nested_delegation_with_one_slot_does_not_deadlock(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Outer general work", "outer", "general")])),
        Step(
            match=Match(system_contains=sub("Outer general work"), turn=0),
            reply=Reply(tool_calls=[task_call("Inner search work", "inner")]),
        ),
        Step(match=Match(system_contains=sub("Inner search work")), reply=Reply(text="inner result")),
        Step(
            match=Match(system_contains=sub("Outer general work"), turn=1, last_user_contains="inner result"),
            reply=Reply(text="outer result"),
        ),
        main_step(1, Reply(text="ok"), last_user_contains="outer result"),
    )
    h = make({"task_tool.max_concurrent": 1})
    outcome = await h.run()
    assert outcome.status == "completed"
    assert sorted((r.depth, r.status) for r in h.runner.records()) == [(1, "completed"), (2, "completed")]
    assert h.runner.limiter.running == 0
    server.assert_done()


async def test_nested_delegation_with_one_slot_under_on_limit_error(server: ScriptedLLM, make: Make) -> None:
    """A parent waiting on its child is not running: its child may use its slot, also when on_limit=error."""
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Outer general work", "outer", "general")])),
        Step(
            match=Match(system_contains=sub("Outer general work"), turn=0),
            reply=Reply(tool_calls=[task_call("Inner search work", "inner")]),
        ),
        Step(match=Match(system_contains=sub("Inner search work")), reply=Reply(text="inner result")),
        Step(
            match=Match(system_contains=sub("Outer general work"), turn=1, last_user_contains="inner result"),
            reply=Reply(text="outer result"),
        ),
        main_step(1, Reply(text="ok"), last_user_contains="outer result"),
    )
    h = make({"task_tool.max_concurrent": 1, "task_tool.on_limit": "error"})
    outcome = await h.run()
    assert outcome.status == "completed"
    assert sorted(r.status for r in h.runner.records()) == ["completed", "completed"]
    assert h.runner.limiter.running == 0 and h.runner.limiter.on_limit == "error"
    server.assert_done()


# --- limits of one run ------------------------------------------------------------------------


async def test_idle_timeout(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Stuck search job", "look")])),
        Step(
            match=Match(system_contains=sub("Stuck search job")),
            reply=Reply(text="never"),
            fault=Fault(kind="stall", after_events=1, seconds=30),
        ),
        main_step(1, Reply(text="ok"), last_user_contains="timed out"),
    )
    h = make({"task_tool.idle_timeout_seconds": 1})
    started = time.monotonic()
    outcome = await h.run()
    assert outcome.status == "completed"
    assert time.monotonic() - started < 5
    (record,) = h.runner.records()
    assert record.status == "timed_out"
    assert record.error is not None
    assert record.error.startswith("Subagent task timed out after ")
    assert record.error.endswith("ms (no model output or tool progress for 1s, task_tool.idle_timeout_seconds)")
    (result,) = results_of(h)
    assert result.is_error and result.content.startswith(record.error)
    server.assert_done()


async def test_wall_clock_timeout_text(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Slow search job", "look", timeout_seconds=1)])),
        Step(match=Match(system_contains=sub("Slow search job")), reply=Reply(text="late"), latency_ms=5000),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    (record,) = h.runner.records()
    assert (record.status, record.error) == ("timed_out", "Subagent task timed out after 1000ms")
    server.assert_done()


async def test_token_budget_stops_with_partial_result(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Costly search job", "look")])),
        Step(
            match=Match(system_contains=sub("Costly search job")),
            reply=Reply(
                text="Looked at half of it.",
                tool_calls=[ToolCall(name="LS", input={})],
                usage=Usage(input_tokens=500, output_tokens=20),
            ),
        ),
        main_step(1, Reply(text="ok"), last_user_contains="token budget exceeded"),
    )
    h = make({"task_tool.max_tokens": 100})
    await h.run()
    (record,) = h.runner.records()
    assert record.status == "budget_exceeded"
    assert record.error == "token budget exceeded: 520 > 100 tokens"
    assert record.result == "Looked at half of it."
    (result,) = results_of(h)
    assert result.is_error
    assert "what it produced so far" in result.content and "Looked at half of it." in result.content
    assert len(requests_for(server, sub("Costly search job"))) == 1
    assert record.tool_calls == 0  # the stop came with the answer: its tool call never ran
    server.assert_done()


async def test_max_tool_calls_stops_the_run(server: ScriptedLLM, make: Make) -> None:
    desc = "Busy search job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look")])),
        Step(
            match=Match(system_contains=sub(desc), turn=0),
            reply=Reply(text="first look", tool_calls=[ToolCall(name="LS", input={})]),
        ),
        Step(
            match=Match(system_contains=sub(desc), turn=1),
            reply=Reply(text="second look", tool_calls=[ToolCall(name="LS", input={"path": "src"})]),
        ),
        Step(
            match=Match(system_contains=sub(desc), turn=2),
            reply=Reply(text="third look", tool_calls=[ToolCall(name="LS", input={"path": "."})]),
        ),
        main_step(1, Reply(text="ok"), last_user_contains="tool call limit reached"),
    )
    h = make({"task_tool.max_tool_calls": 2})
    await h.run()
    (record,) = h.runner.records()
    assert (record.status, record.error) == ("budget_exceeded", "tool call limit reached (2 calls)")
    assert record.tool_calls == 3 and record.result == "third look"
    server.assert_done()


async def test_max_tool_calls_allows_that_many_calls_and_an_answer(server: ScriptedLLM, make: Make) -> None:
    desc = "Frugal search job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look")])),
        Step(match=Match(system_contains=sub(desc), turn=0), reply=Reply(tool_calls=[ToolCall(name="LS", input={})])),
        Step(match=Match(system_contains=sub(desc), turn=1),
             reply=Reply(tool_calls=[ToolCall(name="LS", input={"path": "src"})])),
        Step(match=Match(system_contains=sub(desc), turn=2), reply=Reply(text="all found")),
        main_step(1, Reply(text="ok"), last_user_contains="all found"),
    )
    h = make({"task_tool.max_tool_calls": 2})
    await h.run()
    (record,) = h.runner.records()
    assert (record.status, record.tool_calls, record.result) == ("completed", 2, "all found")
    server.assert_done()


async def test_failing_subagent_is_a_tool_error_and_the_parent_goes_on(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Broken search job", "look")])),
        Step(match=Match(system_contains=sub("Broken search job")), fault=Fault(kind="http", status=500)),
        main_step(1, Reply(text="I will do it myself."), last_user_contains="stopped (failed)"),
    )
    h = make()
    outcome = await h.run()
    assert (outcome.status, outcome.result) == ("completed", "I will do it myself.")
    (record,) = h.runner.records()
    assert record.status == "failed" and record.error and "500" in record.error
    (result,) = results_of(h)
    assert result.is_error and result.content.startswith(record.error)
    finished = [e for e in h.events if isinstance(e, SubagentBlockFinishedEvent)]
    assert [e.short_result.split(":")[0] for e in finished] == ["Task failed"]
    server.assert_done()


# --- cancellation -----------------------------------------------------------------------------


async def test_cancel_one_subagent_while_its_sibling_runs(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Hanging search job", "a"), task_call("Quick search job", "b")])),
        Step(match=Match(system_contains=sub("Hanging search job")), reply=Reply(text="never"), latency_ms=20_000),
        Step(match=Match(system_contains=sub("Quick search job")), reply=Reply(text="quick result"), latency_ms=300),
        main_step(1, Reply(text="went on"), last_user_contains="quick result"),
    )
    h = make()
    run = asyncio.create_task(h.run())
    await server.wait_until_async(lambda s: len(requests_for(s, "# Task\n")) == 2)
    hanging = added(h)["Hanging search job"].task_id
    quick = added(h)["Quick search job"].task_id
    assert h.runner.handles[quick].record.status == "running"
    assert await h.runner.cancel(hanging)
    outcome = await run
    assert (outcome.status, outcome.result) == ("completed", "went on")
    cancelled, completed = results_of(h)
    assert cancelled.is_error and "cancelled" in cancelled.content
    assert not completed.is_error and "quick result" in completed.content
    assert h.runner.handles[hanging].record.status == "cancelled"
    assert h.runner.handles[quick].record.status == "completed"
    await h.store.flush()
    assert h.store.get_task(hanging).status == "cancelled"  # type: ignore[union-attr]
    server.assert_done()


async def test_cancelling_the_parent_run_cancels_every_task(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(
            0,
            Reply(
                tool_calls=[
                    task_call("Hanging job one", "a"),
                    task_call("Hanging job two", "b"),
                    task_call("Queued job three", "c"),
                ]
            ),
        ),
        Step(match=Match(system_contains=sub("Hanging job one")), reply=Reply(text="x"), latency_ms=20_000),
        Step(match=Match(system_contains=sub("Hanging job two")), reply=Reply(text="x"), latency_ms=20_000),
    )
    h = make({"task_tool.max_concurrent": 2})
    run = asyncio.create_task(h.run())
    await server.wait_until_async(lambda s: len(requests_for(s, "# Task\n")) == 2)
    await h.wait_for(lambda: len(added(h)) == 3)
    queued = added(h)["Queued job three"].task_id
    assert h.runner.handles[queued].record.status == "queued"
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    await h.store.flush()
    rows = h.store.list_tasks(parent_session_id=h.session.id)
    assert len(rows) == 3
    assert {r.status for r in rows} == {"cancelled"}
    assert all(r.finished_at is not None for r in rows)
    assert h.runner.limiter.running == 0 and h.runner.limiter.queued == 0
    server.assert_done()


async def test_cancel_a_queued_task(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Running search job", "a"), task_call("Waiting search job", "b")])),
        Step(match=Match(system_contains=sub("Running search job")), reply=Reply(text="first"), latency_ms=300),
        main_step(1, Reply(text="ok")),
    )
    h = make({"task_tool.max_concurrent": 1})
    run = asyncio.create_task(h.run())
    await h.wait_for(lambda: len(added(h)) == 2)
    waiting = added(h)["Waiting search job"].task_id
    assert h.runner.handles[waiting].record.status == "queued"
    assert await h.runner.cancel(waiting)
    outcome = await run
    assert outcome.status == "completed"
    first, second = results_of(h)
    assert not first.is_error
    assert second.is_error and "cancelled" in second.content
    record = h.runner.handles[waiting].record
    assert record.status == "cancelled" and record.started_at is None
    assert not requests_for(server, sub("Waiting search job"))
    assert h.runner.limiter.running == 0 and h.runner.limiter.queued == 0
    server.assert_done()


# --- background tasks -------------------------------------------------------------------------


async def test_background_task_notice_and_task_output(server: ScriptedLLM, make: Make) -> None:
    desc = "Background search job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look", run_in_background=True)])),
        Step(match=Match(system_contains=sub(desc)), reply=Reply(text="background result")),
        main_step(1, Reply(text="started it"), last_user_contains="Started background task"),
        main_step(2, Reply(text="it finished"), last_user_contains="<system-notice>Background task"),
    )
    h = make()

    def add_output_step(event: SubagentBlockAddedEvent) -> None:
        server.add_steps(
            main_step(3, Reply(tool_calls=[ToolCall(name="TaskOutput", input={"task_id": event.task_id})])),
            main_step(4, Reply(text="read it"), last_user_contains="background result"),
        )

    on_added(h, add_output_step)
    outcome = await h.run()
    assert outcome.result == "started it"
    (started,) = results_of(h)
    task_id = added(h)[desc].task_id
    assert not started.is_error and started.content.startswith(f"Started background task {task_id} (explore, light)")
    await h.wait_for(lambda: not h.runner._background)  # the background job ended
    outcome = await h.run("anything new?")  # the person's next message carries the notice
    assert outcome.result == "it finished"
    notice = f"<system-notice>Background task {task_id} (explore) finished: completed."
    assert notice in user_text(requests_for(server, MAIN)[2].body, 2)
    outcome = await h.run("show me")
    assert outcome.result == "read it"
    output = results_of(h)[-1]
    assert output.content.startswith(f'Task {task_id} (explore): completed\n\n<subagent_result task_id="{task_id}">')
    assert json.dumps(requests_for(server, MAIN)[4].body).count("<system-notice>") == 1  # told once
    server.assert_done()


async def test_task_output_waits_for_a_running_task(server: ScriptedLLM, make: Make) -> None:
    desc = "Background slow job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look", run_in_background=True)])),
        Step(match=Match(system_contains=sub(desc)), reply=Reply(text="slow result"), latency_ms=500),
        main_step(2, Reply(text="ok"), last_user_contains="slow result"),
    )
    h = make()

    def add_wait_step(event: SubagentBlockAddedEvent) -> None:
        server.add_steps(
            main_step(
                1,
                Reply(
                    tool_calls=[
                        ToolCall(name="TaskOutput", input={"task_id": event.task_id}),
                        ToolCall(name="TaskOutput", input={"task_id": event.task_id, "wait_seconds": 10}),
                    ]
                ),
            )
        )

    on_added(h, add_wait_step)
    await h.run()
    task_id = added(h)[desc].task_id
    _, now, waited = results_of(h)
    assert now.content.startswith(f"Task {task_id} (explore): running. ")
    assert "call TaskOutput again to wait" in now.content
    assert waited.content.startswith(f"Task {task_id} (explore): completed")
    assert "slow result" in waited.content
    main_turn1 = requests_for(server, MAIN)[1]
    (sub_request,) = requests_for(server, sub(desc))
    assert sub_request.finished_at is not None and main_turn1.received_at < sub_request.finished_at
    server.assert_done()


@pytest.mark.parametrize("by", ["id", "label"])
async def test_task_cancel_stops_a_background_task(server: ScriptedLLM, make: Make, by: str) -> None:
    desc = "Background hanging job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look", run_in_background=True)])),
        Step(match=Match(system_contains=sub(desc)), reply=Reply(text="never"), latency_ms=20_000, optional=True),
        main_step(2, Reply(text="ok"), last_user_contains="Cancelled task"),
    )
    h = make()

    def add_cancel_step(event: SubagentBlockAddedEvent) -> None:
        server.add_steps(
            main_step(1, Reply(tool_calls=[ToolCall(name="TaskCancel", input={
                "task_id": event.task_id if by == "id" else "explore#1"})]))  # TaskOutput's names serve too
        )

    on_added(h, add_cancel_step)
    await h.run()
    task_id = added(h)[desc].task_id
    cancel_result = results_of(h)[-1]
    assert cancel_result.content == (
        f"Cancelled task {task_id if by == 'id' else 'explore#1'}. Its transcript is kept; resume it with "
        "Task(resume=...)."
    )
    await h.wait_for(lambda: not h.runner._background)
    record = h.runner.handles[task_id].record
    assert (record.status, record.error) == ("cancelled", "cancelled by the parent agent")
    await h.store.flush()
    assert h.store.get_task(task_id).status == "cancelled"  # type: ignore[union-attr]
    server.assert_done()


async def test_session_end_cancels_background_leftovers(server: ScriptedLLM, make: Make) -> None:
    desc = "Background forever job"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look", run_in_background=True)])),
        Step(match=Match(system_contains=sub(desc)), reply=Reply(text="never"), latency_ms=20_000, optional=True),
        main_step(1, Reply(text="bye")),
    )
    h = make()
    await h.run()
    task_id = added(h)[desc].task_id
    assert h.runner.handles[task_id].record.status in ("queued", "running")
    async with asyncio.timeout(5):
        await h.runner.aclose()
    record = h.runner.handles[task_id].record
    assert (record.status, record.error) == ("cancelled", "the session ended")
    await h.store.flush()
    stored = h.store.get_task(task_id)
    assert stored is not None and stored.status == "cancelled" and stored.finished_at is not None
    server.assert_done()


async def test_task_output_offset_returns_the_rest_of_a_cut_result(server: ScriptedLLM, make: Make) -> None:
    desc = "Long search job"
    answer = "".join(f"{i:09d}\n" for i in range(10))  # 100 characters
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "look")])),
        Step(match=Match(system_contains=sub(desc)), reply=Reply(text=answer, chunk_size=50)),
    )
    h = make({"task_tool.max_result_tokens": 10})  # 40 characters

    def add_steps(event: SubagentBlockAddedEvent) -> None:
        tid = event.task_id
        server.add_steps(
            main_step(
                1,
                Reply(tool_calls=[ToolCall(name="TaskOutput", input={"task_id": tid, "offset": 40})]),
                last_user_contains=f'TaskOutput(task_id="{tid}", offset=40) returns the rest.',
            ),
            main_step(
                2,
                Reply(tool_calls=[ToolCall(name="TaskOutput", input={"task_id": tid, "offset": 80})]),
                last_user_contains=f'TaskOutput(task_id="{tid}", offset=80) returns the rest.',
            ),
            main_step(3, Reply(text="read all")),
        )

    on_added(h, add_steps)
    outcome = await h.run()
    assert outcome.result == "read all"
    tid = added(h)[desc].task_id
    first, second, third = (r.content for r in results_of(h))
    assert answer[:40] in first and answer[40:] not in first
    assert "[Result cut: showing characters 0-40 of 100" in first and "60 characters were left out" in first
    assert f'<subagent_result task_id="{tid}" offset="40">\n{answer[40:80]}\n</subagent_result>' in second
    assert "[Result cut: showing characters 40-80 of 100" in second
    assert f'<subagent_result task_id="{tid}" offset="80">\n{answer[80:]}\n</subagent_result>' in third
    assert "Result cut" not in third
    assert h.runner.records()[0].result == answer  # stored whole
    server.assert_done()


# --- resume -----------------------------------------------------------------------------------


async def test_resume_continues_a_finished_transcript(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("First look around", "look at module A")])),
        Step(match=Match(system_contains=sub("First look around"), turn=0), reply=Reply(text="A is fine")),
        Step(
            match=Match(
                system_contains=sub("Continue the look"),
                turn=1,
                any_message_contains="A is fine",
                last_user_contains="now look at B",
            ),
            reply=Reply(text="B is broken"),
        ),
        main_step(2, Reply(text="done"), last_user_contains="B is broken"),
    )
    h = make()

    def add_resume(event: SubagentBlockAddedEvent) -> None:
        if event.description == "First look around":
            server.add_steps(
                main_step(1, Reply(tool_calls=[task_call("Continue the look", "now look at B", resume=event.task_id)]))
            )

    on_added(h, add_resume)
    outcome = await h.run()
    assert outcome.result == "done"
    first, second = h.runner.records()
    assert first.task_id != second.task_id
    assert first.child_session_id == second.child_session_id
    assert (first.status, second.status) == ("completed", "completed")
    assert second.result == "B is broken"
    resumed = requests_for(server, sub("Continue the look"))[0]
    assert user_text(resumed.body, 0) == "look at module A"
    assert user_text(resumed.body, 1) == "now look at B"
    server.assert_done()


async def test_resume_a_failed_task_from_the_store_in_a_new_session(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Broken search job", "look at module A")])),
        Step(match=Match(system_contains=sub("Broken search job")), fault=Fault(kind="http", status=500)),
        main_step(1, Reply(text="it failed")),
    )
    first = make()
    await first.run()
    (failed,) = first.runner.records()
    assert failed.status == "failed"
    await first.store.flush()
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Retry the search", "try again", resume=failed.task_id)])),
        Step(
            match=Match(
                system_contains=sub("Retry the search"),
                any_message_contains="look at module A",
                last_user_contains="try again",
            ),
            reply=Reply(text="A is fine"),
        ),
        main_step(1, Reply(text="ok"), last_user_contains="A is fine"),
    )
    second = make(store=first.store)  # a new runner and main session: the transcript comes from the store
    await second.run()
    (resumed,) = second.runner.records()
    assert (resumed.status, resumed.subagent_type) == ("completed", "explore")
    assert resumed.child_session_id == failed.child_session_id and resumed.task_id != failed.task_id
    request = requests_for(server, sub("Retry the search"))[0]
    assert user_text(request.body, 0) == "look at module A"
    server.assert_done()


async def test_resume_of_an_unknown_task(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Continue the look", "go on", resume="tsk_nope")])),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    (result,) = results_of(h)
    assert result.is_error and result.content == "Invalid parameters: resume: no finished task 'tsk_nope'"
    server.assert_done()


# --- output schema, expected response, prompts ------------------------------------------------

SCHEMA = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}


async def test_output_schema_gets_one_repair_turn(server: ScriptedLLM, make: Make) -> None:
    desc = "Count the files"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "how many?", output_schema=SCHEMA)])),
        Step(match=Match(system_contains=sub(desc), turn=0), reply=Reply(text='{"count": "three"}')),
        Step(
            match=Match(
                system_contains=sub(desc),
                turn=1,
                last_user_contains="does not satisfy the required JSON schema: count: 'three' is not of type",
            ),
            reply=Reply(text='{"count": 3}'),
        ),
        main_step(1, Reply(text="ok"), last_user_contains='{"count": 3}'),
    )
    h = make()
    await h.run()
    (record,) = h.runner.records()
    assert (record.status, record.result) == ("completed", '{"count": 3}')
    first = requests_for(server, sub(desc))[0]
    assert "# Output format" in user_text(first.body) and '"required": [\n    "count"\n  ]' in user_text(first.body)
    server.assert_done()


async def test_output_schema_still_invalid_after_repair_fails(server: ScriptedLLM, make: Make) -> None:
    desc = "Count the files"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "how many?", output_schema=SCHEMA)])),
        Step(match=Match(system_contains=sub(desc), turn=0), reply=Reply(text="three files")),
        Step(
            match=Match(system_contains=sub(desc), turn=1, last_user_contains="not valid JSON"),
            reply=Reply(text='{"total": 3}'),
        ),
        main_step(1, Reply(text="ok"), last_user_contains="output_schema not satisfied"),
    )
    h = make()
    await h.run()
    (record,) = h.runner.records()
    assert record.status == "failed"
    assert record.error == "output_schema not satisfied after one repair turn: (root): 'count' is a required property"
    assert len(requests_for(server, sub(desc))) == 2
    server.assert_done()


async def test_system_prompt_and_user_message_of_a_subagent(server: ScriptedLLM, ws: Path, make: Make) -> None:
    write_agent(ws, "reviewer", "Reviews diffs for bugs.", body="You are the reviewer. Review carefully.")
    desc = "Review the code"
    server.add_steps(
        main_step(
            0,
            Reply(
                tool_calls=[
                    task_call(desc, "Review src/api.", "reviewer", expected_response="A bullet list of bugs"),
                    task_call("Find the code", "where is login?"),
                ]
            ),
        ),
        Step(match=Match(system_contains=sub(desc)), reply=Reply(text="- none")),
        Step(match=Match(system_contains=sub("Find the code")), reply=Reply(text="src/api/auth.py:1")),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    (review,) = requests_for(server, sub(desc))
    role, deferred = system_of(review).split("\n\n# Task\nReview the code")[0].split("\n\n# Deferred tools\n")
    assert role == "You are the reviewer. Review carefully." and "\n- SendMessage: " in deferred  # the stable part
    assert user_text(review.body) == "Review src/api.\n\n# Expected response\nA bullet list of bugs"
    assert len([m for m in review.body["messages"] if m["role"] == "user"]) == 1  # nothing of the parent's
    (explore,) = requests_for(server, sub("Find the code"))
    explore_role = h.registry.types["explore"].prompt.splitlines()[0]
    assert system_of(explore).startswith(explore_role)
    assert system_of(explore).endswith("\n\n# Task\nFind the code")
    assert user_text(explore.body) == "where is login?"
    assert MAIN not in json.dumps(explore.body)
    server.assert_done()


# --- usage, record, events --------------------------------------------------------------------


async def test_usage_rolls_up_to_the_parent_and_the_store(server: ScriptedLLM, make: Make) -> None:
    desc = "Find the code"
    server.add_steps(
        Step(
            match=Match(system_contains=MAIN, turn=0),
            reply=Reply(tool_calls=[task_call(desc, "where")], usage=Usage(input_tokens=10, output_tokens=5)),
        ),
        Step(
            match=Match(system_contains=sub(desc)),
            reply=Reply(text="here", usage=Usage(input_tokens=100, output_tokens=20)),
        ),
        Step(
            match=Match(system_contains=MAIN, turn=1),
            reply=Reply(text="ok", usage=Usage(input_tokens=30, output_tokens=7)),
        ),
    )
    h = make()
    await h.run()
    assert (h.session.usage.input_tokens, h.session.usage.output_tokens) == (40, 12)
    total = h.session.total_usage
    assert (total.input_tokens, total.output_tokens) == (140, 32)
    (record,) = h.runner.records()
    assert (record.input_tokens, record.output_tokens) == (100, 20)
    await h.store.flush()
    rollup = h.store.session_usage_rollup(h.session.id)
    assert rollup is not None
    assert (rollup.sessions, rollup.input_tokens, rollup.output_tokens) == (2, 140, 32)
    server.assert_done()


async def test_task_record_is_complete_and_stored_before_the_parent_goes_on(
    server: ScriptedLLM, ws: Path, make: Make
) -> None:
    desc = "Write a module"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "create src/new.py", "general")])),
        Step(
            match=Match(system_contains=sub(desc), turn=0),
            reply=Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "src/new.py", "content": "x = 1\n"})]),
        ),
        Step(match=Match(system_contains=sub(desc), turn=1), reply=Reply(text="Created src/new.py.")),
        main_step(1, Reply(text="ok"), last_user_contains="Files modified: src/new.py"),
    )
    h = make()
    seen_in_store: list[str] = []

    def check_store(event: Event) -> None:
        # The parent's tool results are appended right before its next request: the record must be on disk.
        if (
            isinstance(event, MessageAddedEvent)
            and event.session_id == h.session.id
            and any(isinstance(b, ToolResultBlock) for b in event.message.content)
        ):
            (record,) = h.runner.records()
            stored = h.store.get_task(record.task_id)
            seen_in_store.append(stored.status if stored else "missing")

    h.bus.subscribe(check_store)
    await h.run()
    assert seen_in_store == ["completed"]
    await h.store.flush()
    (record,) = h.runner.records()
    stored = h.store.get_task(record.task_id)
    assert stored is not None
    assert stored.model_dump(exclude={"started_at", "finished_at"}) == record.model_dump(
        exclude={"started_at", "finished_at"}
    )
    call_id = next(e.tool_call_id for e in h.events if isinstance(e, ToolCallStartedEvent) and e.name == "Task")
    assert stored.parent_session_id == h.session.id and stored.parent_task_id is None
    assert stored.parent_tool_call_id == call_id
    assert stored.child_session_id and stored.child_session_id != h.session.id
    assert (stored.depth, stored.chain, stored.subagent_type) == (1, ["main", "general"], "general")
    assert (stored.description, stored.prompt, stored.model_used) == (desc, "create src/new.py", "main")
    assert (stored.status, stored.result, stored.error) == ("completed", "Created src/new.py.", None)
    assert [t.model_dump() for t in stored.tool_summary] == [{"tool": "Write", "count": 1}]
    assert stored.files_modified == ["src/new.py"]
    assert stored.tool_calls == 1
    assert stored.time_ms is not None and stored.time_ms > 0
    assert stored.input_tokens > 0 and stored.output_tokens > 0
    assert stored.started_at is not None and stored.finished_at is not None
    assert stored.started_at <= stored.finished_at
    assert (ws / "src" / "new.py").exists()
    server.assert_done()


async def test_events_of_a_subagent(server: ScriptedLLM, make: Make) -> None:
    desc = "Find the code"
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(desc, "where")])),
        Step(
            match=Match(system_contains=sub(desc), turn=0),
            reply=Reply(text="Looking.", tool_calls=[ToolCall(name="LS", input={})]),
        ),
        Step(match=Match(system_contains=sub(desc), turn=1), reply=Reply(text="here")),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    (record,) = h.runner.records()
    task_id = record.task_id
    call_id = next(e.tool_call_id for e in h.events if isinstance(e, ToolCallStartedEvent) and e.name == "Task")
    (block,) = [e for e in h.events if isinstance(e, SubagentBlockAddedEvent)]
    assert (block.session_id, block.task_id, block.parent_tool_call_id) == (h.session.id, task_id, call_id)
    assert (block.subagent_type, block.description, block.model, block.depth) == ("explore", desc, "light", 1)
    updates = [e for e in h.events if isinstance(e, SubagentBlockUpdatedEvent)]
    assert updates and all(e.task_id == task_id for e in updates)
    assert updates[0].status == "running"
    assert updates[-1].tool_calls == 1 and updates[-1].input_tokens > 0
    (finished,) = [e for e in h.events if isinstance(e, SubagentBlockFinishedEvent)]
    assert (finished.task_id, finished.status, finished.short_result) == (
        task_id,
        "completed",
        "Task completed by explore",
    )
    order = [h.events.index(e) for e in (block, updates[0], finished)]
    assert order == sorted(order)
    # Every event of the child reaches the parent wrapped, with the task and the Task call it belongs to.
    assert {e.session_id for e in h.events} == {h.session.id}
    wrapped = h.subagent_events()
    assert {(e.task_id, e.parent_tool_call_id, e.subagent_type) for e in wrapped} == {(task_id, call_id, "explore")}
    assert {e.event.session_id for e in wrapped} == {record.child_session_id}
    kinds = [e.event.kind for e in wrapped]
    for kind in (
        "session_started",
        "message_added",
        "text_delta",
        "usage",
        "tool_call_started",
        "tool_call_finished",
        "run_finished",
    ):
        assert kind in kinds
    assert kinds[0] == "session_started" and kinds[-1] == "run_finished"
    server.assert_done()


async def test_a_fan_out_shares_what_every_subagent_of_a_type_is_built_from(server: ScriptedLLM, make: Make) -> None:
    """Three explore tasks of one turn: one WebSearch searcher for the model, one role prompt and one tool list
    (the same specs in every request), and every record completed in the store."""
    names = ["Look one", "Look two", "Look three"]
    server.add_steps(main_step(0, Reply(tool_calls=[task_call(n, n) for n in names])))
    server.add_steps(*(Step(match=Match(system_contains=sub(n)), reply=Reply(text=f"seen: {n}")) for n in names))
    server.add_steps(main_step(1, Reply(text="ok")))
    h = make()
    contexts: list[Any] = []
    build = h.runner.kit.tool_context

    def kept(*args: Any, **kwargs: Any) -> Any:
        contexts.append(build(*args, **kwargs))
        return contexts[-1]

    h.runner.kit.tool_context = kept  # type: ignore[method-assign]
    await h.run()
    assert len(contexts) == 3 and all(c.web_search is contexts[0].web_search for c in contexts)
    subs = requests_for(server, "# Task\n")
    assert len(subs) == 3
    assert all(r.request.tools == subs[0].request.tools for r in subs) and tools_of(subs[0])
    heads = {system_of(r).split("# Task\n")[0] for r in subs}
    assert len(heads) == 1
    await h.store.flush()
    assert sorted(r.status for r in h.store.list_tasks(h.session.id)) == ["completed"] * 3
    server.assert_done()



async def test_a_task_is_saved_queued_only_while_it_waits_for_a_slot(
    server: ScriptedLLM, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One slot, two tasks of one turn: the first runs at once (saved running, then finished: no queued write before
    its first request), the second is saved queued while it waits, so a crash meanwhile still finds its record."""
    import agentcli.store

    names = ["First look", "Second look"]
    server.add_steps(main_step(0, Reply(tool_calls=[task_call(n, n) for n in names])))
    server.add_steps(*(Step(match=Match(system_contains=sub(n)), reply=Reply(text=f"seen: {n}")) for n in names))
    server.add_steps(main_step(1, Reply(text="ok")))
    h = make({"task_tool.max_concurrent": 1})
    saved: list[tuple[str, str]] = []
    save_task = agentcli.store.save_task

    def spy(record: Any) -> Any:
        saved.append((record.description, record.status))
        return save_task(record)

    monkeypatch.setattr(agentcli.store, "save_task", spy)
    await h.run()
    assert [status for name, status in saved if name == "First look"] == ["running", "completed"]
    assert [status for name, status in saved if name == "Second look"] == ["queued", "running", "completed"]
    await h.store.flush()
    assert sorted(r.status for r in h.store.list_tasks(h.session.id)) == ["completed"] * 2
    server.assert_done()
