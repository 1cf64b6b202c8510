"""Read of a PDF: its text page by page, with pypdf (imported only when a PDF is read, so start-up stays lean).

Bounded: at most `PDF_MAX_PAGES` pages per call (Claude Code's cap), at most the context's `read_max_chars`
characters (the rest is paged with `pages`), files up to `PDF_MAX_BYTES`, and the text is extracted in a worker
thread that stops between pages when the call is cancelled. A page without text (a scanned image) says so, and so
does a PDF with none; an encrypted PDF that needs a password and a malformed one are one line each.

The seam for documents: a PDF of at most `PDF_DOCUMENT_MAX_BYTES` is marked in Read's result metadata
(`document`: its absolute path), for a provider that takes PDFs as documents (Anthropic's document blocks) to send
the file itself; nothing sends it yet, and the text is what the model reads.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.tools.base import ToolError

if TYPE_CHECKING:
    from pypdf import PageObject, PdfReader

PDF_MAX_PAGES = 20  # pages one Read returns (as Claude Code's Read)
PDF_MAX_BYTES = 64 * 1024 * 1024  # bigger PDFs are refused: pypdf parses the file's structure in memory
PDF_DOCUMENT_MAX_BYTES = 4 * 1024 * 1024  # a PDF this small may go to the model as a document (the seam)
PDF_MAGIC = b"%PDF-"
NO_TEXT = "(no text on this page: it may be a scanned image)"
_PAGES = re.compile(r"^\s*(\d+)\s*(?:(-)\s*(\d+)?)?\s*$")


_LOG = logging.getLogger(__name__)


class _ToOurLog(logging.Handler):
    """pypdf's log records (a malformed file's warnings) go to agentcli's log file, never to the terminal."""

    def emit(self, record: logging.LogRecord) -> None:
        _LOG.handle(record)


def _pypdf_logs_to_ours() -> None:
    library = logging.getLogger("pypdf")
    if library.propagate:  # once
        library.propagate = False
        library.addHandler(_ToOurLog())


class _Stopped(Exception):
    """The call was cancelled: the extracting thread stops."""


def is_pdf(path: Path, head: bytes) -> bool:
    """Whether Read treats the file as a PDF: by its name, or by its first bytes."""
    return path.suffix.lower() == ".pdf" or head.startswith(PDF_MAGIC)


def parse_pages(spec: str) -> tuple[int, int | None]:
    """Read's `pages` ("3", "1-5", "4-") as (first, last or None for "to the end"); ToolError when malformed."""
    match = _PAGES.match(spec)
    if not match:
        raise ToolError(f'pages must be a page number or a range such as "1-5" (got {spec[:40]!r})')
    first = int(match.group(1))
    last = int(match.group(3)) if match.group(3) else (None if match.group(2) else first)
    if first < 1 or (last is not None and last < first):
        raise ToolError(f'pages "{spec.strip()}" is not a range of pages (pages count from 1)')
    if last is not None and last - first + 1 > PDF_MAX_PAGES:
        raise ToolError(f"pages asks for {last - first + 1} pages; Read returns at most {PDF_MAX_PAGES} pages "
                        "of a PDF per call")
    return first, last


@dataclass
class PdfText:
    """What one Read extracted: numbered pages' text, and where it stopped."""

    total: int  # pages in the PDF
    pages: list[tuple[int, str]] = field(default_factory=list)  # (page number, its text or NO_TEXT)
    capped: bool = False  # stopped at the character cap before the range's end
    cut: int | None = None  # a page whose text was cut at the character cap (only ever the first shown)


def _open(path: Path, rel: str) -> PdfReader:
    """A `pypdf.PdfReader` of the file (decrypted when it opens without a password); ToolError in one line."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    _pypdf_logs_to_ours()
    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ToolError(f"{rel} is an encrypted PDF that needs a password; Read cannot show its text")
        _ = len(reader.pages)
    except ToolError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        why = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise ToolError(f"Cannot read {rel}: not a readable PDF ({why})") from None
    except NotImplementedError as exc:  # an encryption method pypdf does not know
        raise ToolError(f"{rel} is an encrypted PDF Read cannot open ({str(exc)[:120]})") from None
    return reader


def _page_text(page: PageObject, number: int) -> str:
    """One page's text, NO_TEXT when it has none, a one-line note when pypdf cannot extract it."""
    try:
        text = page.extract_text()
    except Exception as exc:  # a malformed page is reported in its place, the others still shown
        return f"(page {number} could not be read: {' '.join(str(exc).split())[:160] or type(exc).__name__})"
    text = text.strip("\n")
    return text if text.strip() else NO_TEXT


def extract(path: Path, rel: str, first: int, last: int | None, max_chars: int,
            stop: threading.Event | None = None) -> PdfText:
    """Pages `first..last` (at most PDF_MAX_PAGES of them) in at most `max_chars` characters; run it in a thread."""
    stop = stop or threading.Event()
    size = path.stat().st_size
    if size > PDF_MAX_BYTES:
        raise ToolError(f"{rel} is a {size / 1048576:.1f} MB PDF; Read opens PDFs up to "
                        f"{PDF_MAX_BYTES // 1048576} MB")
    reader = _open(path, rel)
    pages = reader.pages
    out = PdfText(total=len(pages))
    if out.total == 0 or first > out.total:
        return out
    end = min(out.total, last if last is not None else first + PDF_MAX_PAGES - 1, first + PDF_MAX_PAGES - 1)
    used = 0
    for number in range(first, end + 1):
        if stop.is_set():
            raise _Stopped
        text = _page_text(pages[number - 1], number)
        cost = len(text) + 24  # with its `--- page N of M ---` line
        if used + cost > max_chars:
            if out.pages:
                out.capped = True
                break
            text, out.cut = text[: max(0, max_chars - 24)], number
        out.pages.append((number, text))
        used += cost
    return out


def _span(first: int, last: int, one: str = "", many: str = "") -> str:
    """`3` or `3-5`, after `one` or `many`."""
    return f"{one}{first}" if first == last else f"{many}{first}-{last}"


def render(rel: str, got: PdfText, first: int, max_chars: int) -> str:
    """The Read result: each page under its header, then one note saying what was left out and how to read on."""
    if got.total == 0:
        return f"(The PDF {rel} has no pages.)"
    if not got.pages:
        raise ToolError(f"pages starts at {first}, past the end of {rel} ({got.total} pages)")
    body = "\n\n".join(f"--- page {number} of {got.total} ---\n{text}" for number, text in got.pages)
    notes: list[str] = []
    if all(text == NO_TEXT for _, text in got.pages):
        notes.append("No text was found on these pages: the PDF may be scanned images of pages, which Read cannot "
                     "show as text.")
    if got.cut is not None:
        notes.append(f"Page {got.cut} was cut at {max_chars:,} characters, the most Read returns per call.")
    shown_first, shown_last = got.pages[0][0], got.pages[-1][0]
    if shown_first > 1 or shown_last < got.total:
        note = f"Showing {_span(shown_first, shown_last, 'page ', 'pages ')} of {got.total}."
        if got.capped:
            note += f" Read returns at most {max_chars:,} characters per call."
        elif shown_last - shown_first + 1 == PDF_MAX_PAGES:
            note += f" Read returns at most {PDF_MAX_PAGES} pages of a PDF per call."
        if shown_last < got.total:
            nxt = shown_last + 1
            note += f' Use pages="{_span(nxt, min(got.total, nxt + PDF_MAX_PAGES - 1))}" to read more.'
        notes.append(note)
    return body + ("\n\n(" + " ".join(notes) + ")" if notes else "")

