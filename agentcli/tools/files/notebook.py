"""Jupyter notebooks as Read shows them and NotebookEdit finds their cells, with nbformat (imported only when a
notebook is read or edited, so start-up stays lean).

Read shows each cell under a header with its number, id and type, then its outputs: text outputs as text (each cut
at `OUTPUT_MAX_CHARS`, terminal colours removed from tracebacks), image outputs as one line each
(`[image output: image/png, 12 KB — image 1 below]`) with the image itself in the result: `NotebookView.images`
holds them as (mime type, base64 text), at most `MAX_IMAGES`, and Read makes each fit as any image (`llm.images`).
Read pages a long notebook by cells (`offset`, `limit`) within the context's `read_max_chars`.

Cells are addressed by their `id` (nbformat 4.5 and later); a notebook older than 4.5 has none, so its cells are
`cell-N` (N counts from 0, as Claude Code names them), and so is a cell whose id is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.tools.base import ToolError

if TYPE_CHECKING:
    from nbformat import NotebookNode

NOTEBOOK_MAX_BYTES = 64 * 1024 * 1024  # bigger notebooks are refused: nbformat holds the whole document in memory
OUTPUT_MAX_CHARS = 4000  # text of one output shown; the rest is counted
MAX_IMAGES = 10  # image outputs handed on (the seam) per Read
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_TEXT_TYPES = ("text/plain", "text/markdown", "application/json", "text/html", "image/svg+xml", "text/latex")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")  # the colours of a traceback


def load(text: str, rel: str) -> NotebookNode:
    """The notebook in `text`, as version 4; ToolError in one line when it is not a notebook nbformat reads.

    Not validated here (`invalid` says what is wrong): nbformat's `reads` would repair the notebook while it
    validates it and tell the terminal so.
    """
    import nbformat
    from nbformat.converter import convert
    from nbformat.reader import reads

    try:
        nb: NotebookNode = convert(reads(text), 4)  # type: ignore[no-untyped-call]
    except nbformat.reader.NotJSONError:
        raise ToolError(f"{rel} is not a notebook: its text is not JSON") from None
    except (nbformat.ValidationError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ToolError(f"{rel} is not a notebook nbformat can read ({_one_line(exc)})") from None
    if not isinstance(nb.get("cells"), list):
        raise ToolError(f"{rel} is not a notebook: it has no list of cells")
    return nb


def invalid(nb: NotebookNode) -> str | None:
    """What makes the notebook invalid against its nbformat schema (the first problem, one line), or None. Never
    changes the notebook."""
    from nbformat.validator import iter_validate

    error = next(iter(iter_validate(nb)), None)  # type: ignore[no-untyped-call]
    if error is None:
        return None
    where = "/".join(str(part) for part in getattr(error, "absolute_path", ()) or ())
    message = " ".join(str(getattr(error, "message", None) or error).split())[:200]
    return message + (f" at {where}" if where else "")


def dumps(nb: NotebookNode) -> str:
    """The notebook's text as Jupyter writes it (one-space indent, sorted keys, sources as lists of lines)."""
    from nbformat import v4

    text: str = v4.writes(nb)  # type: ignore[no-untyped-call]
    return text + "\n"


def new_cell(nb: NotebookNode, kind: str, source: str) -> NotebookNode:
    """A new code or markdown cell for `nb`, with a fresh id only where the notebook's format has ids (4.5 on)."""
    from nbformat import v4

    build = v4.new_markdown_cell if kind == "markdown" else v4.new_code_cell
    cell: NotebookNode = build(source)  # type: ignore[no-untyped-call]
    if (nb.get("nbformat"), nb.get("nbformat_minor", 0)) < (4, 5):
        del cell["id"]
        return cell
    taken = {other.get("id") for other in nb.cells}
    while cell["id"] in taken:
        cell["id"] = v4.new_code_cell().id  # type: ignore[no-untyped-call]
    return cell


def cell_id(cell: dict[str, Any], index: int) -> str:
    """The id a cell is addressed by: its own, else `cell-N` (0-based index)."""
    own = cell.get("id")
    return own if isinstance(own, str) and own else f"cell-{index}"


