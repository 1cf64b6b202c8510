"""NotebookEdit: replace, insert and delete a cell by id through nbformat; the notebook stays valid; permission
rules, guarded files and read-only modes treat it as Edit; the approval shows the cells' diff."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from agentcli.tools.base import ToolContext, ToolError, ToolResult
from agentcli.tools.files.notebook_edit import NotebookEditTool
from agentcli.tools.permissions.approvals import Approval, PermissionRequest
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import EDIT_TOOLS, READ_ONLY_TOOLS, build_tools
from tests.documents import make_notebook


async def edit(ctx: ToolContext, **raw: Any) -> ToolResult:
    tool = NotebookEditTool()
    return await tool.run(tool.parse(raw), ctx)


def _nb(workspace: Path) -> Path:
    return make_notebook(workspace / "nb.ipynb", [
        {"type": "markdown", "source": "# Title", "id": "intro"},
        {"source": "x = 1\nprint(x)", "id": "calc", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "1\n"}]},
        {"source": "y = 2", "id": "last"},
    ])


def _cells(path: Path) -> list[tuple[str, str, str]]:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)  # still a valid notebook
    return [(cell.get("id", "-"), cell.cell_type, cell.source) for cell in nb.cells]


async def test_replace_changes_the_source_and_clears_stale_outputs(ctx: ToolContext, workspace: Path) -> None:
    path = _nb(workspace)
    result = await edit(ctx, notebook_path="nb.ipynb", cell_id="calc", new_source="x = 41 + 1\nprint(x)")
    assert result.content == "Replaced the source of code cell calc in nb.ipynb; its outputs were cleared."
    assert result.files_modified == ["nb.ipynb"]
    assert _cells(path)[1] == ("calc", "code", "x = 41 + 1\nprint(x)")
    assert nbformat.read(path, as_version=4).cells[1].outputs == []
    diff = result.metadata["diff"]
    assert diff.path == "nb.ipynb" and (diff.added, diff.removed) == (1, 1)
    assert [line.text for line in diff.lines() if line.kind in ("removed", "added")] == ["x = 1", "x = 41 + 1"]
    assert "# cell calc (code)" in [line.text for line in diff.lines() if line.kind == "context"]


async def test_replace_can_change_the_cells_type(ctx: ToolContext, workspace: Path) -> None:
    path = _nb(workspace)
    await edit(ctx, notebook_path="nb.ipynb", cell_id="calc", new_source="Now *prose*", cell_type="markdown")
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[1].cell_type == "markdown" and "outputs" not in nb.cells[1]
    await edit(ctx, notebook_path="nb.ipynb", cell_id="intro", new_source="print('hi')", cell_type="code")
    assert _cells(path)[0] == ("intro", "code", "print('hi')")


async def test_insert_after_a_cell_or_at_the_start(ctx: ToolContext, workspace: Path) -> None:
    path = _nb(workspace)
    after = await edit(ctx, notebook_path="nb.ipynb", cell_id="calc", edit_mode="insert", cell_type="code",
                       new_source="z = 3")
    cells = _cells(path)
    assert [c[0] for c in cells][:2] == ["intro", "calc"] and cells[2][1:] == ("code", "z = 3")
    new_id = cells[2][0]
    assert len(new_id) >= 8 and new_id not in ("intro", "calc", "last")
    assert after.content == f"Inserted code cell {new_id} after cell calc of nb.ipynb (4 cells now)."
    await edit(ctx, notebook_path="nb.ipynb", edit_mode="insert", cell_type="markdown", new_source="Preface")
    assert _cells(path)[0][1:] == ("markdown", "Preface") and len(_cells(path)) == 5
    with pytest.raises(ToolError, match=r"cell_type .* is required to insert"):
        await edit(ctx, notebook_path="nb.ipynb", edit_mode="insert", new_source="w")


async def test_delete_a_cell(ctx: ToolContext, workspace: Path) -> None:
    path = _nb(workspace)
    result = await edit(ctx, notebook_path="nb.ipynb", cell_id="calc", edit_mode="delete")
    assert result.content == "Deleted cell calc from nb.ipynb (2 cells now)."
    assert [c[0] for c in _cells(path)] == ["intro", "last"]
    assert result.metadata["diff"].removed == 4  # its header, its two lines and the blank line between cells


async def test_an_unknown_cell_or_a_wrong_file_changes_nothing(ctx: ToolContext, workspace: Path) -> None:
    path = _nb(workspace)
    before = path.read_bytes()
    with pytest.raises(ToolError, match=r"nb\.ipynb has no cell with id 'nope'; its cells: intro, calc, last"):
        await edit(ctx, notebook_path="nb.ipynb", cell_id="nope", new_source="x")
    with pytest.raises(ToolError, match="cell_id is required to delete a cell"):
        await edit(ctx, notebook_path="nb.ipynb", edit_mode="delete")
    (workspace / "a.py").write_text("x = 1\n")
    with pytest.raises(ToolError, match=r"a\.py is not a Jupyter notebook \(\.ipynb\); use Edit"):
        await edit(ctx, notebook_path="a.py", cell_id="calc", new_source="x")
    with pytest.raises(ToolError, match=r"File does not exist: new\.ipynb"):
        await edit(ctx, notebook_path="new.ipynb", cell_id="calc", new_source="x")
    (workspace / "broken.ipynb").write_text("{not json")
    with pytest.raises(ToolError, match=r"broken\.ipynb is not a notebook: its text is not JSON"):
        await edit(ctx, notebook_path="broken.ipynb", cell_id="cell-0", new_source="x")
    assert path.read_bytes() == before


async def test_an_edit_that_would_leave_an_invalid_notebook_is_refused(ctx: ToolContext, workspace: Path) -> None:
    raw = json.loads(_nb(workspace).read_text())
    raw["cells"][2]["bogus"] = 1  # already invalid: the edit cannot make it valid, so nothing is written
    (workspace / "bad.ipynb").write_text(json.dumps(raw))
    with pytest.raises(ToolError) as refused:
        await edit(ctx, notebook_path="bad.ipynb", cell_id="intro", new_source="# New")
    message = str(refused.value)
    assert message.startswith("the edit would leave bad.ipynb an invalid notebook (") and "'bogus'" in message
    assert message.endswith("; nothing was written") and "\n" not in message
    assert json.loads((workspace / "bad.ipynb").read_text()) == raw


async def test_an_old_notebook_keeps_its_format(ctx: ToolContext, workspace: Path) -> None:
    old = {"nbformat": 4, "nbformat_minor": 2, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "source": "a = 1", "outputs": []}]}
    path = workspace / "old.ipynb"
    path.write_text(json.dumps(old))
    await edit(ctx, notebook_path="old.ipynb", cell_id="cell-0", edit_mode="insert", cell_type="markdown",
               new_source="Notes")
    await edit(ctx, notebook_path="old.ipynb", cell_id="cell-1", new_source="More notes")
    assert _cells(path) == [("-", "code", "a = 1"), ("-", "markdown", "More notes")]  # no ids: 4.2 has none
    assert nbformat.read(path, as_version=4).nbformat_minor == 2


async def test_the_file_is_written_as_jupyter_writes_it(ctx: ToolContext, workspace: Path) -> None:
    path = _nb(workspace)
    await edit(ctx, notebook_path="nb.ipynb", cell_id="last", new_source="y = 3\nz = 4")
    text = path.read_text()
    assert text.startswith('{\n "cells": [\n') and text.endswith("}\n")
    assert '"source": [\n    "y = 3\\n",\n    "z = 4"\n   ]' in text


async def test_preview_is_the_diff_the_run_reports_and_writes_nothing(ctx: ToolContext, workspace: Path) -> None:
    path = _nb(workspace)
    before = path.read_bytes()
    tool = NotebookEditTool()
    args = tool.parse({"notebook_path": "nb.ipynb", "cell_id": "last", "new_source": "y = 20"})
    diff = await tool.preview(args, ctx)
    assert path.read_bytes() == before
    result = await tool.run(args, ctx)
    assert result.metadata["diff"] == diff
    assert tool.summary(args) == "nb.ipynb (replace cell last)"


class _Approver:
    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Approval:
        self.requests.append(request)
        return self.answers.pop(0)


async def _check(policy: PermissionPolicy, ctx: ToolContext, path: str) -> bool:
    tool = NotebookEditTool()
    args = tool.parse({"notebook_path": path, "cell_id": "last", "new_source": "y = 9"})
    return (await policy.check(tool, args, dataclasses.replace(ctx, permissions=policy))).allowed


async def test_permission_rules_modes_and_guarded_files_apply_as_for_edit(ctx: ToolContext, workspace: Path) -> None:
    _nb(workspace)
    assert "NotebookEdit" in EDIT_TOOLS and "NotebookEdit" not in READ_ONLY_TOOLS
    assert "NotebookEdit" in [tool.name for tool in build_tools()]
    assert not await _check(PermissionPolicy("readonly"), ctx, "nb.ipynb")
    assert not await _check(PermissionPolicy("auto", deny=["Edit(*.ipynb)"]), ctx, "nb.ipynb")
    assert not await _check(PermissionPolicy("auto", deny=["NotebookEdit(nb.ipynb)"]), ctx, "nb.ipynb")
    assert not await _check(PermissionPolicy("auto", deny=["Read(nb.ipynb)"]), ctx, "nb.ipynb")  # it shows cells
    assert await _check(PermissionPolicy("ask", allow=["NotebookEdit(*.ipynb)"]), ctx, "nb.ipynb")
    assert await _check(PermissionPolicy("ask", allow=["Edit(**)"]), ctx, "nb.ipynb")
    assert await _check(PermissionPolicy("accept_edits"), ctx, "nb.ipynb")
    (workspace / ".claude").mkdir()
    _nb(workspace / ".claude")
    approver = _Approver("deny")
    assert not await _check(PermissionPolicy("accept_edits", allow=["Edit(**)"], approver=approver), ctx,
                            ".claude/nb.ipynb")
    assert len(approver.requests) == 1  # a guarded file is asked every time


async def test_the_approval_shows_the_cells_diff(ctx: ToolContext, workspace: Path) -> None:
    _nb(workspace)
    approver = _Approver("allow_once")
    assert await _check(PermissionPolicy("ask", approver=approver), ctx, "nb.ipynb")
    (request,) = approver.requests
    assert request.tool == "NotebookEdit" and request.summary == "nb.ipynb (replace cell last)"
    assert request.diff is not None
    assert [line.text for line in request.diff.lines() if line.kind in ("removed", "added")] == ["y = 2", "y = 9"]
