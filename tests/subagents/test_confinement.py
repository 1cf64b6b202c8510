"""Delegation cannot escalate, in-process: inherited confinement, deny rules for subagents, no stuck records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.llm.base import ToolResultBlock
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from agentcli.tools.permissions.approvals import Approval, PermissionRequest
from agentcli.tools.permissions.policy import PermissionPolicy
from tests.subagents.harness import MAIN, Harness, Make, sub, task_call


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
    h.runner.kit.permissions = policy
    h.loop.context.permissions = policy
    await h.run()
    assert (ws / "first").exists() and (ws / "second").exists()
    assert not (ws / "marker-main").exists() and not (ws / "marker-sub").exists()
    assert approver.asked == ["main: touch ./first"]  # the denied calls never even reached the person
    server.assert_done()


async def test_an_unexpected_failure_never_leaves_the_task_running(
    server: ScriptedLLM, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.subagents.supervisor import Supervisor

    async def broken(*args: Any) -> Any:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(Supervisor, "run", broken)
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
    import agentcli.subagents.supervisor as supervisor

    def explode(text: str, schema: dict[str, Any]) -> str | None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(supervisor, "schema_problem", explode)
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
