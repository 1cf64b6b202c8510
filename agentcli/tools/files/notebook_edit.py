"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook by its id (Claude Code's tool and input).

The notebook is read and changed with nbformat and written only when it is still valid against its nbformat
schema, through the same checks and writer as Edit (the workspace and `write_paths`, the file's lock, hard links
and symlinks refused, an editor's buffers under ACP). It is a file edit like Edit: `Edit(...)` and
`NotebookEdit(...)` rules, guarded files, mode accept_edits and `files_modified` apply alike. What it changes is
shown as a diff of the cells' sources (`notebook.cells_text`: one `# cell ID (type)` header per cell, no
outputs), before it runs (`preview`) and after (`metadata["diff"]`).

Replacing a code cell's source clears its outputs and execution count (they belonged to the old source), as
Claude Code does. A cell inserted into a notebook older than nbformat 4.5 gets no id (that format has none); it is
then addressed as `cell-N`, like the notebook's other cells.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from agentcli.diffs import FileDiff, diff_text
from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agentcli.tools.files import notebook
from agentcli.tools.files.write import check_writable_target, current_text, put_text
from agentcli.tools.paths import display_path, normalize_rel, resolve_in_workspace

if TYPE_CHECKING:
    from nbformat import NotebookNode


class NotebookEditArgs(ToolArgs):
    """Arguments of NotebookEdit (Claude Code's names)."""

    notebook_path: str = Field(description="Path of the .ipynb notebook, relative to the workspace (or absolute)")
    cell_id: str | None = Field(
        None, description="Id of the cell to replace or delete; insert puts the new cell after it (at the start "
                          "when omitted). Cells without an id are cell-N (N from 0)")
    new_source: str = Field("", description="The cell's new source (replace, insert)")
    cell_type: Literal["code", "markdown"] | None = Field(
        None, description="The cell's type: required to insert; for replace, changes the type (default: kept)")
    edit_mode: Literal["replace", "insert", "delete"] = Field("replace", description="replace, insert or delete")


@dataclass(frozen=True, slots=True)
class _Edited:
    """One edit worked out in memory."""

    old: str  # the notebook file's text before
    new: str  # after
    old_cells: str  # `notebook.cells_text` before and after: what the diff shows
    new_cells: str
    said: str  # what the result tells the model


def _index_of(nb: NotebookNode, wanted: str, rel: str) -> int:
    """The index of the cell whose id is `wanted` (its own id, else `cell-N`); ToolError naming the ids."""
    ids = [notebook.cell_id(cell, i) for i, cell in enumerate(nb.cells)]
    if wanted in ids:
        return ids.index(wanted)
    shown = ", ".join(ids[:12]) + (f", … ({len(ids)} cells)" if len(ids) > 12 else "")
    raise ToolError(f"{rel} has no cell with id {wanted!r}; its cells: {shown or 'none'}. Read it to see them")


def _retype(cell: NotebookNode, kind: str) -> None:
    """Make `cell` a code or markdown cell (the fields the schema asks of each)."""
    if cell.get("cell_type") == kind:
        return
    cell["cell_type"] = kind
    if kind == "code":
        cell["outputs"], cell["execution_count"] = [], None
        cell.pop("attachments", None)  # only markdown and raw cells have them
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)


