"""Delegation cannot escalate, tried through the real `agentcli run` against the fake model server.

A model (or an instruction injected into it) tries to get around write confinement, read-only
types, readonly mode and deny rules by delegating, by passing --yes, or by rephrasing a command.
Every denied action would create a marker file; the markers must not exist.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli


def _task(description: str, subagent_type: str, **extra: Any) -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": f"do: {description}",
                                        "subagent_type": subagent_type, **extra})


def _write(path: str) -> ToolCall:
    return ToolCall(name="Write", input={"file_path": path, "content": "x\n"})


def _bash(command: str) -> ToolCall:
    return ToolCall(name="Bash", input={"command": command})


def _sub(description: str) -> str:
    return f"# Task\n{description}"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    (path / "src").mkdir(parents=True)
    agents = path / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    for name in ("worker", "helper"):
        (agents / f"{name}.md").write_text(f"---\nname: {name}\ndescription: A {name} with every tool.\n---\nGo.\n")
    (agents / "lead.md").write_text(
        "---\nname: lead\ndescription: Reads and delegates only.\ntools: Read, Grep, Glob, Task\n---\nLead.\n"
    )
    return path


def _user_config(home: Path, text: str) -> None:
    folder = home / "config" / "agentcli"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def _run(server: FakeLLMServer, home: Path, ws: Path, *args: str, **env: str) -> tuple[dict[str, Any], str]:
    proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), *args, "go"],
                   cli_env("anthropic", server, home, **env))
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    return last_json(proc.stdout), proc.stderr


def _system(body: dict[str, Any]) -> str:
    system = body.get("system", "")
    return "\n".join(str(b.get("text", "")) for b in system) if isinstance(system, list) else str(system)


def _offered(server: FakeLLMServer, description: str) -> set[str]:
    request = next(r for r in server.requests if _sub(description) in _system(r.body))
    return {str(t["name"]) for t in request.body.get("tools") or []}


def _task_description(server: FakeLLMServer, description: str) -> str:
    """The Task tool's description as offered to the subagent working on `description`."""
    request = next(r for r in server.requests if _sub(description) in _system(r.body))
    return next(str(t["description"]) for t in request.body["tools"] if t["name"] == "Task")


