"""The hook engine: Claude Code's exit codes and JSON decisions, matchers, the time limit, the environment."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.events import Event, HookRunEvent
from agentcli.hooks.engine import HookEngine, HookVerdict
from agentcli.hooks.settings import HookCommand, HookConfig, matches


def _engine(tmp_path: Path, *hooks: tuple[str, str, str], timeout: float = 10, **env: str) -> HookEngine:
    config = HookConfig()
    for event, matcher, command in hooks:
        config.add(HookCommand(event, command, matcher, timeout, "test"))
    return HookEngine(config, tmp_path, env={"PATH": os.environ["PATH"], **env}, mode=lambda: "accept_edits")


async def _fire(engine: HookEngine, event: str, data: dict[str, Any] | None = None,
                target: str | None = None) -> tuple[HookVerdict, list[HookRunEvent]]:
    events: list[Event] = []
    verdict = await engine.fire(event, data or {}, session_id="ses_1", agent="main", emit=events.append,
                                target=target, tool_call_id="call_1")
    runs = [e for e in events if isinstance(e, HookRunEvent)]
    assert len(runs) == len(events)
    return verdict, runs


@pytest.mark.parametrize(("matcher", "name", "hit"), [
    ("", "Bash", True), ("*", "Anything", True), ("Bash", "Bash", True), ("Bash", "BashOutput", False),
    ("Edit|Write", "Write", True), ("Edit|Write", "Read", False), ("mcp__.*", "mcp__time__now", True),
    ("[", "Bash", False),
])
def test_matchers_follow_claude_code(matcher: str, name: str, hit: bool) -> None:
    assert matches(matcher, name) is hit


async def test_the_input_is_json_on_stdin_with_the_common_fields(tmp_path: Path) -> None:
    out = tmp_path / "in.json"
    engine = _engine(tmp_path, ("PreToolUse", "Bash", f"cat > {out}; echo \"$CLAUDE_PROJECT_DIR\" > {out}.dir"))
    verdict, (run,) = await _fire(engine, "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}},
                                  target="Bash")
    given = json.loads(out.read_text())
    assert given == {"session_id": "ses_1", "transcript_path": "", "cwd": str(tmp_path),
                     "hook_event_name": "PreToolUse", "permission_mode": "acceptEdits",
                     "tool_name": "Bash", "tool_input": {"command": "ls"}}
    assert Path(f"{out}.dir").read_text().strip() == str(tmp_path)
    assert not verdict.blocked and run.outcome == "ok" and run.exit_code == 0
    assert (run.hook_event, run.tool_name, run.tool_call_id, run.source) == ("PreToolUse", "Bash", "call_1", "test")


async def test_hooks_whose_matcher_misses_do_not_run(tmp_path: Path) -> None:
    engine = _engine(tmp_path, ("PreToolUse", "Edit|Write", f"touch {tmp_path}/ran"))
    verdict, runs = await _fire(engine, "PreToolUse", target="Bash")
    assert runs == [] and verdict == HookVerdict() and not (tmp_path / "ran").exists()


async def test_exit_2_blocks_with_stderr_and_other_codes_are_errors_that_do_not(tmp_path: Path) -> None:
    engine = _engine(tmp_path, ("PreToolUse", "", "echo 'not here' >&2; exit 2"),
                     ("PreToolUse", "", "echo 'broken hook' >&2; exit 1"))
    verdict, runs = await _fire(engine, "PreToolUse", target="Bash")
    assert verdict.blocked and verdict.reason == "not here"
    assert sorted((r.outcome, r.exit_code, r.reason) for r in runs) == [
        ("blocked", 2, "not here"), ("error", 1, "exit code 1: broken hook")]


@pytest.mark.parametrize(("output", "blocked", "permission", "reason"), [
    ({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                             "permissionDecisionReason": "protected path"}}, True, "deny", "protected path"),
    ({"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "fine"}}, False, "allow", ""),
    ({"hookSpecificOutput": {"permissionDecision": "ask"}}, False, "ask", ""),
    ({"decision": "block", "reason": "tests first"}, True, None, "tests first"),
    ({"decision": "approve"}, False, "allow", ""),
])
async def test_json_output_decides(tmp_path: Path, output: dict[str, Any], blocked: bool, permission: str | None,
                                   reason: str) -> None:
    (tmp_path / "out.json").write_text(json.dumps(output))
    engine = _engine(tmp_path, ("PreToolUse", "", f"cat {tmp_path}/out.json"))
    verdict, (run,) = await _fire(engine, "PreToolUse", target="Bash")
    assert (verdict.blocked, verdict.permission) == (blocked, permission)
    assert run.outcome == ("blocked" if blocked else "ok")
    if blocked:
        assert verdict.reason == reason


async def test_the_strictest_permission_decision_wins(tmp_path: Path) -> None:
    allow = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}})
    deny = json.dumps({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}})
    engine = _engine(tmp_path, ("PreToolUse", "", f"echo '{allow}'"), ("PreToolUse", "Bash", f"echo '{deny}'"))
    verdict, _ = await _fire(engine, "PreToolUse", target="Bash")
    assert verdict.permission == "deny" and verdict.blocked and verdict.reason == "no"


async def test_continue_false_stops_with_its_reason(tmp_path: Path) -> None:
    engine = _engine(tmp_path, ("PostToolUse", "", """echo '{"continue": false, "stopReason": "enough"}'"""))
    verdict, (run,) = await _fire(engine, "PostToolUse", target="Bash")
    assert verdict.stop and verdict.stop_reason == "enough" and run.outcome == "blocked"


async def test_plain_stdout_is_context_only_where_claude_code_makes_it_so(tmp_path: Path) -> None:
    engine = _engine(tmp_path, ("UserPromptSubmit", "", "echo 'branch: main'"), ("PreToolUse", "", "echo chatter"))
    verdict, _ = await _fire(engine, "UserPromptSubmit")
    assert verdict.context == ["branch: main"]
    verdict, _ = await _fire(engine, "PreToolUse", target="Bash")
    assert verdict.context == [] and not verdict.blocked
    extra = json.dumps({"hookSpecificOutput": {"additionalContext": "from json"}})
    engine = _engine(tmp_path, ("SessionStart", "startup", f"echo '{extra}'"))
    verdict, _ = await _fire(engine, "SessionStart", {"source": "startup"}, target="startup")
    assert verdict.context == ["from json"]
    verdict, runs = await _fire(engine, "SessionStart", {"source": "resume"}, target="resume")
    assert runs == [] and verdict.context == []


async def test_a_hook_past_its_time_limit_is_killed_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    engine = _engine(tmp_path, ("Stop", "", f"sleep 30 & echo $! > {pid_file}; wait"), timeout=0.5)
    started = time.monotonic()
    verdict, (run,) = await _fire(engine, "Stop")
    assert time.monotonic() - started < 10
    assert run.outcome == "timeout" and run.exit_code is None and not verdict.blocked
    child = int(pid_file.read_text())
    for _ in range(50):  # killed: gone, or a zombie its new parent has yet to reap
        if not _running(child):
            break
        await asyncio.sleep(0.05)
    assert not _running(child)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


async def test_a_hook_sees_the_sanitized_environment_not_agentclis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    from agentcli.config.schema import Settings
    from agentcli.tools.shell.env import session_bash_env

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-leak-0123456789")
    monkeypatch.setenv("SAFE", "yes")
    config = HookConfig()
    config.add(HookCommand("Stop", "env", "", 10, "test"))
    engine = HookEngine(config, tmp_path, env=session_bash_env(Settings()))  # as the conversation builds it
    _, (run,) = await _fire(engine, "Stop")
    assert "SAFE=yes" in run.stdout and "sk-ant-must-not-leak" not in run.stdout
    assert f"CLAUDE_PROJECT_DIR={tmp_path}" in run.stdout


async def test_a_hook_that_ignores_a_large_input_does_not_hang(tmp_path: Path) -> None:
    engine = _engine(tmp_path, ("PostToolUse", "", "exit 0"))
    verdict, (run,) = await _fire(engine, "PostToolUse", {"tool_response": {"content": "x" * 2_000_000}},
                                  target="Read")
    assert run.outcome == "ok" and not verdict.blocked


async def test_a_failed_program_callback_blocks_only_where_its_matcher_says_on_failure_block(tmp_path: Path) -> None:
    config = HookConfig()
    config.add(HookCommand("PreToolUse", "SDK hook callback hook_0", "Bash", 5, "test", callback_id="hook_0"))
    config.add(HookCommand("PreToolUse", "SDK hook callback hook_1", "Write", 5, "test", callback_id="hook_1",
                           block_on_failure=True))
    config.add(HookCommand("Stop", "SDK hook callback hook_2", "", 5, "test", callback_id="hook_2",
                           block_on_failure=True))
    engine = HookEngine(config, tmp_path, env={}, mode=lambda: "ask")

    async def failing(callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        raise RuntimeError(f"{callback_id} crashed in the program")

    engine.callback = failing
    goes_on, runs = await _fire(engine, "PreToolUse", {"tool_name": "Bash"}, target="Bash")
    assert not goes_on.blocked and runs[0].outcome == "error"  # onFailure continue (the default): it goes ahead
    blocked, runs = await _fire(engine, "PreToolUse", {"tool_name": "Write"}, target="Write")
    assert blocked.blocked and runs[0].outcome == "blocked"
    assert blocked.reason == "the hook failed (hook_1 crashed in the program) and blocks on failure"
    stop, runs = await _fire(engine, "Stop")
    assert not stop.blocked and runs[0].outcome == "error"  # Claude Code never blocks Stop on a failure
