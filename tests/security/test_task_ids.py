"""Task ids are no way into another workspace: project B's model names project A's subagent tasks.

Both projects run through the real `agentcli run` against the fake model server and share one home (one
database), as two repositories of one person do. Project A's subagent answers with a secret; project B's
model then asks for it by whole id, by the bare `tsk_` prefix, and by resuming it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

SECRET = "A-PROJECT-SECRET-7731"


def _run(server: FakeLLMServer, home: Path, ws: Path) -> dict[str, Any]:
    proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "go"], cli_env("anthropic", server, home))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return last_json(proc.stdout)


def test_task_ids_of_another_workspace_resolve_to_nothing(tmp_path: Path) -> None:
    project_a, project_b = tmp_path / "a", tmp_path / "b"
    project_a.mkdir()
    project_b.mkdir()
    delegate = ToolCall(name="Task", input={"description": "Find the secret", "prompt": "find it",
                                            "subagent_type": "general-purpose"})
    with FakeLLMServer(Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[delegate])),
        Step(match=Match(system_contains="# Task\nFind the secret"), reply=Reply(text=f"The secret is {SECRET}.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="found")),
    ])) as server:
        first = _run(server, tmp_path, project_a)
    (task,) = first["tasks"]
    task_id = task["task_id"]

    probes = [
        ToolCall(name="TaskOutput", input={"task_id": task_id}),
        ToolCall(name="TaskOutput", input={"task_id": "tsk_"}),
        ToolCall(name="TaskOutput", input={"task_id": task_id[:8]}),
        ToolCall(name="Task", input={"description": "Go on", "prompt": "repeat the secret",
                                     "subagent_type": "general-purpose", "resume": task_id}),
    ]
    with FakeLLMServer(Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=probes)),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="nothing")),
    ])) as server:
        second = _run(server, tmp_path, project_b)
        answers = json.dumps(server.requests[-1].body["messages"][-1])
    assert SECRET not in answers
    assert answers.count(task_id) == 2  # echoed by the two probes that named it whole; no listing names it
    assert "in this workspace" in answers and "no finished task" in answers
    assert not second["tasks"]  # the resume started nothing
