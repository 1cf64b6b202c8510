"""What the language servers say about a tool call (`agent/edit_diagnostics`), through the agent loop: an edit's
result ends with the diagnostics it introduced and its finished event lists them, a server that fails never fails
the edit, a Read touches its file; the stream-json and events printers carry them.

The language servers are a test double of the `CodeIntel` protocol here (the unit level); the real servers are the
e2e tests' (`agentcli.lsp`).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.events import Event, ToolCallFinishedEvent
from agentcli.llm.base import ToolResultBlock
from agentcli.llm.models import ResolvedModel
from agentcli.oneshot.events_printer import EventsPrinter
from agentcli.oneshot.stream_json_printer import StreamJsonPrinter
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from agentcli.tools import CodeIntel, Diagnostic, EditDiagnostics, ToolError
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools

TYPE_ERROR = Diagnostic("src/app.py", 2, 12, "error", 'Type "str" is not assignable to return type "int"',
                        "basedpyright", "reportReturnType")
UNUSED = Diagnostic("src/app.py", 1, 8, "warning", 'Import "os" is not accessed', "basedpyright",
                    "reportUnusedImport")
HINT = Diagnostic("src/app.py", 1, 1, "hint", "Code is unreachable", "basedpyright")
APP = "import os\ndef count() -> int:\n    return 1\n"


class RecordingCodeIntel:
    """A `CodeIntel` that records what it is asked and answers `found` after every edit; `fail` names the method
    that raises instead (or `hang`: before_edit never answers)."""

    def __init__(self, found: EditDiagnostics | None = None, fail: str = "") -> None:
        self.found = found
        self.fail = fail
        self.calls: list[tuple[str, Any]] = []

    def touch(self, path: Path) -> None:
        self.calls.append(("touch", path))
        if self.fail == "touch":
            raise RuntimeError("server gone")

    async def before_edit(self, paths: list[Path]) -> object:
        self.calls.append(("before_edit", (paths, [p.read_text() if p.exists() else None for p in paths])))
        if self.fail == "before_edit":
            raise RuntimeError("server gone")
        return ("token", len(self.calls))

    async def after_edit(self, paths: list[Path], before: object) -> EditDiagnostics | None:
        self.calls.append(("after_edit", (paths, before)))
        if self.fail == "after_edit":
            raise ConnectionResetError("the server closed its pipe")
        return self.found

    async def query(self, operation: str, path: Path | None, line: int, column: int, query: str) -> str:
        self.calls.append(("query", (operation, path, line, column, query)))
        if path is not None and path.name == "gone.py":
            raise ToolError("No language server handles .py files here")
        return f"src/app.py:{line}:{column} count"

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


def _run(llm: ScriptedLLM, workspace: Path, code_intel: CodeIntel | None, call: ToolCall, after: str = ""
         ) -> tuple[AgentLoop, list[Event]]:
    llm.add_steps(
        Step(match=Match(turn=0), reply=Reply(tool_calls=[call])),
        Step(match=Match(turn=1, last_user_contains=after), reply=Reply(text="done")),
    )
    model = ResolvedModel("main", "anthropic", "fake", None, "sk-ant-test", 1024)
    session = Session(system_prompt="diagnostics test", model=model, workspace=workspace)
    ctx = ToolContext(workspace=workspace, agent="main", session_id=session.id, permissions=PermissionPolicy("auto"),
                      file_locks=FileLocks(), code_intel=code_intel)
    events: list[Event] = []
    return AgentLoop(session, llm.provider(), build_tools(), ctx, events.append, max_turns=3), events


async def _result(loop: AgentLoop, prompt: str = "go") -> ToolResultBlock:
    outcome = await loop.run(prompt)
    assert outcome.status == "completed", outcome
    (block,) = loop.session.messages[2].content
    assert isinstance(block, ToolResultBlock)
    return block


def _finished(events: list[Event]) -> ToolCallFinishedEvent:
    (event,) = [e for e in events if isinstance(e, ToolCallFinishedEvent)]
    return event


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(APP)
    return tmp_path.resolve()


async def test_an_edit_ends_with_the_errors_and_warnings_it_introduced(llm: ScriptedLLM, workspace: Path) -> None:
    intel = RecordingCodeIntel(EditDiagnostics((HINT, UNUSED, TYPE_ERROR), server="basedpyright"))
    edit = ToolCall(name="Edit", input={"file_path": "./src/app.py", "old_string": "return 1",
                                        "new_string": "return 'one'"})
    loop, events = _run(llm, workspace, intel, edit, after="1 new error")
    block = await _result(loop)
    assert not block.is_error
    assert block.content == (
        "Applied 1 edit to src/app.py (1 replacement). The last change now reads:\n"
        + block.content.split("reads:\n", 1)[1].split("\n\n", 1)[0]
        + "\n\nbasedpyright reports 1 new error and 1 new warning after this edit:\n"
        'src/app.py:2:12: error: Type "str" is not assignable to return type "int" [basedpyright reportReturnType]\n'
        'src/app.py:1:8: warning: Import "os" is not accessed [basedpyright reportUnusedImport]'
    )
    target = workspace / "src" / "app.py"
    assert intel.calls == [
        ("before_edit", ([target], [APP])),  # asked before the edit was written
        ("after_edit", ([target], ("token", 1))),  # after it, with the token the server gave
    ]
    finished = _finished(events)
    assert finished.diagnostics == [  # errors first; the hint is not listed
        {"path": "src/app.py", "line": 2, "column": 12, "severity": "error",
         "message": 'Type "str" is not assignable to return type "int"', "source": "basedpyright",
         "code": "reportReturnType"},
        {"path": "src/app.py", "line": 1, "column": 8, "severity": "warning",
         "message": 'Import "os" is not accessed', "source": "basedpyright", "code": "reportUnusedImport"},
    ]
    assert finished.output == block.content  # the transcript and every printer see what the model read
    llm.assert_done()


def _nb(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", id="first")]
    path.write_text(nbformat.writes(nb))


@pytest.mark.parametrize(("name", "args", "target"), [
    ("Write", {"file_path": "src/new/mod.py", "content": "x: int = 'a'\n"}, "src/new/mod.py"),
    ("MultiEdit", {"file_path": "src/app.py", "edits": [{"old_string": "1", "new_string": "'a'"}]}, "src/app.py"),
    ("NotebookEdit", {"notebook_path": "nb.ipynb", "cell_id": "first", "new_source": "x: int = 'a'"}, "nb.ipynb"),
])
async def test_every_file_editing_tool_reports_them(llm: ScriptedLLM, workspace: Path, name: str,
                                                    args: dict[str, Any], target: str) -> None:
    _nb(workspace / "nb.ipynb")
    found = Diagnostic(target, 1, 10, "error", "Type mismatch", "basedpyright")
    intel = RecordingCodeIntel(EditDiagnostics((found,), server="basedpyright"))
    loop, events = _run(llm, workspace, intel, ToolCall(name=name, input=args), after="1 new error")
    block = await _result(loop)
    assert block.content.endswith(f"\n\nbasedpyright reports 1 new error and 0 new warnings after this edit:\n"
                                  f"{target}:1:10: error: Type mismatch [basedpyright]")
    assert [kind for kind, _ in intel.calls] == ["before_edit", "after_edit"]
    assert intel.calls[0][1][0] == intel.calls[1][1][0] == [workspace / target]  # a new file's path too
    assert [d["path"] for d in _finished(events).diagnostics] == [target]


async def test_a_server_with_nothing_in_time_leaves_its_note(llm: ScriptedLLM, workspace: Path) -> None:
    intel = RecordingCodeIntel(EditDiagnostics(note="did not answer within 2 s", server="basedpyright"))
    write = ToolCall(name="Write", input={"file_path": "src/app.py", "content": "x = 1\n"})
    loop, events = _run(llm, workspace, intel, write, after="did not answer")
    block = await _result(loop)
    assert block.content == "Overwrote src/app.py (1 lines)\n\n[basedpyright] did not answer within 2 s"
    assert _finished(events).diagnostics == []


async def test_a_clean_edit_adds_nothing(llm: ScriptedLLM, workspace: Path) -> None:
    for found in (EditDiagnostics(server="basedpyright"), None):  # nothing new; no server for the file
        intel = RecordingCodeIntel(found)
        loop, events = _run(llm, workspace, intel, ToolCall(name="Write", input={"file_path": "a.py",
                                                                                  "content": "x = 1\n"}))
        block = await _result(loop)
        assert block.content in ("Created a.py (1 lines)", "Overwrote a.py (1 lines)")
        assert _finished(events).diagnostics == [] and intel.kinds() == ["before_edit", "after_edit"]


@pytest.mark.parametrize("fail", ["before_edit", "after_edit"])
async def test_a_failing_server_never_breaks_the_edit(llm: ScriptedLLM, workspace: Path, fail: str,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    intel = RecordingCodeIntel(EditDiagnostics((TYPE_ERROR,)), fail=fail)
    write = ToolCall(name="Write", input={"file_path": "src/app.py", "content": "x = 1\n"})
    loop, events = _run(llm, workspace, intel, write)
    block = await _result(loop)
    assert not block.is_error and block.content == "Overwrote src/app.py (1 lines)"
    assert (workspace / "src" / "app.py").read_text() == "x = 1\n"
    assert _finished(events).diagnostics == []
    assert intel.kinds() == (["before_edit"] if fail == "before_edit" else ["before_edit", "after_edit"])
    assert f"language server {'before' if fail == 'before_edit' else 'diagnostics after'}" in caplog.text


async def test_nonsense_from_a_server_never_breaks_the_edit(llm: ScriptedLLM, workspace: Path) -> None:
    odd = Diagnostic("src/app.py", 1, 1, "fatal", "?")  # type: ignore[arg-type]  # a severity it may not send
    broken = Diagnostic("src/app.py", 1, 1, "error", None)  # type: ignore[arg-type]  # no message at all
    intel = RecordingCodeIntel(EditDiagnostics((odd, broken)))
    loop, events = _run(llm, workspace, intel, ToolCall(name="Write", input={"file_path": "b.py", "content": ""}))
    block = await _result(loop)
    assert block.content == "Created b.py (0 lines)" and _finished(events).diagnostics == []


async def test_a_failed_edit_asks_the_server_nothing_after(llm: ScriptedLLM, workspace: Path) -> None:
    intel = RecordingCodeIntel(EditDiagnostics((TYPE_ERROR,)))
    edit = ToolCall(name="Edit", input={"file_path": "src/app.py", "old_string": "absent", "new_string": "x"})
    loop, events = _run(llm, workspace, intel, edit, after="not found")
    block = await _result(loop)
    assert block.is_error and "basedpyright" not in block.content
    assert intel.kinds() == ["before_edit"] and _finished(events).diagnostics == []


async def test_an_edit_outside_the_workspace_asks_no_server(llm: ScriptedLLM, workspace: Path) -> None:
    intel = RecordingCodeIntel(EditDiagnostics((TYPE_ERROR,)))
    write = ToolCall(name="Write", input={"file_path": "../elsewhere.py", "content": "x = 1\n"})
    loop, _ = _run(llm, workspace, intel, write, after="outside")
    assert (await _result(loop)).is_error and intel.calls == []


async def test_a_read_touches_its_file_and_nothing_else_does(llm: ScriptedLLM, workspace: Path) -> None:
    intel = RecordingCodeIntel()
    loop, _ = _run(llm, workspace, intel, ToolCall(name="Read", input={"file_path": "src/app.py"}))
    assert not (await _result(loop)).is_error
    assert intel.calls == [("touch", workspace / "src" / "app.py")]
    for call in (ToolCall(name="Read", input={"file_path": "src/missing.py"}),  # a failed Read
                 ToolCall(name="LS", input={"path": "src"}),
                 ToolCall(name="Grep", input={"pattern": "count"}),
                 ToolCall(name="LSP", input={"operation": "hover", "path": "src/app.py", "line": 2, "column": 5})):
        intel = RecordingCodeIntel()
        loop, _ = _run(llm, workspace, intel, call)
        await _result(loop)
        assert "touch" not in intel.kinds(), call.name


async def test_a_touch_that_raises_is_only_logged(llm: ScriptedLLM, workspace: Path) -> None:
    intel = RecordingCodeIntel(fail="touch")
    loop, _ = _run(llm, workspace, intel, ToolCall(name="Read", input={"file_path": "src/app.py"}))
    block = await _result(loop)
    assert not block.is_error and "count() -> int" in block.content and intel.kinds() == ["touch"]


async def test_the_printers_carry_the_diagnostics(llm: ScriptedLLM, workspace: Path) -> None:
    intel = RecordingCodeIntel(EditDiagnostics((TYPE_ERROR,), server="basedpyright"))
    edit = ToolCall(name="Edit", input={"file_path": "src/app.py", "old_string": "return 1",
                                        "new_string": "return 'one'"})
    loop, events = _run(llm, workspace, intel, edit)
    await _result(loop)
    stream, raw = io.StringIO(), io.StringIO()
    stream_json, typed = StreamJsonPrinter(stream, io.StringIO()), EventsPrinter(raw, io.StringIO())
    for event in events:
        stream_json(event)
        typed(event)
    results = [block for line in map(json.loads, stream.getvalue().splitlines()) if line["type"] == "user"
               for block in line["message"]["content"] if block.get("type") == "tool_result"]
    (result,) = results
    content = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert content.endswith("after this edit:\n" + TYPE_ERROR.line_text())
    (finished,) = [line for line in map(json.loads, raw.getvalue().splitlines())
                   if line["kind"] == "tool_call_finished"]
    assert finished["diagnostics"] == [{"path": "src/app.py", "line": 2, "column": 12, "severity": "error",
                                        "message": TYPE_ERROR.message, "source": "basedpyright",
                                        "code": "reportReturnType"}]
