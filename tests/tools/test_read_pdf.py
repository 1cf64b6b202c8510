"""Read of a PDF: its text page by page, `pages` ranges, the caps, and one line for what it cannot read."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentcli.tools.base import ToolContext, ToolError, ToolResult
from agentcli.tools.files import pdf
from agentcli.tools.files.read import ReadTool
from tests.documents import make_pdf


async def read(ctx: ToolContext, **raw: Any) -> ToolResult:
    tool = ReadTool()
    return await tool.run(tool.parse(raw), ctx)


async def test_a_pdf_reads_page_by_page(ctx: ToolContext, workspace: Path) -> None:
    make_pdf(workspace / "report.pdf", ["Quarterly report\nRevenue grew", "Costs fell", "Outlook: sunny"])
    result = await read(ctx, file_path="report.pdf")
    assert result.content == (
        "--- page 1 of 3 ---\nQuarterly report\nRevenue grew\n\n"
        "--- page 2 of 3 ---\nCosts fell\n\n"
        "--- page 3 of 3 ---\nOutlook: sunny"
    )
    assert result.metadata["total_pages"] == 3 and result.metadata["last_page"] == 3
    assert result.metadata["document"] == str(workspace / "report.pdf")  # small: the seam for document blocks


@pytest.mark.parametrize(("pages", "shown", "note"), [
    ("2", [2], '(Showing page 2 of 3. Use pages="3" to read more.)'),
    ("2-3", [2, 3], "(Showing pages 2-3 of 3.)"),
    (" 3 - ", [3], "(Showing page 3 of 3.)"),
    ("1-3", [1, 2, 3], "--- page 3 of 3 ---\nthree"),
])
async def test_pages_picks_a_range(ctx: ToolContext, workspace: Path, pages: str, shown: list[int], note: str) -> None:
    make_pdf(workspace / "r.pdf", ["one", "two", "three"])
    result = await read(ctx, file_path="r.pdf", pages=pages)
    assert [int(line.split()[2]) for line in result.content.splitlines() if line.startswith("--- page")] == shown
    assert result.content.endswith(note)
    tool = ReadTool()
    assert tool.summary(tool.parse({"file_path": "r.pdf", "pages": pages})) == f"r.pdf (pages {pages.strip()})"


async def test_at_most_twenty_pages_per_call_with_the_way_on(ctx: ToolContext, workspace: Path) -> None:
    make_pdf(workspace / "long.pdf", [f"text of page {n}" for n in range(1, 46)])
    result = await read(ctx, file_path="long.pdf")
    assert "--- page 20 of 45 ---\ntext of page 20" in result.content and "page 21 of" not in result.content
    assert result.content.endswith(
        '(Showing pages 1-20 of 45. Read returns at most 20 pages of a PDF per call. Use pages="21-40" to read more.)')
    last = await read(ctx, file_path="long.pdf", pages="41-")
    assert last.content.startswith("--- page 41 of 45 ---") and last.content.endswith("(Showing pages 41-45 of 45.)")
    with pytest.raises(ToolError, match="asks for 21 pages; Read returns at most 20 pages of a PDF per call"):
        await read(ctx, file_path="long.pdf", pages="1-21")
    with pytest.raises(ToolError, match=r"pages starts at 50, past the end of long.pdf \(45 pages\)"):
        await read(ctx, file_path="long.pdf", pages="50")


async def test_the_character_cap_stops_between_pages(ctx: ToolContext, workspace: Path) -> None:
    make_pdf(workspace / "wide.pdf", ["\n".join(["x" * 80] * 40)] * 5)  # ~3,240 characters a page
    result = await read(replace(ctx, read_max_chars=8000), file_path="wide.pdf")
    assert "--- page 2 of 5 ---" in result.content and "--- page 3 of 5 ---" not in result.content
    assert result.content.endswith('(Showing pages 1-2 of 5. Read returns at most 8,000 characters per call. '
                                   'Use pages="3-5" to read more.)')
    cut = await read(replace(ctx, read_max_chars=1000), file_path="wide.pdf", pages="4")
    assert cut.content.startswith("--- page 4 of 5 ---\n") and len(cut.content) < 1300
    assert "Page 4 was cut at 1,000 characters, the most Read returns per call." in cut.content


async def test_a_scanned_pdf_says_it_has_no_text(ctx: ToolContext, workspace: Path) -> None:
    make_pdf(workspace / "scan.pdf", ["", ""])
    result = await read(ctx, file_path="scan.pdf")
    assert result.content.count(pdf.NO_TEXT) == 2
    assert "No text was found on these pages: the PDF may be scanned images of pages" in result.content
    make_pdf(workspace / "mixed.pdf", ["words", ""])
    mixed = await read(ctx, file_path="mixed.pdf")
    assert f"--- page 2 of 2 ---\n{pdf.NO_TEXT}" in mixed.content and "No text was found" not in mixed.content


async def test_encrypted_and_malformed_pdfs_are_one_line(ctx: ToolContext, workspace: Path) -> None:
    make_pdf(workspace / "locked.pdf", ["secret"], password="pw")
    with pytest.raises(ToolError) as locked:
        await read(ctx, file_path="locked.pdf")
    assert str(locked.value) == "locked.pdf is an encrypted PDF that needs a password; Read cannot show its text"
    (workspace / "broken.pdf").write_bytes(b"%PDF-1.7\n\x00\x01 garbage with no xref\n")
    with pytest.raises(ToolError) as broken:
        await read(ctx, file_path="broken.pdf")
    message = str(broken.value)
    assert message.startswith("Cannot read broken.pdf: not a readable PDF (") and "\n" not in message
    (workspace / "empty.pdf").write_bytes(b"")
    with pytest.raises(ToolError, match=r"^Cannot read empty\.pdf: not a readable PDF"):
        await read(ctx, file_path="empty.pdf")


async def test_a_pdf_without_its_suffix_is_known_by_its_first_bytes(ctx: ToolContext, workspace: Path) -> None:
    make_pdf(workspace / "download", ["found by magic"])
    assert "found by magic" in (await read(ctx, file_path="download")).content


async def test_bad_arguments_for_pdfs(ctx: ToolContext, workspace: Path) -> None:
    make_pdf(workspace / "r.pdf", ["one"])
    (workspace / "t.txt").write_text("text\n")
    with pytest.raises(ToolError, match='give pages \\(such as "1-5"\\) instead of offset and limit'):
        await read(ctx, file_path="r.pdf", offset=2)
    with pytest.raises(ToolError, match=r"pages is for PDF files; t\.txt is not one"):
        await read(ctx, file_path="t.txt", pages="1")
    for bad in ("0", "3-2", "a-b", "1,2"):
        with pytest.raises(ToolError, match="pages"):
            await read(ctx, file_path="r.pdf", pages=bad)


def test_extraction_stops_when_the_call_is_cancelled(workspace: Path) -> None:
    path = make_pdf(workspace / "r.pdf", ["one", "two"])
    stop = threading.Event()
    stop.set()
    with pytest.raises(Exception) as stopped:
        pdf.extract(path, "r.pdf", 1, None, 100_000, stop)
    assert type(stopped.value).__name__ == "_Stopped"


def test_too_big_a_pdf_is_refused_before_it_is_parsed(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_pdf(workspace / "r.pdf", ["one"])
    monkeypatch.setattr(pdf, "PDF_MAX_BYTES", 100)
    with pytest.raises(ToolError, match=r"^r\.pdf is a .* PDF; Read opens PDFs up to .*$"):
        pdf.extract(path, "r.pdf", 1, None, 100_000)
