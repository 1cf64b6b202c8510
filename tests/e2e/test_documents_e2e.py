"""PDFs and notebooks through the real CLI and the scripted fake: a generated PDF's text by pages (and one line,
nothing on the terminal, for a broken one); a notebook read, then a NotebookEdit that leaves a valid notebook,
shown in the event lines and in stream-json like Edit's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.documents import make_notebook, make_pdf
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli


def _results(server: FakeLLMServer) -> list[tuple[str, bool]]:
    """The tool results (text, is_error) the main agent's last Anthropic request sent, in order."""
    body = next(r.body for r in reversed(server.requests) if MAIN in json.dumps(r.body.get("system")))
    found: list[tuple[str, bool]] = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content")
                text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content or [])
                found.append((text, bool(block.get("is_error"))))
    return found


def test_a_generated_pdfs_text_by_pages(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    make_pdf(ws / "report.pdf", ["Introduction\nThe plan", "Findings: costs fell 12%", "Appendix"])
    (ws / "broken.pdf").write_bytes(b"%PDF-1.7\n\x00\x01 no objects, no xref\n")
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Read", input={"file_path": "report.pdf", "pages": "2-3"}),
            ToolCall(name="Read", input={"file_path": "broken.pdf"})])),
        Step(match=Match(system_contains=MAIN, turn=1, any_message_contains="costs fell 12%"),
             reply=Reply(text="Costs fell 12%.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--cwd", str(ws), "What did the report find?"],
                       cli_env("anthropic", server, tmp_path))
        server.assert_done()
        results = _results(server)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Costs fell 12%.\n"
    (pages, pages_failed), (broken, broken_failed) = results
    assert not pages_failed
    assert pages == ("--- page 2 of 3 ---\nFindings: costs fell 12%\n\n--- page 3 of 3 ---\nAppendix\n\n"
                     "(Showing pages 2-3 of 3.)")
    assert broken_failed and broken.startswith("Cannot read broken.pdf: not a readable PDF (") and "\n" not in broken
    assert "EOF marker" not in proc.stderr and "pypdf" not in proc.stderr  # its warnings go to the log file


def _notebook_script(api: str) -> Script:
    system = {"system_contains": MAIN} if api == "anthropic" else {}
    return Script(steps=[
        Step(match=Match(**system, turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Read", input={"file_path": "analysis.ipynb"})])),
        Step(match=Match(**system, turn=1, any_message_contains="id calc · code"), reply=Reply(tool_calls=[
            ToolCall(name="NotebookEdit", input={"notebook_path": "analysis.ipynb", "cell_id": "calc",
                                                 "new_source": "total = 6 * 7\nprint(total)"}),
            ToolCall(name="NotebookEdit", input={"notebook_path": "analysis.ipynb", "cell_id": "calc",
                                                 "edit_mode": "insert", "cell_type": "markdown",
                                                 "new_source": "The answer is above."})])),
        Step(match=Match(**system, turn=2, last_user_is_tool_result=True), reply=Reply(text="Fixed the cell.")),
    ])


def _analysis(ws: Path) -> Path:
    ws.mkdir()
    return make_notebook(ws / "analysis.ipynb", [
        {"type": "markdown", "source": "# Sales", "id": "intro"},
        {"source": "total = 6 * 9\nprint(total)", "id": "calc",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "54\n"}]},
    ])


def _valid_cells(path: Path) -> list[tuple[str, str]]:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return [(cell.cell_type, cell.source) for cell in nb.cells]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_notebook_read_and_edited_stays_valid(tmp_path: Path, api: str) -> None:
    path = _analysis(tmp_path / "ws")
    with FakeLLMServer(_notebook_script(api)) as server:
        proc = run_cli(["run", "--yes", "--output-format", "events", "--cwd", str(tmp_path / "ws"), "fix the sum"],
                       cli_env(api, server, tmp_path))
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert _valid_cells(path) == [("markdown", "# Sales"), ("code", "total = 6 * 7\nprint(total)"),
                                  ("markdown", "The answer is above.")]
    assert nbformat.read(path, as_version=4).cells[1].outputs == []  # the old output no longer belonged
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    finished = [e for e in events if e.get("kind") == "tool_call_finished" and e.get("name") == "NotebookEdit"]
    replace, insert = (e["diff"] for e in finished)
    assert (replace["path"], replace["added"], replace["removed"]) == ("analysis.ipynb", 1, 1)
    assert "-total = 6 * 9" in replace["hunks"][0]["lines"] and "+total = 6 * 7" in replace["hunks"][0]["lines"]
    assert insert["added"] == 3  # a blank line, the new cell's header and its source
    calls = last_json(proc.stdout)["tool_calls"]
    assert [(c["name"], c["lines_added"], c["lines_removed"]) for c in calls[1:]] == [
        ("NotebookEdit", 1, 1), ("NotebookEdit", 3, 0)]


def test_stream_json_shows_notebookedit_like_edit(tmp_path: Path) -> None:
    path = _analysis(tmp_path / "ws")
    with FakeLLMServer(_notebook_script("anthropic")) as server:
        proc = run_cli(["run", "--yes", "--output-format", "stream-json", "--cwd", str(tmp_path / "ws"), "fix it"],
                       cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines: list[dict[str, Any]] = [json.loads(line) for line in proc.stdout.splitlines()]
    (init,) = [line for line in lines if line.get("subtype") == "init"]
    assert "NotebookEdit" in init["tools"]
    uses = [block for line in lines if line.get("type") == "assistant"
            for block in line["message"]["content"] if block.get("type") == "tool_use"]
    assert [use["name"] for use in uses] == ["Read", "NotebookEdit", "NotebookEdit"]
    assert uses[1]["input"]["cell_id"] == "calc"
    results = [block for line in lines if line.get("type") == "user"
               for block in line["message"]["content"] if block.get("type") == "tool_result"]
    assert [r.get("is_error", False) for r in results] == [False, False, False]
    assert len(_valid_cells(path)) == 3
