"""`agentcli run` as a real subprocess: a scripted model greps, reads, edits and tests a temp repo."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import cli_env, db

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('calc ok')\n"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TEST)
    (repo / "README.md").write_text("calculator\n")
    return repo


def _fix_script(api: str) -> Script:
    return Script(steps=[
        Step(match=Match(api=api, turn=0, last_user_contains="Fix add"),
             reply=Reply(text="Searching.", tool_calls=[ToolCall(name="Grep", input={"pattern": "def add"})])),
        Step(match=Match(api=api, turn=1, last_user_contains="calc.py"),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "calc.py"})])),
        Step(match=Match(api=api, turn=2, last_user_contains="return a - b"),
             reply=Reply(tool_calls=[ToolCall(name="Edit", input={
                 "file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"})])),
        Step(match=Match(api=api, turn=3),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": "python3 test_calc.py"})])),
        Step(match=Match(api=api, turn=4, last_user_contains="calc ok"),
             reply=Reply(text="Fixed add() in calc.py; the test passes.")),
    ])


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_run_fixes_a_bug_end_to_end(api: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with FakeLLMServer(_fix_script(api)) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--yes", "--output-format", "json", "--cwd", str(repo),
             "Fix add in the calculator"],
            capture_output=True, text=True, env=cli_env(api, server, tmp_path), timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["status"] == "completed"
    assert result["result"] == "Fixed add() in calc.py; the test passes."
    assert [c["name"] for c in result["tool_calls"]] == ["Grep", "Read", "Edit", "Bash"]
    assert result["usage"]["output_tokens"] > 0
    # The session and every message are in the database.
    with db(tmp_path) as conn:
        status, = conn.execute("SELECT status FROM sessions WHERE id = ?", (result["session_id"],)).fetchone()
        count, = conn.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (result["session_id"],)).fetchone()
    assert status == "completed"
    assert count == 10  # prompt + 5 assistant turns + 4 tool-result messages
    # Keys never reach the transcript, the log or the output.
    log = (tmp_path / "state" / "agentcli" / "agentcli.log").read_text()
    for text in (proc.stdout, proc.stderr, log):
        assert "e2e-secret" not in text


def test_text_output_and_refused_mutation_without_yes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(text="I'll edit.", tool_calls=[ToolCall(name="Write", input={
            "file_path": "calc.py", "content": "oops"})])),
        Step(match=Match(turn=1, last_user_contains="--yes"), reply=Reply(text="I could not write calc.py.")),
    ])
    with FakeLLMServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--cwd", str(repo), "rewrite calc"],
            capture_output=True, text=True, env=cli_env("anthropic", server, tmp_path), timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert (repo / "calc.py").read_text() == CALC
    assert "I could not write calc.py." in proc.stdout
    assert "Write" in proc.stderr  # progress line and the refusal
    assert " in / " in proc.stderr  # usage at the end


def test_provider_failure_mid_turn_exits_1_and_keeps_transcript(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(text="Looking.", tool_calls=[
            ToolCall(name="Read", input={"file_path": "README.md"})])),
        Step(match=Match(turn=1), fault=Fault(kind="http", status=500)),
    ])
    with FakeLLMServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--cwd", str(repo), "--output-format", "stream-json",
             "read the readme"],
            capture_output=True, text=True, env=cli_env("anthropic", server, tmp_path), timeout=120,
        )
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "500" in proc.stderr and "Traceback" not in proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["status"] == "failed"
    assert any(line["type"] == "user" and line["message"]["content"][0]["type"] == "tool_result" for line in lines)
    with db(tmp_path) as conn:
        status, = conn.execute("SELECT status FROM sessions").fetchone()
        roles = [r for (r,) in conn.execute("SELECT role FROM messages ORDER BY seq")]
    assert status == "failed"
    assert roles == ["user", "assistant", "user"]
    server.assert_done()


def test_sigint_during_tool_call_exits_130_with_consistentdb(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="Bash", input={
            "command": "echo $$ > shell.pid; touch started.flag; sleep 60"})])),
    ])
    with FakeLLMServer(script) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "run", "--yes", "--cwd", str(repo), "run the slow thing"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env("anthropic", server, tmp_path),
        )
        deadline = time.monotonic() + 60
        while not (repo / "started.flag").exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the tool call never started"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    shell_pid = int((repo / "shell.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(shell_pid, 0)  # the tool's process group is gone
    with db(tmp_path) as conn:
        status, = conn.execute("SELECT status FROM sessions").fetchone()
        rows = conn.execute("SELECT role, content FROM messages ORDER BY seq").fetchall()
        tool_status, = conn.execute("SELECT status FROM tool_calls").fetchone()
    assert status == "cancelled"
    assert [r for r, _ in rows] == ["user", "assistant", "user"]
    assert "Cancelled" in rows[-1][1]
    assert tool_status in ("error", "cancelled")
    server.assert_done()