def apply(nb: NotebookNode, args: NotebookEditArgs, rel: str) -> str:
    """Carry out the edit on `nb` in memory; the sentence that tells what it did. ToolError when it cannot."""
    cells = nb.cells
    if args.edit_mode == "insert":
        if args.cell_type is None:
            raise ToolError("cell_type (code or markdown) is required to insert a cell")
        at = 0 if args.cell_id is None else _index_of(nb, args.cell_id, rel) + 1
        cell = notebook.new_cell(nb, args.cell_type, args.new_source)
        cells.insert(at, cell)
        where = f"after cell {args.cell_id}" if args.cell_id is not None else "at the start"
        return (f"Inserted {args.cell_type} cell {notebook.cell_id(cell, at)} {where} of {rel} "
                f"({len(cells)} cells now)")
    if args.cell_id is None:
        raise ToolError(f"cell_id is required to {args.edit_mode} a cell")
    index = _index_of(nb, args.cell_id, rel)
    if args.edit_mode == "delete":
        del cells[index]
        return f"Deleted cell {args.cell_id} from {rel} ({len(cells)} cells now)"
    cell = cells[index]
    if args.cell_type is not None:
        _retype(cell, args.cell_type)
    cell["source"] = args.new_source
    cleared = ""
    if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count") is not None):
        cell["outputs"], cell["execution_count"] = [], None
        cleared = "; its outputs were cleared"
    return f"Replaced the source of {cell.get('cell_type')} cell {args.cell_id} in {rel}{cleared}"


async def _edit(ctx: ToolContext, path: Path, rel: str, args: NotebookEditArgs) -> _Edited:
    """Read the notebook and apply the edit in memory (call it under the file's lock)."""
    if path.suffix.lower() != ".ipynb":
        raise ToolError(f"{rel} is not a Jupyter notebook (.ipynb); use Edit for other files")
    check_writable_target(path, rel)
    if not path.exists():
        raise ToolError(f"File does not exist: {rel}. NotebookEdit changes an existing notebook")
    old = await current_text(ctx, path, rel)
    return await asyncio.to_thread(_edited, old, args, rel)


def _edited(old: str, args: NotebookEditArgs, rel: str) -> _Edited:
    nb = notebook.load(old, rel)
    before = notebook.cells_text(nb)
    said = apply(nb, args, rel)
    if (why := notebook.invalid(nb)) is not None:
        raise ToolError(f"the edit would leave {rel} an invalid notebook ({why}); nothing was written")
    return _Edited(old, notebook.dumps(nb), before, notebook.cells_text(nb), said)


class NotebookEditTool(Tool[NotebookEditArgs]):
    """Replace, insert or delete one cell of a Jupyter notebook."""

    name: ClassVar[str] = "NotebookEdit"
    on_demand: ClassVar[bool] = True  # rarely needed: deferred, loaded through ToolSearch ([tools] defer)
    args_model: ClassVar[type[ToolArgs]] = NotebookEditArgs
    edits_files: ClassVar[bool] = True
    mutating: ClassVar[bool] = True
    path_target: ClassVar[bool] = True
    shows_file: ClassVar[bool] = True  # the changed cells

    def summary(self, args: NotebookEditArgs) -> str:
        cell = f" cell {args.cell_id}" if args.cell_id is not None else ""
        return f"{normalize_rel(args.notebook_path)} ({args.edit_mode}{cell})"

    def permission_target(self, args: NotebookEditArgs) -> str:
        return args.notebook_path.strip()  # as given: PermissionPolicy resolves it to the workspace-relative path

    async def preview(self, args: NotebookEditArgs, ctx: ToolContext) -> FileDiff:
        """The diff of the cells' sources the edit would make, without writing."""
        path = resolve_in_workspace(ctx, args.notebook_path, for_write=True)
        rel = display_path(ctx, path)
        async with ctx.file_locks.lock(path):
            edited = await _edit(ctx, path, rel, args)
        return await asyncio.to_thread(diff_text, rel, edited.old_cells, edited.new_cells, max_lines=None)

    async def run(self, args: NotebookEditArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx, args.notebook_path, for_write=True)
        rel = display_path(ctx, path)
        async with ctx.file_locks.lock(path):
            edited = await _edit(ctx, path, rel, args)
            await put_text(ctx, path, rel, edited.new)
        result = ToolResult(edited.said + ".", files_modified=[rel])
        result.metadata["diff"] = await asyncio.to_thread(diff_text, rel, edited.old_cells, edited.new_cells)
        return result
