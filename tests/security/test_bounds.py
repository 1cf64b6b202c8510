"""Bounded everything: undecodable input, unusable dirs, absurd nesting and a full disk are one line each."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.store.db import Store
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, db, last_json, run_cli

FSIZE_LIMIT = 512 * 1024


def _full_disk() -> None:
    """In the CLI subprocess: files cannot grow past FSIZE_LIMIT (EFBIG), as on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))


def test_full_disk_says_persistence_failed_and_the_subagent_result_still_reaches_the_parent(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    Store.open(tmp_path / "data" / "agentcli" / "agentcli.db").close()  # an existing, small database
    big = "SUBAGENT-FINDING " + "x" * (2 * FSIZE_LIMIT)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[ToolCall(name="Task", input={
            "description": "Survey it", "prompt": "survey the project", "subagent_type": "explore"})])),
        Step(match=Match(system_contains="# Task\nSurvey it", turn=0), reply=Reply(text=big)),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="SUBAGENT-FINDING"),
             reply=Reply(text="The parent got the finding.")),
    ])
    with FakeLLMServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--output-format", "json", "--cwd", str(ws), "survey"],
            capture_output=True, text=True, timeout=120, preexec_fn=_full_disk,
            env=cli_env("anthropic", server, tmp_path, AGENTCLI_TASK_TOOL__MAX_TOKENS="100000000"),
        )
    server.assert_done()
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentcli: persistence failed:"), proc.stderr
    result = last_json(proc.stdout)
    assert result["status"] == "completed"
    assert result["result"] == "The parent got the finding."
    assert [t["status"] for t in result["tasks"]] == ["completed"]
    assert "SUBAGENT-FINDING" in str(server.requests[-1].body)  # the parent saw the result
    with db(tmp_path) as conn:  # the database is still consistent; the big rows are simply missing
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM tasks WHERE result LIKE 'SUBAGENT-FINDING%'").fetchone()[0] == 0


# --- undecodable input --------------------------------------------------------------------------


def _echo_script(expect: str, answer: str = "Understood.") -> Script:
    return Script(steps=[Step(match=Match(turn=0, last_user_contains=expect), reply=Reply(text=answer))])


def _stored_texts(home: Path) -> str:
    with db(home) as conn:
        return " ".join(c for (c,) in conn.execute("SELECT content FROM messages ORDER BY seq"))


