"""The Planner decides a Task call without running anything: no event loop, no server, no store."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from agentcli.agent.session import Session
from agentcli.config.load import load_config
from agentcli.llm.models import ResolvedModel, with_effort
from agentcli.store.records import TaskRecord
from agentcli.subagents.definitions.registry import AgentRegistry
from agentcli.subagents.plan import Planner, Refusal, TaskPlan, inherited_scopes, user_message
from agentcli.subagents.task_tool import TaskArgs
from agentcli.subagents.toolbox import Toolbox
from tests.subagents.harness import write_agent

TODAY = date(2026, 11, 2)
MODEL = ResolvedModel("main", "anthropic", "m", None, "k", 16000)


def planner(ws: Path, monkeypatch: pytest.MonkeyPatch, **overrides: object) -> Planner:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    cfg: dict[str, object] = {"models.main.model": "m", "models.light.model": "m-light", **overrides}
    settings = load_config(workspace=ws, env={"ANTHROPIC_API_KEY": "k"}, overrides=cfg).settings
    return Planner(settings, AgentRegistry.load(ws), ws, Toolbox.builtin().classes, instructions="")


def main_session(ws: Path) -> Session:
    return Session(system_prompt="main", model=MODEL, workspace=ws)


def args(agent: str = "explore", **extra: object) -> TaskArgs:
    return TaskArgs.model_validate({"description": "Do the work", "prompt": "p", "subagent_type": agent, **extra})


def planned(result: TaskPlan | Refusal) -> TaskPlan:
    assert isinstance(result, TaskPlan), result
    return result


def test_confinement_is_inherited_and_intersected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_agent(tmp_path, "worker", "Works.")
    write_agent(tmp_path, "lead", "Reads and delegates.", tools="Read, Grep, Task")
    p = planner(tmp_path, monkeypatch)
    main = main_session(tmp_path)
    worker = planned(p.plan(args("worker", write_paths=["src/**"]), main, (), None, TODAY))
    worker_scopes = inherited_scopes(worker.write_scopes, worker.write_paths, worker.agent_type.read_only)
    assert worker.write_scopes == () and worker_scopes == (("src/**",),)
    assert inherited_scopes(worker_scopes, ["src/api/**"], False) == (("src/**",), ("src/api/**",))
    lead = planned(p.plan(args("lead"), main, (), None, TODAY))
    lead_scopes = inherited_scopes(lead.write_scopes, lead.write_paths, lead.agent_type.read_only)
    assert lead_scopes == ((),)  # below a read-only type: no write can match
    general = p.registry.types["general"]
    names = p.tool_names(general, 2, None, lead_scopes)
    assert isinstance(names, list) and not set(names) & {"Write", "Edit", "MultiEdit", "Bash"}
    names = p.tool_names(general, 2, None, worker_scopes)
    assert isinstance(names, list) and "Write" in names and "Bash" not in names


def test_tools_follow_type_depth_and_deny_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = planner(tmp_path, monkeypatch, **{"task_tool.max_depth": 2, "task_tool.deny_tools": ["Bash"]})
    general = p.registry.types["general"]
    shallow = p.tool_names(general, 1, None)
    deep = p.tool_names(general, 2, None)
    assert isinstance(shallow, list) and isinstance(deep, list)
    assert {"Task", "TaskOutput", "TaskCancel", "Write"} <= set(shallow) and "Bash" not in shallow
    assert "Task" not in deep and "Write" in deep  # the depth rule: no delegation at max_depth
    explore = p.tool_names(p.registry.types["explore"], 1, None)
    assert isinstance(explore, list) and set(explore) == {
        "Read", "LS", "Glob", "Grep", "TodoWrite", "LSP", "AskUserQuestion", "SendMessage", "ListAgents"}
    assert p.withheld(2) == dict.fromkeys(("Task", "TaskOutput", "TaskCancel"),
                                          "Maximum sub-agent depth exceeded (max_depth=2)")
    assert p.withheld(1) == {}


def test_write_paths_need_a_writer_and_drop_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = planner(tmp_path, monkeypatch)
    refused = p.plan(args("explore", write_paths=["src/**"]), main_session(tmp_path), (), None, TODAY)
    assert isinstance(refused, Refusal) and refused.code == "FORBIDDEN"
    assert refused.message.startswith("Subagent lacks permission for required tools: Write, Edit (type explore")
    general = planned(p.plan(args("general", write_paths=["src/**"]), main_session(tmp_path), (), None, TODAY))
    assert "Write" in general.tool_names and "Bash" not in general.tool_names
    below_read_only = p.plan(args("general", write_paths=["src/**"]), main_session(tmp_path), ((),), None, TODAY)
    assert isinstance(below_read_only, Refusal) and "below a read-only agent" in below_read_only.message


def test_refusals_carry_spec_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = planner(tmp_path, monkeypatch)
    main = main_session(tmp_path)
    missing = p.plan(args("nobody"), main, (), None, TODAY)
    assert isinstance(missing, Refusal) and missing.code == "NOT_FOUND"
    assert missing.message.startswith("Subagent 'nobody' not found. Available: ")
    result = missing.result()
    assert result.is_error and result.metadata == {"code": "NOT_FOUND", "short_result": "Task delegation failed"}
    resume = p.plan(args(resume="tsk_gone"), main, (), None, TODAY)
    assert resume == Refusal("Invalid parameters: resume: no finished task 'tsk_gone'", "INVALID_PARAM")
    child = Session(system_prompt="c", model=MODEL, workspace=tmp_path, depth=1, chain=("main", "explore"))
    circular = p.plan(args("explore"), child, (), None, TODAY)
    assert circular == Refusal("Circular delegation prevented: main → explore → explore", "CIRCULAR")
    bad_model = p.plan(args("explore", model="nowhere:x"), main, (), None, TODAY)
    assert isinstance(bad_model, Refusal) and bad_model.code == "INTERNAL_ERROR"
    empty = Planner(p.settings, AgentRegistry([]), tmp_path, {}, "")
    assert empty.plan(args(), main, (), None, TODAY) == Refusal("No subagents available for delegation", "NOT_FOUND")


def test_model_timeout_and_texts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_agent(tmp_path, "reviewer", "Reviews code.", body="You are the reviewer on $date.")
    limits = {"task_tool.max_timeout_seconds": 60, "task_tool.default_timeout_seconds": 45}
    p = planner(tmp_path, monkeypatch, **limits)
    main = main_session(tmp_path)
    plan = planned(p.plan(args("reviewer", timeout_seconds=30, expected_response="bullets", effort="low",
                                write_paths=["docs/**"]), main, (), None, TODAY))
    assert plan.model == with_effort(MODEL, "low") != MODEL  # inherit: the caller's model, with the call's effort
    assert plan.timeout == 30.0
    assert plan.system_prompt == (
        "You are the reviewer on 2026-11-02.\n\n# Task\nDo the work\n\nYou may write only to files matching: docs/**"
    )
    assert plan.user_message == "p\n\n# Expected response\nbullets"
    explore = planned(p.plan(args("explore"), main, (), None, TODAY))
    assert explore.model.label == "light" and explore.timeout == 45.0  # default_timeout_seconds
    previous = TaskRecord(task_id="tsk_1", subagent_type="explore", model_used="main", status="completed",
                          child_session_id="ses_c")
    resumed = planned(p.plan(args("general", resume="tsk_1"), main, (), previous, TODAY))
    assert resumed.agent_type.name == "explore" and resumed.model.label == "main"  # same type and model
    assert resumed.note == ""
    for other in ("light", "nowhere:x"):  # another model, or one that does not even resolve: kept, and said
        kept = planned(p.plan(args("general", resume="tsk_1", model=other), main, (), previous, TODAY))
        assert kept.model.label == "main"
        assert kept.note.startswith(f"Note: model={other!r} was ignored: a resumed task keeps its model (main).")
    same = planned(p.plan(args("general", resume="tsk_1", model="sonnet"), main, (), previous, TODAY))
    assert same.model.label == "main" and same.note == ""  # an alias of the task's own model


def test_user_message_with_output_schema() -> None:
    text = user_message(args(output_schema={"type": "object"}))
    assert text.startswith("p\n\n# Output format\nReply with only a JSON document")
    assert text.endswith('{\n  "type": "object"\n}')


def test_task_description_is_one_text_whoever_asks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = planner(tmp_path, monkeypatch)
    text = p.task_description("Header.")
    assert text.startswith("Header.\n\nAvailable agent types:\n")
    assert "- general (inherit, can edit and run commands)" in text
    assert "- explore (light, read-only)" in text
    # The text names every type to every caller (its tools then stay a prefix of the main agent's, for the
    # prompt cache); what the caller may not use is refused when it calls, with SPEC §4's text.
    child = Session(system_prompt="c", model=MODEL, workspace=tmp_path, depth=1, chain=("main", "general"))
    refused = p.plan(args("general"), child, (), None, TODAY)
    assert refused == Refusal("Circular delegation prevented: main → general → general", "CIRCULAR")
    deep = Session(system_prompt="d", model=MODEL, workspace=tmp_path, depth=2, chain=("main", "general", "plan"))
    assert p.plan(args("explore"), deep, (), None, TODAY) == Refusal(
        "Maximum sub-agent depth exceeded (max_depth=2)", "CIRCULAR")
    below = planned(p.plan(args("general"), main_session(tmp_path), ((),), None, TODAY))  # below read-only: reads
    assert below.tool_names and not set(below.tool_names) & {"Write", "Edit", "MultiEdit", "Bash", "WebFetch"}


def test_system_prompt_keeps_the_task_after_the_role(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_agent(tmp_path, "reviewer", "Reviews code.", body="You review code.")
    p = planner(tmp_path, monkeypatch)
    plan = planned(p.plan(args("reviewer"), main_session(tmp_path), (), None, TODAY))
    stable = plan.system_prompt[:plan.system_stable]
    assert stable == "You review code."  # what every task of the type shares: the provider caches it apart
    assert plan.system_prompt[plan.system_stable:] == "\n\n# Task\nDo the work"


def test_tasks_of_one_type_share_one_role_and_tool_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Worked out once per type (a fan-out plans many tasks of one type): the same head and tools for each task, and
    a new one when what they depend on changes (the toolbox grows, another day, the program's addition)."""
    write_agent(tmp_path, "reviewer", "Reviews code.", body="You review code of $workspace on $date.")
    p = planner(tmp_path, monkeypatch)
    main = main_session(tmp_path)
    first = planned(p.plan(args("reviewer"), main, (), None, TODAY))
    second = planned(p.plan(args("reviewer", description="Other work"), main, (), None, TODAY))
    head = first.system_prompt[:first.system_stable]
    assert head == f"You review code of {tmp_path} on {TODAY.isoformat()}."
    assert second.system_prompt[:second.system_stable] == head and second.system_prompt.endswith("# Task\nOther work")
    assert p.role_prompt(first.agent_type, TODAY) is p.role_prompt(first.agent_type, TODAY)
    assert first.tool_names == second.tool_names and "mcp__docs__search" not in first.tool_names
    p.tool_classes["mcp__docs__search"] = p.tool_classes["Read"]  # type: ignore[index]  # an MCP server started
    grown = planned(p.plan(args("reviewer"), main, (), None, TODAY))
    assert "mcp__docs__search" in grown.tool_names and set(first.tool_names) < set(grown.tool_names)
    tomorrow = planned(p.plan(args("reviewer"), main, (), None, date(2026, 11, 3)))
    assert tomorrow.system_prompt.startswith(f"You review code of {tmp_path} on 2026-11-03.")
    p.subagent_append = "Answer in French."
    appended = planned(p.plan(args("reviewer"), main, (), None, TODAY))
    assert appended.system_prompt[:appended.system_stable] == head + "\n\nAnswer in French."
