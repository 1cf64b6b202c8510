"""Edits stay bounded: a result that would pass the cap is refused before it is built, and what an edit
returns to the model is cut like a Read. Through the real `agentcli run --yes` against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import cli_env, last_json, run_cli


def _run(tmp_path: Path, ws: Path, call: ToolCall) -> tuple[dict[str, object], str]:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[call])),
        Step(match=Match(turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "edit it"],
                       cli_env("anthropic", server, tmp_path))
        answer = json.dumps(server.requests[-1].body["messages"][-1])
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return last_json(proc.stdout), answer


def test_multiedit_cannot_grow_a_file_exponentially(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "seed.txt").write_text("x")
    doubling = [{"old_string": "x", "new_string": "xx", "replace_all": True} for _ in range(34)]  # 1 byte -> 16 GiB
    result, answer = _run(tmp_path, ws, ToolCall(name="MultiEdit", input={"file_path": "seed.txt", "edits": doubling}))
    assert (ws / "seed.txt").read_text() == "x"  # nothing written
    assert "Edit 25 of 34 failed" in answer and "characters long" in answer and "Nothing was written" in answer
    assert result["is_error"] is False


def test_edit_of_a_huge_one_line_file_returns_a_cut_snippet(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    line = "MARK " + "y" * 12_000_000
    (ws / "one.txt").write_text(line + "\n")
    _, answer = _run(tmp_path, ws, ToolCall(name="Edit", input={
        "file_path": "one.txt", "old_string": "MARK", "new_string": "DONE"}))
    assert (ws / "one.txt").read_text().startswith("DONE yyy")  # the edit itself is made
    assert len(answer) < 20_000  # not the 12 MB line
    assert "more characters]" in answer
