"""Delegation cannot escalate, in-process: inherited confinement, deny rules for subagents, no stuck records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.llm.base import ToolResultBlock
from agentcli.subagents.runner import ParentLink
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from agentcli.tools.permissions import Approval, PermissionPolicy, PermissionRequest
from tests.subagents.harness import MAIN, Harness, Make, sub, task_call, write_agent


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    return workspace


def main_step(turn: int, reply: Reply) -> Step:
    return Step(match=Match(system_contains=MAIN, turn=turn), reply=reply)


def results_of(h: Harness) -> list[ToolResultBlock]:
    return [b for m in h.session.messages for b in m.content if isinstance(b, ToolResultBlock)]


class AlwaysApprover:
    """Answers every question "allow always", recording what was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, request: PermissionRequest) -> Approval:
        self.asked.append(f"{request.agent}: {request.target}")
        return "allow_always"


def _bash(command: str) -> ToolCall:
    return ToolCall(name="Bash", input={"command": command})


async def test_deny_rule_wins_over_allow_always_for_main_and_subagents(
    server: ScriptedLLM, ws: Path, make: Make
) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[_bash("touch ./first")])),  # asked; `touch` remembered for the session
        main_step(1, Reply(tool_calls=[_bash("touch ./marker-main"), task_call("Touch things", "do", "general")])),
        Step(match=Match(system_contains=sub("Touch things"), turn=0),
             reply=Reply(tool_calls=[_bash("touch ./marker-sub"), _bash("touch ./second")])),
        Step(match=Match(system_contains=sub("Touch things"), turn=1), reply=Reply(text="done")),
        main_step(2, Reply(text="ok")),
    )
    h = make()
    approver = AlwaysApprover()
    policy = PermissionPolicy("ask", deny=["Bash(touch *marker*)"], approver=approver)
    h.runner.permissions = policy
    h.loop.context.permissions = policy
    await h.run()
    assert (ws / "first").exists() and (ws / "second").exists()
    assert not (ws / "marker-main").exists() and not (ws / "marker-sub").exists()
    assert approver.asked == ["main: touch ./first"]  # the denied calls never even reached the person
    server.assert_done()


async def test_confinement_is_inherited_and_intersected(server: ScriptedLLM, ws: Path, make: Make) -> None:
    write_agent(ws, "worker", "Works.")
    write_agent(ws, "lead", "Reads and delegates.", tools="Read, Grep, Task")
    h = make()
    runner = h.runner
    main = ParentLink(h.session, h.bus)
    assert runner.confinement(main) == ()

    def child_scopes(parent: ParentLink, agent: str, write_paths: list[str] | None) -> Any:
        args = runner_args(agent, write_paths)
        model = h.session.model
        handle = runner._new_handle(args, parent, "call", runner.registry.types[agent], model, None,
                                    runner.confinement(parent))
        runner.handles[handle.record.task_id] = handle
        return handle, ParentLink(handle.session, h.bus, handle.record.task_id)

    worker, worker_link = child_scopes(main, "worker", ["src/**"])
    assert worker.write_scopes == () and runner.confinement(worker_link) == (("src/**",),)
    _, helper_link = child_scopes(worker_link, "worker", ["src/api/**"])
    assert runner.confinement(helper_link) == (("src/**",), ("src/api/**",))
    _, lead_link = child_scopes(main, "lead", None)
    assert runner.confinement(lead_link) == ((),)  # below a read-only type: no write can match
    names = runner._child_tool_names(runner.registry.types["general"], 2, None, runner.confinement(lead_link))
    assert isinstance(names, list) and not set(names) & {"Write", "Edit", "MultiEdit", "Bash"}
    names = runner._child_tool_names(runner.registry.types["general"], 2, None, runner.confinement(worker_link))
    assert isinstance(names, list) and "Write" in names and "Bash" not in names
    runner.handles.clear()


def runner_args(agent: str, write_paths: list[str] | None) -> Any:
    from agentcli.subagents.task_tool import TaskArgs

    return TaskArgs(description="Do the work", prompt="p", subagent_type=agent, write_paths=write_paths)


async def test_an_unexpected_failure_never_leaves_the_task_running(
    server: ScriptedLLM, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentcli.subagents.child as child

    async def broken(*args: Any) -> Any:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(child, "run_child", broken)
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Find the code", "where")])),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="ok")),
    )
    h = make()
    await h.run()
    (record,) = h.runner.records()
    assert record.status == "failed" and record.error == "internal error: RuntimeError: boom second line"
    await h.store.flush()
    stored = h.store.get_task(record.task_id)
    assert stored is not None and stored.status == "failed"
    (result,) = results_of(h)
    assert result.is_error and "internal error: RuntimeError: boom second line" in result.content
    server.assert_done()


async def test_output_schema_check_failure_ends_the_task_as_failed(
    server: ScriptedLLM, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentcli.subagents.child as child

    def explode(text: str, schema: dict[str, Any]) -> str | None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(child, "schema_problem", explode)
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call("Give me JSON", "json", output_schema={"type": "object"})])),
        Step(match=Match(system_contains=sub("Give me JSON")), reply=Reply(text="{}")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="ok")),
    )
    h = make()
    await h.run()
    (record,) = h.runner.records()
    assert record.status == "failed"
    assert record.error == "output_schema could not be checked: maximum recursion depth exceeded"
    server.assert_done()
