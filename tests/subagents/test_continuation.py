"""Delegation never loses track: every Task result names its task and how to go on with it; resume keeps
the type and the model (a `model` in the call is ignored, and the result says so); verbose logs carry
each subagent's tool calls."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentcli.events import SubagentBlockAddedEvent
from agentcli.testing.fake_llm import Fault
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from tests.subagents.harness import Harness, Make, requests_for, sub, task_call
from tests.subagents.test_runner import main_step, on_added, results_of


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("print('a')\n")
    return workspace


async def test_every_task_result_names_its_task_and_how_to_continue(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Good search job", "a"), task_call("Broken search job", "b")])),
        Step(match=Match(system_contains=sub("Good search job")), reply=Reply(text="found it")),
        Step(match=Match(system_contains=sub("Broken search job")), fault=Fault(kind="http", status=500)),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    await h.run()
    good, broken = h.runner.records()
    completed, failed = results_of(h)
    assert (good.status, broken.status) == ("completed", "failed")
    last = completed.content.splitlines()[-1]
    assert last == (
        f'[task {good.task_id}: TaskOutput(task_id="{good.task_id}") returns this result again; '
        f'Task(resume="{good.task_id}", prompt=...) continues it with its transcript (same type and model).]'
    )
    assert failed.is_error and "before producing an answer" in failed.content
    assert failed.content.splitlines()[-1] == (
        f'[task {broken.task_id} (failed): its transcript is kept; Task(resume="{broken.task_id}", prompt=...) '
        f'continues it with its transcript (same type and model); TaskOutput(task_id="{broken.task_id}") '
        "returns what it produced.]"
    )
    server.assert_done()


def _first_task_then_resume(
    server: ScriptedLLM, make: Make, model: str | None, *, background: bool = False, **overrides: object
) -> Harness:
    """A light explore task; then the main agent resumes it (naming another type, and `model` when given)."""
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("First look around", "look at A")])),
        Step(match=Match(system_contains=sub("First look around"), turn=0), reply=Reply(text="A is fine")),
    )
    h = make(overrides or None)

    def resume(event: SubagentBlockAddedEvent) -> None:
        if event.description == "First look around":
            extra: dict[str, object] = {"model": model} if model else {}
            if background:
                extra["run_in_background"] = True
            call = task_call("Go on looking", "now B", subagent_type="general", resume=event.task_id, **extra)
            server.add_steps(main_step(1, Reply(tool_calls=[call])))

    on_added(h, resume)
    return h


async def test_resume_keeps_the_type_and_the_model(server: ScriptedLLM, make: Make) -> None:
    h = _first_task_then_resume(server, make, None)
    server.add_steps(
        Step(match=Match(system_contains=sub("Go on looking"), any_message_contains="A is fine"),
             reply=Reply(text="B is fine")),
        main_step(2, Reply(text="done"), last_user_contains="Subagent (explore, light) completed."),
    )
    await h.run()
    assert [(r.subagent_type, r.model_used) for r in h.runner.records()] == [("explore", "light")] * 2
    assert {str(r.body["model"]) for r in requests_for(server, "# Task\n")} == {"m-light"}
    server.assert_done()


async def test_resume_with_another_model_keeps_the_tasks_model_and_says_so(server: ScriptedLLM, make: Make) -> None:
    """SPEC §4: a resumed task goes on with the same model (its transcript and prompt cache are that model's);
    a `model` in the call is not followed silently: the result's first line says it was ignored."""
    h = _first_task_then_resume(server, make, "main")
    note = "Note: model='main' was ignored: a resumed task keeps its model (light)."
    server.add_steps(
        Step(match=Match(system_contains=sub("Go on looking"), any_message_contains="A is fine"),
             reply=Reply(text="B is fine")),
        main_step(2, Reply(text="done"), last_user_contains="Subagent (explore, light) completed."),
    )
    await h.run()
    assert [r.model_used for r in h.runner.records()] == ["light", "light"]
    assert {str(r.body["model"]) for r in requests_for(server, "# Task\n")} == {"m-light"}
    first, resumed = results_of(h)
    assert "ignored" not in first.content
    assert resumed.content.startswith(f"{note} Start a new Task (without resume) to use another model.\n\n"
                                      "Subagent (explore, light) completed.")
    server.assert_done()


async def test_a_background_resume_with_another_model_says_so_at_once(server: ScriptedLLM, make: Make) -> None:
    h = _first_task_then_resume(server, make, "main", background=True)
    server.add_steps(
        Step(match=Match(system_contains=sub("Go on looking")), reply=Reply(text="B is fine")),
        main_step(2, Reply(text="started"), last_user_contains="Started background task"),
    )
    await h.run()
    await h.wait_for(lambda: not h.runner._background)  # the background job ended
    assert [r.model_used for r in h.runner.records()] == ["light", "light"]
    started = results_of(h)[1].content
    assert started.startswith("Note: model='main' was ignored: a resumed task keeps its model (light).")
    assert "\n\nStarted background task " in started and "(explore, light)" in started
    server.assert_done()


async def test_resume_naming_the_tasks_own_model_has_no_note(server: ScriptedLLM, make: Make) -> None:
    h = _first_task_then_resume(server, make, "haiku")  # an alias of light: the task's model
    server.add_steps(
        Step(match=Match(system_contains=sub("Go on looking")), reply=Reply(text="B is fine")),
        main_step(2, Reply(text="done"), last_user_contains="Subagent (explore, light) completed."),
    )
    await h.run()
    assert [r.model_used for r in h.runner.records()] == ["light", "light"]
    assert results_of(h)[1].content.startswith("Subagent (explore, light) completed.")
    server.assert_done()


async def test_resume_with_a_model_is_refused_where_override_is_off(server: ScriptedLLM, make: Make) -> None:
    h = _first_task_then_resume(server, make, "main", **{"task_tool.allow_model_override": False})
    server.add_steps(main_step(2, Reply(text="done"), last_user_contains="model override is disabled"))
    await h.run()
    assert [r.model_used for r in h.runner.records()] == ["light"]
    server.assert_done()


async def test_verbose_logs_carry_each_subagent_tool_call(
    server: ScriptedLLM, make: Make, caplog: pytest.LogCaptureFixture
) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Read the file", "read a.py")])),
        Step(match=Match(system_contains=sub("Read the file"), turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "a.py"}),
                                     ToolCall(name="Read", input={"file_path": "missing.py"})])),
        Step(match=Match(system_contains=sub("Read the file"), turn=1), reply=Reply(text="it prints a")),
        main_step(1, Reply(text="ok")),
    )
    h = make()
    with caplog.at_level(logging.DEBUG, logger="agentcli.subagents"):
        await h.run()
    (record,) = h.runner.records()
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith(f"subagent {record.task_id} created: type explore, model light") for line in lines)
    assert f"subagent {record.task_id} (explore#1) tool call Read: a.py" in lines
    assert any(line.startswith(f"subagent {record.task_id} (explore#1) tool call Read ok in ") for line in lines)
    assert any(line.startswith(f"subagent {record.task_id} (explore#1) tool call Read failed in ") for line in lines)
    assert any(line.startswith(f"subagent {record.task_id} completed: model light, 2 tool calls") for line in lines)
    server.assert_done()
