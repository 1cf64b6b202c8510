"""Attacks on checkpoints (SECURITY.md §15): a cloned project that takes the person's undo away, a prompt whose
agent makes its own changes unrewindable. The repository-config and symlink attacks are in
`tests/checkpoints/test_shadow.py`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def test_an_untrusted_project_cannot_turn_checkpoints_off_or_shrink_them(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".agentcli").mkdir(parents=True)
    (repo / ".agentcli" / "config.toml").write_text("[checkpoints]\nenabled = false\nmax_file_bytes = 1\n")
    (repo / "app.py").write_text("print(1)\n")
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[ToolCall(
                 name="Write", input={"file_path": "app.py", "content": "wiped\n"})])),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done"))]
    with FakeLLMServer(Script(steps=steps)) as server:
        env = cli_env("anthropic", server, tmp_path)
        shown = json.loads(run_cli(["config", "show", "--json", "--cwd", str(repo)], env).stdout)
        assert shown["checkpoints.enabled"]["value"] is True and shown["checkpoints.enabled"]["layer"] != "project"
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(repo), "go"], env)
        assert proc.returncode == 0, proc.stderr
        assert "checkpoints.enabled" in proc.stderr  # named in the untrusted-workspace warning
        session = last_json(proc.stdout)["session_id"]
        rewound = run_cli(["sessions", "rewind", session], env)
    assert rewound.returncode == 0, rewound.stderr
    assert (repo / "app.py").read_text() == "print(1)\n"


def test_an_agent_cannot_hide_its_change_from_a_rewind_by_growing_the_file_past_the_cap(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print(1)\n")
    grow = "head -c 6000000 /dev/zero > app.py && yes spam | head -c 7000000 > junk.bin"
    steps = [Step(match=Match(system_contains=MAIN, turn=0),
                  reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": grow})])),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done"))]
    with FakeLLMServer(Script(steps=steps)) as server:
        env = cli_env("anthropic", server, tmp_path)
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "go"], env)
        assert proc.returncode == 0, proc.stderr
        assert (ws / "app.py").stat().st_size == 6_000_000
        session = last_json(proc.stdout)["session_id"]
        dry = run_cli(["sessions", "rewind", session, "--dry-run"], env)
        rewound = run_cli(["sessions", "rewind", session], env)
    assert "M app.py" in dry.stdout and "junk.bin: left alone, over the size cap" in dry.stdout
    assert rewound.returncode == 0, rewound.stderr
    assert (ws / "app.py").read_text() == "print(1)\n"
    assert (ws / "junk.bin").stat().st_size == 7_000_000  # never seen under the cap: left, and said so