def test_non_utf8_argv_prompt_is_replaced_not_a_traceback(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeLLMServer(_echo_script("\ufffd\ufffd bad")) as server:
        proc = subprocess.run(
            [sys.executable.encode(), b"-m", b"agentcli", b"run", b"--cwd", os.fsencode(ws), b"\xff\xfe bad"],
            capture_output=True, env=cli_env("anthropic", server, tmp_path), timeout=120,
        )
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert "Understood." in proc.stdout.decode()
    assert "\ufffd\ufffd bad" in _stored_texts(tmp_path)


def test_non_utf8_stdin_prompt_is_replaced_not_a_traceback(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeLLMServer(_echo_script("fix \ufffd this \ufffd")) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--cwd", str(ws), "-"], input=b"fix \xff this \xc3\x28 now",
            capture_output=True, env=cli_env("anthropic", server, tmp_path), timeout=120,
        )
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert "fix \ufffd this \ufffd( now" in _stored_texts(tmp_path)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_lone_surrogate_in_model_text_is_printed_and_stored(api: str, fmt: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = Script(steps=[Step(match=Match(api=api, turn=0), reply=Reply(text="half a pair: \ud800 end"))])
    with FakeLLMServer(script) as server:  # the server sends the JSON escape "\ud800"
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--output-format", fmt, "--cwd", str(ws), "say it"],
            capture_output=True, env=cli_env(api, server, tmp_path), timeout=120,
        )
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    out = proc.stdout.decode("utf-8")  # valid UTF-8
    if fmt == "text":
        assert "half a pair: \ufffd end" in out
    else:
        final = json.loads(out.strip().splitlines()[-1])
        assert final["status"] == "completed"
        assert final["result"] == "half a pair: \ufffd end"
    assert "half a pair: \ufffd end" in _stored_texts(tmp_path)
    with db(tmp_path) as conn:
        assert conn.execute("SELECT status FROM sessions").fetchone()[0] == "completed"


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_lone_surrogate_in_model_text_does_not_break_the_next_request(api: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("the notes\n")
    script = Script(steps=[
        Step(match=Match(api=api, turn=0), reply=Reply(text="reading \ud800 now", tool_calls=[
            ToolCall(name="Read", input={"file_path": "notes.txt"})])),
        Step(match=Match(api=api, turn=1, last_user_contains="the notes"), reply=Reply(text="Read them.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--cwd", str(ws), "read the notes"], cli_env(api, server, tmp_path))
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Read them." in proc.stdout
    assert "reading \ufffd now" in str(server.requests[-1].body)  # the history went back as valid text


# --- unusable directories -----------------------------------------------------------------------


def test_data_dir_that_is_a_file_is_one_line_and_exit_1(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "data").write_text("not a directory\n")
    with FakeLLMServer(Script(steps=[])) as server:
        proc = run_cli(["run", "--cwd", str(ws), "hello"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "database" in proc.stderr, proc.stderr


@pytest.fixture
def unwritable_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory agentcli cannot create anything in: mode 0500, or (root ignores modes) sysfs."""
    if os.geteuid() != 0:
        path = tmp_path / "read-only"
        path.mkdir()
        path.chmod(0o500)
        yield path
        path.chmod(0o700)
        return
    probe = Path("/sys") / "agentcli-probe"
    try:
        probe.mkdir()
    except OSError:
        yield Path("/sys")
        return
    probe.rmdir()
    pytest.skip("no directory here refuses root's writes")


def test_read_only_data_dir_is_one_line_and_exit_1(tmp_path: Path, unwritable_dir: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeLLMServer(Script(steps=[])) as server:
        env = cli_env("anthropic", server, tmp_path, XDG_DATA_HOME=str(unwritable_dir))
        proc = run_cli(["run", "--cwd", str(ws), "hello"], env)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "database" in proc.stderr, proc.stderr


def test_read_only_log_dir_is_one_warning_and_the_run_continues(tmp_path: Path, unwritable_dir: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeLLMServer(_echo_script("hello", "Hi there.")) as server:
        env = cli_env("anthropic", server, tmp_path, XDG_STATE_HOME=str(unwritable_dir))
        proc = run_cli(["run", "--cwd", str(ws), "hello"], env)
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert "Hi there." in proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if "log" in line]
    assert len(warnings) == 1 and warnings[0].startswith("agentcli: warning: cannot write the log file")
    assert "Traceback" not in proc.stderr


def test_unusable_log_dir_is_one_warning_and_the_run_continues(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "state").write_text("not a directory\n")
    with FakeLLMServer(_echo_script("hello", "Hi there.")) as server:
        proc = run_cli(["run", "--cwd", str(ws), "hello"], cli_env("anthropic", server, tmp_path))
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert "Hi there." in proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if "log" in line]
    assert len(warnings) == 1 and warnings[0].startswith("agentcli: warning: cannot write the log file")
    assert "Traceback" not in proc.stderr


# --- deeply nested config -----------------------------------------------------------------------

DEEP = 2000
NESTED = {
    "arrays": "a = " + "[" * DEEP + "]" * DEEP + "\n",
    "inline-tables": "a = " + "{b = " * DEEP + "1" + "}" * DEEP + "\n",
}


@pytest.mark.parametrize("layer", ["user", "project"])
@pytest.mark.parametrize("shape", sorted(NESTED))
def test_config_nested_2000_deep_is_one_line_and_exit_2(layer: str, shape: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = tmp_path / "config" / "agentcli" / "config.toml" if layer == "user" else ws / ".agentcli" / "config.toml"
    target.parent.mkdir(parents=True)
    target.write_text(NESTED[shape])
    with FakeLLMServer(Script(steps=[])) as server:
        proc = run_cli(["run", "--cwd", str(ws), "hello"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and str(target) in proc.stderr, proc.stderr
