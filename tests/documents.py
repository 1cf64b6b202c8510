"""Documents made for tests: PDFs with text on their pages (built with pypdf alone: a base-14 font needs no font
file) and Jupyter notebooks (nbformat's v4 builders)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _escape(text: str) -> bytes:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")


def make_pdf(path: Path, pages: Sequence[str], *, password: str | None = None) -> Path:
    """A PDF at `path` with one page per entry, its lines written in Helvetica ("" makes a page with no text, as a
    scanned page has none); `password`: encrypted, opened only with it."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"), NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
    })
    for text in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        ops = [b"BT /F1 11 Tf 14 TL 72 740 Td"]
        ops += [b"(" + _escape(line) + b") Tj T*" for line in text.splitlines()]
        ops.append(b"ET")
        stream = DecodedStreamObject()
        stream.set_data(b"\n".join(ops) if text else b"")
        page.replace_contents(stream)
    if password is not None:
        writer.encrypt(password, algorithm="RC4-128")
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def make_notebook(path: Path, cells: Sequence[dict[str, Any]]) -> Path:
    """A valid v4 notebook at `path`: each entry `{"type": "code"|"markdown", "source": ..., "outputs": [...],
    "id": ...}` (outputs are nbformat output dicts; an id is made when none is given)."""
    import nbformat
    from nbformat import v4

    made = []
    for cell in cells:
        if cell.get("type", "code") == "markdown":
            node = v4.new_markdown_cell(cell["source"])
        else:
            node = v4.new_code_cell(cell["source"], outputs=[nbformat.from_dict(o) for o in cell.get("outputs", [])])
        if "id" in cell:
            node["id"] = cell["id"]
        made.append(node)
    nb = v4.new_notebook(cells=made, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                              "language": "python"}})
    nbformat.validate(nb)
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return path