def source_of(cell: dict[str, Any]) -> str:
    """A cell's source as one text (nbformat keeps it as a list of lines in the file)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def cells_text(nb: NotebookNode) -> str:
    """The cells' sources under one header each, without outputs: what NotebookEdit's diff compares."""
    parts = [f"# cell {cell_id(cell, i)} ({cell.get('cell_type', '?')})\n{source_of(cell).rstrip(chr(10))}\n"
             for i, cell in enumerate(nb.cells)]
    return "\n".join(parts)


@dataclass
class NotebookView:
    """What one Read shows of a notebook."""

    text: str
    total: int  # cells in the notebook
    first: int  # the first cell shown (1-based)
    last: int  # the last cell shown (first - 1 when none)
    capped: bool = False  # stopped at the character cap
    images: list[tuple[str, str]] = field(default_factory=list)  # (mime type, base64) of the cells shown
    images_left: int = 0  # image outputs past MAX_IMAGES, not handed on


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:160] or type(exc).__name__


def _cut(text: str, limit: int = OUTPUT_MAX_CHARS) -> str:
    text = text.rstrip("\n")
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more characters]"


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _output_lines(output: dict[str, Any], view: NotebookView) -> str:
    """One output as text; its images go to `view.images` (up to MAX_IMAGES) and are named in one line each."""
    kind = output.get("output_type")
    if kind == "stream":
        return _cut(_joined(output.get("text", "")))
    if kind == "error":
        trace = "\n".join(_joined(line) for line in output.get("traceback", []))
        return _cut(_ANSI.sub("", trace) or f"{output.get('ename', 'Error')}: {output.get('evalue', '')}")
    data = output.get("data") or {}
    lines: list[str] = []
    for mime in IMAGE_TYPES:
        if mime in data:
            encoded = _joined(data[mime]).replace("\n", "")
            size = len(encoded) * 3 // 4
            shown = len(view.images) < MAX_IMAGES
            lines.append(f"[image output: {mime}, {_size(size)}" + (f" — image {len(view.images) + 1} below]" if shown
                                                                    else " — not shown]"))
            if shown:
                view.images.append((mime, encoded))
            else:
                view.images_left += 1
    text_mime = next((mime for mime in _TEXT_TYPES if mime in data), None)
    if text_mime is not None:
        text = _joined(data[text_mime])
        lines.append(_cut(text) if text_mime == "text/plain" else f"[{text_mime}]\n{_cut(text)}")
    elif not lines and data:
        lines.append(f"[output of type {', '.join(sorted(data))} — not shown]")
    return "\n".join(lines)


def _size(size: int) -> str:
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.0f} KB" if size < 1048576 else f"{size / 1048576:.1f} MB"


def _cell_block(cell: dict[str, Any], index: int, total: int, view: NotebookView) -> str:
    kind = cell.get("cell_type", "?")
    head = f"--- cell {index + 1} of {total} · id {cell_id(cell, index)} · {kind}"
    if kind == "code" and cell.get("execution_count") is not None:
        head += f" [{cell['execution_count']}]"
    parts = [head + " ---", source_of(cell).rstrip("\n")]
    for number, output in enumerate(cell.get("outputs", []) if kind == "code" else [], start=1):
        if isinstance(output, dict):
            parts += [f"--- output {number} ({output.get('name') or output.get('output_type', '?')}) ---",
                      _output_lines(output, view)]
    return "\n".join(parts)


def render(nb: NotebookNode, first: int, count: int, max_chars: int) -> NotebookView:
    """Cells `first..first+count-1` (1-based) with their outputs, in at most `max_chars` characters (the first
    cell always shown, cut if it must be)."""
    cells = nb.cells
    view = NotebookView("", total=len(cells), first=first, last=first - 1)
    blocks: list[str] = []
    used = 0
    for index in range(first - 1, min(len(cells), first - 1 + count)):
        images_before = len(view.images), view.images_left
        block = _cell_block(cells[index], index, len(cells), view)
        if blocks and used + len(block) + 2 > max_chars:
            del view.images[images_before[0]:]  # this cell is not shown: neither are its images
            view.images_left = images_before[1]
            view.capped = True
            break
        if len(block) > max_chars:
            block = _cut(block, max_chars)
        blocks.append(block)
        used += len(block) + 2
        view.last = index + 1
    view.text = "\n\n".join(blocks)
    return view


def read_notebook_text(path: Path, rel: str) -> str:
    """The notebook file's text (at most NOTEBOOK_MAX_BYTES, UTF-8); ToolError in one line. Run it in a thread."""
    try:
        with path.open("rb") as fh:
            data = fh.read(NOTEBOOK_MAX_BYTES + 1)
    except OSError as exc:
        raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from None
    if len(data) > NOTEBOOK_MAX_BYTES:
        raise ToolError(f"{rel} is over {NOTEBOOK_MAX_BYTES // 1048576} MB; Read opens notebooks up to that size")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{rel} is not a notebook: its text is not UTF-8") from None


def is_notebook(path: Path) -> bool:
    """Whether Read shows the file as a notebook (by its name)."""
    return path.suffix.lower() == ".ipynb"
