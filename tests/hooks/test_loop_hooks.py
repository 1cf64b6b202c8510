"""Hooks in the agent loop: PreToolUse blocks (and never widens), PostToolUse feedback, a bounded Stop."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentcli.agent.loop import MAX_STOP_HOOK_TURNS, AgentLoop
from agentcli.agent.session import Session
from agentcli.events import Event, HookRunEvent
from agentcli.hooks.engine import HookEngine
from agentcli.hooks.settings import HookCommand, HookConfig
from agentcli.llm.base import RetryPolicy, ToolResultBlock
from agentcli.llm.models import ResolvedModel
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.approvals import Approval, PermissionRequest
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools

POLICY = RetryPolicy(max_retries=0, initial_delay=0.01, max_delay=0.01)
ALLOW = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})


def _loop(llm: ScriptedLLM, ws: Path, events: list[Event], hooks: list[tuple[str, str, str]],
          policy: PermissionPolicy | None = None, depth: int = 0) -> AgentLoop:
    config = HookConfig()
    for event, matcher, command in hooks:
        config.add(HookCommand(event, command, matcher, 10, "test"))
    engine = HookEngine(config, ws, env={"PATH": os.environ["PATH"]})
    model = ResolvedModel("main", "anthropic", "fake", None, "sk-test", 1024)
    session = Session(system_prompt="You are the loop under test.", model=model, workspace=ws, depth=depth)
    ctx = ToolContext(workspace=ws, agent="main", session_id=session.id,
                      permissions=policy or PermissionPolicy("auto"), file_locks=FileLocks())
    return AgentLoop(session, llm.provider("anthropic", policy=POLICY), build_tools(), ctx, events.append,
                     max_turns=8, hooks=engine)


def _results(loop: AgentLoop) -> list[ToolResultBlock]:
    return [b for m in loop.session.messages for b in m.content if isinstance(b, ToolResultBlock)]


def _bash(command: str) -> Reply:
    return Reply(tool_calls=[ToolCall(name="Bash", input={"command": command})])


async def test_a_blocking_pre_tool_use_hook_keeps_the_call_from_running(llm: ScriptedLLM, tmp_path: Path) -> None:
    llm.add_steps(Step(match=Match(turn=0), reply=_bash("touch made.txt")),
                  Step(match=Match(turn=1, last_user_contains="Blocked by a PreToolUse hook: not today"),
                       reply=Reply(text="ok")))
    events: list[Event] = []
    loop = _loop(llm, tmp_path, events, [("PreToolUse", "Bash", "echo 'not today' >&2; exit 2")])
    outcome = await loop.run("go")
    assert outcome.status == "completed" and not (tmp_path / "made.txt").exists()
    (result,) = _results(loop)
    assert result.is_error and result.content == "Blocked by a PreToolUse hook: not today"
    (run,) = [e for e in events if isinstance(e, HookRunEvent)]
    assert (run.outcome, run.tool_name, run.tool_call_id) == ("blocked", "Bash", result.tool_use_id)
    llm.assert_done()


async def test_a_hooks_allow_never_passes_a_deny_rule_or_the_persons_approval(llm: ScriptedLLM, tmp_path: Path
                                                                             ) -> None:
    asked: list[PermissionRequest] = []

    async def approver(request: PermissionRequest) -> Approval:
        asked.append(request)
        return "deny"

    llm.add_steps(Step(match=Match(turn=0), reply=Reply(tool_calls=[
                      ToolCall(name="Bash", input={"command": "rm -rf build"}),
                      ToolCall(name="Bash", input={"command": "touch made.txt"})])),
                  Step(match=Match(turn=1), reply=Reply(text="ok")))
    policy = PermissionPolicy("ask", deny=["Bash(rm *)"], approver=approver)
    loop = _loop(llm, tmp_path, [], [("PreToolUse", "", f"echo '{ALLOW}'")], policy)
    await loop.run("go")
    denied, declined = _results(loop)
    assert denied.is_error and "blocked by the rule 'Bash(rm *)'" in str(denied.content)
    assert declined.is_error and "the person declined" in str(declined.content)
    assert [r.summary for r in asked] == ["touch made.txt"] and not (tmp_path / "made.txt").exists()


async def test_post_tool_use_feedback_joins_the_result(llm: ScriptedLLM, tmp_path: Path) -> None:
    block = json.dumps({"decision": "block", "reason": "lint failed: run ruff"})
    seen = tmp_path / "post.json"
    llm.add_steps(Step(match=Match(turn=0), reply=_bash("echo hi")),
                  Step(match=Match(turn=1, last_user_contains="lint failed"), reply=Reply(text="ok")))
    loop = _loop(llm, tmp_path, [], [("PostToolUse", "Bash", f"tee {seen} >/dev/null; echo '{block}'")])
    await loop.run("go")
    (result,) = _results(loop)
    assert not result.is_error and result.content == "hi\n\nA PostToolUse hook says: lint failed: run ruff"
    given = json.loads(seen.read_text())
    assert given["tool_response"] == {"content": "hi", "is_error": False, "files_modified": []}


async def test_continue_false_ends_the_run(llm: ScriptedLLM, tmp_path: Path) -> None:
    stop = json.dumps({"continue": False, "stopReason": "budget hook: stop now"})
    llm.add_steps(Step(match=Match(turn=0), reply=_bash("echo hi")))
    loop = _loop(llm, tmp_path, [], [("PreToolUse", "", f"echo '{stop}'")])
    outcome = await loop.run("go")
    assert outcome.status == "cancelled" and outcome.error == "stopped by a PreToolUse hook: budget hook: stop now"
    llm.assert_done()


async def test_a_stop_hook_sends_the_agent_back_a_bounded_number_of_times(llm: ScriptedLLM, tmp_path: Path) -> None:
    log = tmp_path / "stops.log"
    command = f"python3 -c 'import json,sys; print(json.load(sys.stdin)[\"stop_hook_active\"])' >> {log}; " \
              "echo 'tests are failing' >&2; exit 2"
    for turn in range(MAX_STOP_HOOK_TURNS + 1):
        llm.add_steps(Step(match=Match(turn=turn, last_user_contains="" if turn == 0 else "tests are failing"),
                           reply=Reply(text=f"done {turn}")))
    loop = _loop(llm, tmp_path, [], [("Stop", "", command)])
    outcome = await loop.run("go")
    assert outcome.status == "completed" and outcome.result == f"done {MAX_STOP_HOOK_TURNS}"
    assert log.read_text().split() == ["False"] + ["True"] * (MAX_STOP_HOOK_TURNS - 1)
    llm.assert_done()


async def test_subagents_run_tool_hooks_but_not_stop(llm: ScriptedLLM, tmp_path: Path) -> None:
    llm.add_steps(Step(match=Match(turn=0), reply=_bash("echo hi")), Step(match=Match(turn=1), reply=Reply(text="ok")))
    events: list[Event] = []
    loop = _loop(llm, tmp_path, events, [("PreToolUse", "", "true"), ("Stop", "", "exit 2")], depth=1)
    outcome = await loop.run("go")
    assert outcome.result == "ok"
    assert [e.hook_event for e in events if isinstance(e, HookRunEvent)] == ["PreToolUse"]


