"""Bounded everything: undecodable input, unusable dirs, absurd nesting and a full disk are one line each."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
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
