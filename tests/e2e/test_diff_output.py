"""One-shot output of edits: `--verbose` text names each edit's `+N −M file`; json counts its lines;
the event lines (--output-format events) carry the diff itself."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli


def _script() -> Script:
    edit = ToolCall(name="Edit", input={"file_path": "src/a.py", "old_string": "y = 2\n",
                                        "new_string": "y = 3\nz = 4\n"})
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[edit])),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Edited.")),
    ])


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x = 1\ny = 2\n")
    return ws


def test_verbose_text_names_the_edit_with_its_counts(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with FakeLLMServer(_script()) as server:
        proc = run_cli(["run", "--yes", "--verbose", "--cwd", str(ws), "edit a.py"],
                       cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "    +2 \u22121 src/a.py\n" in proc.stderr
    assert "@@" not in proc.stderr  # the summary line, not the diff
    assert proc.stdout == "Edited.\n"


def test_json_counts_the_lines_and_the_event_lines_have_the_diff(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with FakeLLMServer(_script()) as server:
        proc = run_cli(["run", "--yes", "--output-format", "events", "--cwd", str(ws), "edit a.py"],
                       cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    (call,) = last_json(proc.stdout)["tool_calls"]
    assert (call["name"], call["lines_added"], call["lines_removed"]) == ("Edit", 2, 1)
    finished = [e for e in map(json.loads, proc.stdout.splitlines()) if e.get("kind") == "tool_call_finished"]
    diff = finished[0]["diff"]
    assert (diff["path"], diff["added"], diff["removed"]) == ("src/a.py", 2, 1)
    assert diff["hunks"][0]["lines"] == [" x = 1", "-y = 2", "+y = 3", "+z = 4"]
