"""The fast exit (`agentcli.process_exit`): a one-shot ends with os._exit only after its records are complete.

The run goes through the real entry (`agentcli.cli.app.entry`) in a subprocess with an atexit probe: the probe's
file is never written when the process ended through `os._exit`, so each test knows which way it ended.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import cli_env, db

PROBE = """
import atexit, pathlib, sys
marker = pathlib.Path(sys.argv[1])
atexit.register(lambda: marker.write_text("ordinary exit"))
sys.argv = ["agentcli", *sys.argv[2:]]
from agentcli.cli.app import entry
entry()
"""


def _run(args: list[str], env: dict[str, str], cwd: Path, marker: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROBE, str(marker), *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def test_json_run_and_its_store_are_complete_after_the_fast_exit(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("the answer is 42\n")
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "notes.txt"})])),
        Step(match=Match(last_user_is_tool_result=True), reply=Reply(text="It says 42.")),
    ])
    marker = tmp_path / "atexit-ran"
    with FakeLLMServer(script) as server:
        proc = _run(["run", "read notes.txt", "--output-format", "json"], cli_env("anthropic", server, tmp_path),
                    work, marker)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()  # it ended through os._exit, without the interpreter's teardown
    result = json.loads(proc.stdout)  # the whole of standard output is the one document, nothing cut
    assert result["status"] == "completed" and result["result"] == "It says 42."
    data = tmp_path / "data" / "agentcli"
    assert not (data / "agentcli.db-wal").exists()  # closed cleanly: checkpointed, nothing left to recover
    with db(tmp_path) as conn:
        status, turns, tokens = conn.execute(
            "SELECT status, turns, input_tokens FROM sessions WHERE id = ?", (result["session_id"],)
        ).fetchone()
        roles = [r for (r,) in conn.execute(
            "SELECT role FROM messages WHERE session_id = ? ORDER BY seq", (result["session_id"],))]
        calls = conn.execute("SELECT name, status FROM tool_calls WHERE session_id = ?",
                             (result["session_id"],)).fetchall()
        requests = conn.execute("SELECT COUNT(*) FROM usage WHERE session_id = ?",
                                (result["session_id"],)).fetchone()[0]
    assert status == "completed" and turns == result["turns"] and tokens == result["usage"]["input_tokens"]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert calls == [("Read", "ok")]
    assert requests == 2 == result["usage"]["requests"]
    server.assert_done()


def test_a_failed_run_keeps_its_exit_code_and_error_line(tmp_path: Path) -> None:
    script = Script(steps=[Step(match=Match(), fault=Fault(kind="http", status=401))])
    marker = tmp_path / "atexit-ran"
    with FakeLLMServer(script) as server:
        proc = _run(["run", "hello"], cli_env("anthropic", server, tmp_path), tmp_path, marker)
    assert proc.returncode == 1
    assert not marker.exists()
    assert "401" in proc.stderr and proc.stderr.endswith("\n") and "Traceback" not in proc.stderr
    with db(tmp_path) as conn:
        (status,) = conn.execute("SELECT status FROM sessions").fetchone()
    assert status == "failed"
    server.assert_done()


def test_other_commands_exit_as_usual(tmp_path: Path) -> None:
    marker = tmp_path / "atexit-ran"
    proc = _run(["--version"], {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, tmp_path, marker)
    assert proc.returncode == 0 and proc.stdout.startswith("agentcli ")
    assert marker.read_text() == "ordinary exit"  # no ready(): Python's own exit, atexit handlers and all
