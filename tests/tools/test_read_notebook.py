"""Read of a Jupyter notebook: cells with ids, sources and outputs; image outputs shown as images; caps and bad
notebooks."""

from __future__ import annotations

import base64
import io
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from agentcli.tools.base import ToolContext, ToolError, ToolResult
from agentcli.tools.files import notebook
from agentcli.tools.files.read import ReadTool
from tests.documents import make_notebook


def _png() -> str:
    out = io.BytesIO()
    Image.frombytes("RGB", (64, 64), random.Random(3).randbytes(64 * 64 * 3)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


PNG = _png()  # a real image of about 12 KB (noise does not compress)


async def read(ctx: ToolContext, **raw: Any) -> ToolResult:
    tool = ReadTool()
    return await tool.run(tool.parse(raw), ctx)


def _analysis(workspace: Path) -> Path:
    return make_notebook(workspace / "analysis.ipynb", [
        {"type": "markdown", "source": "# Sales\nBy region", "id": "intro"},
        {"source": "total = 6 * 7\nprint(total)", "id": "calc", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "42\n"}]},
        {"source": "plot()", "id": "plot", "outputs": [
            {"output_type": "display_data", "metadata": {},
             "data": {"image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>"}}]},
        {"source": "1 / 0", "id": "oops", "outputs": [
            {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
             "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]}]},
    ])


async def test_a_notebook_shows_cells_ids_sources_and_outputs(ctx: ToolContext, workspace: Path) -> None:
    _analysis(workspace)
    result = await read(ctx, file_path="analysis.ipynb")
    assert result.content == (
        "--- cell 1 of 4 · id intro · markdown ---\n# Sales\nBy region\n\n"
        "--- cell 2 of 4 · id calc · code ---\ntotal = 6 * 7\nprint(total)\n--- output 1 (stdout) ---\n42\n\n"
        "--- cell 3 of 4 · id plot · code ---\nplot()\n--- output 1 (display_data) ---\n"
        "[image output: image/png, 12 KB — image 1 below]\n<Figure size 640x480 with 1 Axes>\n\n"
        "--- cell 4 of 4 · id oops · code ---\n1 / 0\n--- output 1 (error) ---\n"
        "ZeroDivisionError: division by zero"  # the traceback's colours removed
    )
    [image] = result.images  # the model is shown it
    assert (image.media_type, image.data, image.source) == ("image/png", PNG, "analysis.ipynb image 1")
    assert result.metadata["total_cells"] == 4


async def test_offset_and_limit_count_cells_and_the_cap_pages_them(ctx: ToolContext, workspace: Path) -> None:
    _analysis(workspace)
    part = await read(ctx, file_path="analysis.ipynb", offset=2, limit=1)
    assert part.content.startswith("--- cell 2 of 4 · id calc") and "cell 3" not in part.content
    assert part.content.endswith("(Showing cells 2-2 of 4. For a notebook offset and limit count cells: "
                                 "use offset=3 to read more.)")
    assert part.images == []
    make_notebook(workspace / "big.ipynb", [{"source": "x = 1\n" * 300} for _ in range(10)])
    capped = await read(replace(ctx, read_max_chars=5000), file_path="big.ipynb")
    assert capped.content.count("--- cell ") == 2
    assert capped.content.endswith("(Showing cells 1-2 of 10. Read returns at most 5,000 characters per call. "
                                   "For a notebook offset and limit count cells: use offset=3 to read more.)")
    with pytest.raises(ToolError, match=r"offset 11 is past the end of big\.ipynb \(10 cells\)"):
        await read(ctx, file_path="big.ipynb", offset=11)


async def test_long_outputs_are_cut_and_images_are_capped(ctx: ToolContext, workspace: Path) -> None:
    image = {"output_type": "display_data", "metadata": {}, "data": {"image/png": PNG}}
    make_notebook(workspace / "many.ipynb", [
        {"source": "spam()", "outputs": [{"output_type": "stream", "name": "stdout", "text": "y" * 10_000}]},
        {"source": "plots()", "outputs": [image] * (notebook.MAX_IMAGES + 2)},
    ])
    result = await read(ctx, file_path="many.ipynb")
    assert f"{'y' * notebook.OUTPUT_MAX_CHARS}… [6000 more characters]" in result.content
    assert len(result.images) == notebook.MAX_IMAGES
    assert result.content.count("[image output: image/png") == notebook.MAX_IMAGES + 2
    assert result.content.endswith("(2 more image output(s) were left out.)")


async def test_an_old_notebook_without_ids_names_cells_by_index(ctx: ToolContext, workspace: Path) -> None:
    old = {"nbformat": 4, "nbformat_minor": 2, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Old\n", "notebook"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 3, "source": "x", "outputs": []}]}
    (workspace / "old.ipynb").write_text(json.dumps(old))
    result = await read(ctx, file_path="old.ipynb")
    assert result.content == ("--- cell 1 of 2 · id cell-0 · markdown ---\n# Old\nnotebook\n\n"
                              "--- cell 2 of 2 · id cell-1 · code [3] ---\nx")


@pytest.mark.parametrize(("text", "says"), [
    ("{not json", "bad.ipynb is not a notebook: its text is not JSON"),
    ('{"cells": 3}', "bad.ipynb is not a notebook"),
    ("[1, 2]", "bad.ipynb is not a notebook"),
])
async def test_a_broken_notebook_is_one_line(ctx: ToolContext, workspace: Path, text: str, says: str) -> None:
    (workspace / "bad.ipynb").write_text(text)
    with pytest.raises(ToolError) as bad:
        await read(ctx, file_path="bad.ipynb")
    assert str(bad.value).startswith(says) and "\n" not in str(bad.value)


async def test_an_empty_notebook_file_is_empty(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "empty.ipynb").write_text("")
    assert (await read(ctx, file_path="empty.ipynb")).content == "(The file empty.ipynb exists but is empty.)"
    make_notebook(workspace / "none.ipynb", [])
    assert (await read(ctx, file_path="none.ipynb")).content == "(The notebook none.ipynb has no cells.)"
