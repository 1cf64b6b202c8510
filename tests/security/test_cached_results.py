"""A reused subagent result never hides a change: a read-only task that read a file in one of the person's
additional directories (by its path, or through a symlink in the workspace) is run again once that file changed
outside agentcli, rather than answered "cached, nothing it read has changed" with the old content.

One session through the real CLI, driven line by line over stream-json input; the file changes between turns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.subagents.result_cache.fingerprints import window_ns
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env

DESCRIPTION = "Read the shared notes"
SUB = f"# Task\n{DESCRIPTION}"


def _user(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def _result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    for line in proc.stdout:
        data: dict[str, Any] = json.loads(line)
        if data.get("type") == "result":
            return data
    raise AssertionError("the run ended without a result line")


def _subagent_requests(server: FakeLLMServer) -> list[dict[str, Any]]:
    def system(body: dict[str, Any]) -> str:
        value = body.get("system", "")
        return "\n".join(str(b.get("text", "")) for b in value) if isinstance(value, list) else str(value)

    return [r.body for r in server.requests if SUB in system(r.body)]


@pytest.mark.parametrize("how", ["its path", "a workspace symlink"])
def test_a_file_read_in_an_additional_directory_that_changed_runs_the_task_again(tmp_path: Path, how: str) -> None:
    workspace, extra = tmp_path / "ws", tmp_path / "shared"
    workspace.mkdir()
    extra.mkdir()
    notes = extra / "notes.txt"
    notes.write_text("the build uses make\n")
    if how == "a workspace symlink":
        (workspace / "notes.txt").symlink_to(notes)
    path = "notes.txt" if how == "a workspace symlink" else str(notes)
    time.sleep(window_ns(os.stat(notes)) / 1e9 + 0.02)  # older than a read can be confused with
    task = ToolCall(name="Task", input={"description": DESCRIPTION, "prompt": "What do the notes say?",
                                        "subagent_type": "explore"})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        Step(match=Match(system_contains=SUB, turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Read", input={"file_path": path})]), times=2),
        Step(match=Match(system_contains=SUB, turn=1), reply=Reply(text="The notes say what they say."), times=2),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="first")),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(tool_calls=[task])),
        Step(match=Match(system_contains=MAIN, turn=3), reply=Reply(text="second")),
    ])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path,
                      AGENTCLI_PERMISSIONS__ADDITIONAL_DIRECTORIES=json.dumps([str(extra)]))
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "run", "--input-format", "stream-json", "--output-format",
             "stream-json", "--cwd", str(workspace)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert proc.stdin is not None
        try:
            proc.stdin.write(_user("look once"))
            proc.stdin.flush()
            assert _result(proc)["result"] == "first"
            first_read = _subagent_requests(server)[1]
            assert "the build uses make" in json.dumps(first_read)  # the read worked: the folder is the person's
            notes.write_text("the build uses ninja now\n")  # the person changes it, outside agentcli
            proc.stdin.write(_user("look again"))
            proc.stdin.flush()
            assert _result(proc)["result"] == "second"
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    tasks = _subagent_requests(server)
    assert len(tasks) == 4, "the second task was answered from the cache though the file it read changed"
    assert "the build uses ninja now" in json.dumps(tasks[3])
