"""Forks without a server: the plan of a fork, its first message, its copy of the parent's history, and
why each tool of its parent's list is withheld from it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from agentcli.agent import Offered
from agentcli.agent.session import Session
from agentcli.llm.base import Message, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock
from agentcli.store.records import TaskRecord
from agentcli.subagents.definitions.agent_files import parse_agent_file
from agentcli.subagents.fork import OTHER_CALL, OWN_CALL, ForkPoint, fork_point, withheld_reason
from agentcli.subagents.plan import Refusal
from agentcli.subagents.task_tool import ParentLink
from agentcli.subagents.toolbox import Toolbox
from tests.subagents.test_plan import MODEL, TODAY, args, planned, planner

PARENT_SYSTEM = "You are the main agent.\n\nProject instructions: use tabs."


def parent_session(ws: Path) -> Session:
    session = Session(system_prompt=PARENT_SYSTEM, model=MODEL, workspace=ws)
    session.messages = [
        Message.user("Find the bug"),
        Message(role="assistant", content=[
            TextBlock(text="Looking."),
            ToolUseBlock(id="t_read", name="Read", input={"file_path": "a.py"}),
            ToolUseBlock(id="t_task", name="Task", input={"prompt": "p"}),
        ]),
    ]
    return session


def point(ws: Path) -> ForkPoint:
    specs = (ToolSpec("Read", "r", {}), ToolSpec("Write", "w", {}), ToolSpec("Task", "t", {}))
    return ForkPoint(tuple(parent_session(ws).messages), Offered(specs), "t_task")


def test_a_fork_keeps_its_parents_system_prompt_and_model_and_carries_its_role_in_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = planner(tmp_path, monkeypatch)
    p.instructions = "Project instructions: use tabs."
    parent = parent_session(tmp_path)
    plan = planned(p.plan(args("explore", fork_context=True, expected_response="a list"), parent, (), None, TODAY))
    assert plan.fork and plan.system_prompt == PARENT_SYSTEM
    assert plan.model == MODEL  # the parent's, not explore's light model: the history and its cache are main's
    message = plan.user_message
    assert message.startswith("You are now a fork of the conversation above: a subagent of type explore")
    tools = "Read, LS, Glob, Grep, TodoWrite, LSP, AskUserQuestion, SendMessage, ListAgents"
    assert f"Of the tools above you may call {tools}; a call" in message
    assert "as a fork, you do" in message
    assert "# Task\nDo the work" in message and message.endswith("# Prompt\np\n\n# Expected response\na list")
    assert "use tabs" not in message  # the project's instructions are in the parent's system prompt already
    light = planned(p.plan(args("explore", fork_context=True, model="light"), parent, (), None, TODAY))
    assert light.model.display == "light"  # a model the call names still wins
    plain = planned(p.plan(args("explore"), parent, (), None, TODAY))
    assert not plain.fork and plain.system_prompt.startswith(p.registry.types["explore"].prompt[:40])
    assert "use tabs" in plain.system_prompt and plain.user_message == "p" and plain.model.display == "light"


def test_an_agent_file_can_make_every_task_a_fork_but_a_resume_never_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / ".agentcli" / "agents"
    folder.mkdir(parents=True)
    (folder / "twin.md").write_text("---\nname: twin\ndescription: A twin.\nfork_context: true\n---\nYou twin.\n")
    (folder / "odd.md").write_text("---\nname: odd\ndescription: Odd.\nfork_context: maybe\n---\nYou are odd.\n")
    twin = parse_agent_file(folder / "twin.md", scope="project", file_format="agentcli")
    odd = parse_agent_file(folder / "odd.md", scope="project", file_format="agentcli")
    assert twin.fork_context and twin.as_dict()["fork_context"] is True and not twin.warnings
    assert not odd.fork_context and odd.warnings == ("'fork_context: maybe' ignored: expected true or false",)
    p = planner(tmp_path, monkeypatch)
    parent = parent_session(tmp_path)
    assert planned(p.plan(args("twin"), parent, (), None, TODAY)).fork
    previous = TaskRecord(task_id="tsk_1", subagent_type="twin", child_session_id="ses_c", status="completed",
                          model_used="main")
    resumed = planned(p.plan(args("twin", resume="tsk_1"), parent, (), previous, TODAY))
    assert not resumed.fork and resumed.system_prompt != PARENT_SYSTEM  # it goes on from its own conversation
    with pytest.raises(ValidationError, match="use fork_context without resume"):
        args("twin", resume="tsk_1", fork_context=True)


def test_the_first_message_closes_the_parents_open_turn_then_gives_the_task(tmp_path: Path) -> None:
    opening = point(tmp_path).opening("the task")
    assert opening.role == "user"
    read, task, text = opening.content
    assert read == ToolResultBlock(tool_use_id="t_read", content=OTHER_CALL, is_error=True)
    assert task == ToolResultBlock(tool_use_id="t_task", content=OWN_CALL, is_error=False)
    assert text == TextBlock(text="the task")


def test_the_fork_starts_from_a_copy_of_the_parents_messages(tmp_path: Path) -> None:
    parent = parent_session(tmp_path)
    link = ParentLink(parent, lambda event: None, specs=lambda: Offered((ToolSpec("Read", "r", {}),)))
    taken = fork_point(link, "t_task")
    assert isinstance(taken, ForkPoint) and taken.offered.specs == (ToolSpec("Read", "r", {}),)
    parent.messages.append(Message.user("later"))  # the parent goes on: the fork point does not change
    assert len(taken.messages) == 2
    child = Session(system_prompt=PARENT_SYSTEM, model=MODEL, workspace=tmp_path)
    first = taken.start(child, "the task", None)
    assert child.messages == parent.messages[:2] and child.next_seq == 2 and first.content[-1] == TextBlock(
        text="the task")
    child.messages[1].content.append(TextBlock(text="the fork's own"))
    child.messages.append(first)
    assert parent.messages[1].content[-1] == ToolUseBlock(id="t_task", name="Task", input={"prompt": "p"})
    assert len(parent.messages) == 3
    unknown = fork_point(ParentLink(parent, lambda event: None), "t_task")
    assert isinstance(unknown, Refusal) and "tool list is not known" in unknown.message


def test_each_withheld_tool_names_the_rule_that_withheld_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = planner(tmp_path, monkeypatch, **{"task_tool.deny_tools": ["WebFetch"], "task_tool.max_depth": 1})
    parent = parent_session(tmp_path)
    explore = planned(p.plan(args("explore", fork_context=True), parent, (), None, TODAY))
    assert withheld_reason("Write", explore, p, 1) == "agent type 'explore' does not have it"
    assert withheld_reason("WebFetch", explore, p, 1) == "it is denied to subagents (task_tool.deny_tools)"
    assert withheld_reason("Task", explore, p, 1) == "Maximum sub-agent depth exceeded (max_depth=1)"
    below_read_only = planned(p.plan(args("general", fork_context=True), parent, ((),), None, TODAY))
    assert withheld_reason("Bash", below_read_only, p, 1).endswith("this fork works below a read-only agent")
    confined = planned(p.plan(args("general", fork_context=True, write_paths=["src/**"]), parent, (), None, TODAY))
    assert withheld_reason("Bash", confined, p, 1).startswith("it could write outside the write confinement")
    runnable, unavailable = point(tmp_path).tools(Toolbox.builtin().build(explore.tool_names), explore, p, 1)
    assert [t.name for t in runnable] == ["Read"]  # its plan's tools that its parent's list offers
    assert unavailable == {
        "Write": "Write is not available to this fork: agent type 'explore' does not have it. A fork sees its "
                 "parent's tools but may call only its own: Read.",
        "Task": "Task is not available to this fork: Maximum sub-agent depth exceeded (max_depth=1). A fork sees "
                "its parent's tools but may call only its own: Read.",
    }