def test_child_of_a_confined_subagent_cannot_write_outside_the_parent_globs(tmp_path: Path, ws: Path) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Edit the sources", "worker", write_paths=["src/**"])])),
        Step(match=Match(system_contains=_sub("Edit the sources"), turn=0),
             reply=Reply(tool_calls=[_task("Sneak a write", "helper")])),  # no write_paths: inherits src/**
        Step(match=Match(system_contains=_sub("Sneak a write"), turn=0),
             reply=Reply(tool_calls=[_write("escape.txt"), _write("src/inside.py")])),
        Step(match=Match(system_contains=_sub("Sneak a write"), turn=1,
                         last_user_contains="write to escape.txt is outside write_paths (src/**)"),
             reply=Reply(text="only src/inside.py")),
        Step(match=Match(system_contains=_sub("Edit the sources"), turn=1), reply=Reply(text="helper done")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="all done")),
    ])
    with FakeLLMServer(script) as server:
        result, _ = _run(server, tmp_path, ws, "--yes")
        offered = _offered(server, "Sneak a write")
        labels = _task_description(server, "Edit the sources")
        worker = next(r for r in server.requests if _sub("Edit the sources") in _system(r.body))
        first = next(r for r in server.requests if MAIN in _system(r.body))
        main = next(str(t["description"]) for t in first.body["tools"] if t["name"] == "Task")
    server.assert_done()
    assert labels == main  # one Task description at every depth: the confinement holds when a child runs
    assert "You may write only to files matching: src/**" in _system(worker.body)  # and the worker is told
    assert not (ws / "escape.txt").exists()
    assert (ws / "src" / "inside.py").exists()
    assert "Bash" not in offered and "Write" in offered  # a confined subagent's child gets no shell either
    assert {t["subagent_type"] for t in result["tasks"]} == {"worker", "helper"}


def test_grandchild_asking_for_wider_write_paths_is_still_confined(tmp_path: Path, ws: Path) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Edit the sources", "worker", write_paths=["src/**"])])),
        Step(match=Match(system_contains=_sub("Edit the sources"), turn=0),
             reply=Reply(tool_calls=[_task("Write anywhere", "helper", write_paths=["**"])])),
        Step(match=Match(system_contains=_sub("Write anywhere"), turn=0),
             reply=Reply(tool_calls=[_write("escape.txt"), _write("src/inside.py")])),
        Step(match=Match(system_contains=_sub("Write anywhere"), turn=1,
                         last_user_contains="write to escape.txt is outside write_paths (src/**)"),
             reply=Reply(text="confined")),
        Step(match=Match(system_contains=_sub("Edit the sources"), turn=1), reply=Reply(text="ok")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        _run(server, tmp_path, ws, "--yes")
    server.assert_done()
    assert not (ws / "escape.txt").exists()
    assert (ws / "src" / "inside.py").exists()


def test_read_only_type_cannot_escalate_by_delegating_to_a_writer(tmp_path: Path, ws: Path) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task("Review the code", "lead")])),
        Step(match=Match(system_contains=_sub("Review the code"), turn=0),
             reply=Reply(tool_calls=[_task("Fix it for me", "general"),
                                     _task("Fix src only", "helper", write_paths=["src/**"])])),
        Step(match=Match(system_contains=_sub("Fix it for me"), turn=0),
             reply=Reply(tool_calls=[_bash("touch marker-bash"), _write("marker-write.txt")])),
        Step(match=Match(system_contains=_sub("Fix it for me"), turn=1), reply=Reply(text="could not")),
        Step(match=Match(system_contains=_sub("Review the code"), turn=1,
                         any_message_contains="Subagent lacks permission for required tools: Write, Edit"),
             reply=Reply(text="review done")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        _run(server, tmp_path, ws, "--yes")
        offered = _offered(server, "Fix it for me")
        labels = _task_description(server, "Review the code")
        fixer = next(r for r in server.requests if _sub("Fix it for me") in _system(r.body))
        first = next(r for r in server.requests if MAIN in _system(r.body))
    server.assert_done()
    assert labels == next(str(t["description"]) for t in first.body["tools"] if t["name"] == "Task")  # one text
    assert "you work below a read-only agent" in _system(fixer.body)  # the child is told, and held to it:
    assert not (ws / "marker-bash").exists() and not (ws / "marker-write.txt").exists()
    assert not offered & {"Write", "Edit", "MultiEdit", "Bash"}
    shown = run_cli(["agents", "show", "lead", "--json", "--cwd", str(ws)], cli_env("anthropic", server, tmp_path))
    assert json.loads(shown.stdout)["read_only"] is True  # and the label is true: everything below is read-only


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--yes",), {"AGENTCLI_PERMISSIONS__MODE": "readonly"}),
        ((), {"AGENTCLI_PERMISSIONS__MODE": "readonly", "AGENTCLI_PERMISSIONS__ALLOW_MUTATING_IN_RUN": "true"}),
    ],
)
def test_yes_and_allow_mutating_in_run_never_override_readonly(
    tmp_path: Path, ws: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_bash("touch marker-main"), _task("Try a command", "general")])),
        Step(match=Match(system_contains=_sub("Try a command"), turn=0),
             reply=Reply(tool_calls=[_bash("touch marker-sub"), _write("marker-sub.txt")])),
        Step(match=Match(system_contains=_sub("Try a command"), turn=1,
                         last_user_contains="is not allowed in readonly mode"),
             reply=Reply(text="refused")),
        Step(match=Match(system_contains=MAIN, turn=1, any_message_contains="not allowed in readonly mode"),
             reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        _, stderr = _run(server, tmp_path, ws, *args, **env)
    server.assert_done()
    assert not list(ws.glob("marker*"))
    notice = 'agentcli: --yes ignored: permissions.mode is "readonly"'
    assert stderr.count(notice) == (1 if args else 0)


def test_deny_rule_wins_over_yes_for_the_main_agent_and_subagents(tmp_path: Path, ws: Path) -> None:
    _user_config(tmp_path, '[permissions]\ndeny = ["Bash(touch *)"]\n')
    attempts = ["touch m1", "/usr/bin/touch m2", "env touch m3", "sh -c 'touch m4'", "command touch m5",
                "true && touch m6"]
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[*map(_bash, attempts), _bash("mkdir control"), _task("Touch it", "general")])),
        Step(match=Match(system_contains=_sub("Touch it"), turn=0), reply=Reply(tool_calls=[_bash("touch m7")])),
        Step(match=Match(system_contains=_sub("Touch it"), turn=1, last_user_contains="[permissions] deny"),
             reply=Reply(text="denied")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        _run(server, tmp_path, ws, "--yes")
    server.assert_done()
    assert (ws / "control").is_dir()  # Bash ran: only the denied calls did not
    assert not list(ws.glob("m[0-9]"))


def test_deny_rule_wins_over_allow_rules_and_auto_mode(tmp_path: Path, ws: Path) -> None:
    _user_config(tmp_path, '[permissions]\nmode = "auto"\nallow = ["Bash", "Bash(touch *)", "Edit"]\n'
                           'deny = ["Bash(touch *)", "Edit(secret/**)"]\n')
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_bash("touch m1"), _write("secret/m2.txt"), _write("fine.txt")])),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        _run(server, tmp_path, ws)
    server.assert_done()
    assert not (ws / "m1").exists() and not (ws / "secret").exists()
    assert (ws / "fine.txt").exists()
