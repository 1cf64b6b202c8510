"""An HTML page as text for WebFetch, in bounded time and size, never in agentcli's own process.

The markdown conversion (`tools.html_worker`) runs in a child process in a session of its own, on at most
`CONVERT_MAX_CHARS` characters of the page, with a time limit that grows linearly with the page
(`convert_seconds`: a page that costs more than linear time is cut early). The child is killed at that limit,
when the call is cancelled (Ctrl-C, SIGTERM, a deadline) and, through the parent-death signal, should agentcli
die. No thread is left for the exit to wait on. When the conversion is cut or fails, the page comes back as plain
text: tags stripped in one linear pass (`plain_text`), with a note saying why.
"""

from __future__ import annotations

import asyncio
import contextlib
import html as html_lib
import math
import re
import signal
import sys
from dataclasses import dataclass, field

from agentcli.tools.search.child import PACKAGE_ROOT, child_env, kill
from agentcli.tools.shell.reaper import parent_death_hook
from agentcli.tools.web.html_worker import NESTED_TOO_DEEP

CONVERT_MAX_CHARS = 1_000_000  # of HTML: far more than `max_output_chars` of markdown needs
CONVERT_BASE_SECONDS = 4.0  # start-up (~0.15 s) and headroom on a busy machine
CONVERT_SECONDS_PER_MILLION = 12.0  # ordinary pages: 2.5-6.5 s per million characters, 11 s on a loaded machine
_BLOCKS = ("p|div|br|li|ul|ol|tr|table|h[1-6]|pre|blockquote|section|article|header|footer|nav|main|hr|dt|dd|dl|"
           "form|figure|figcaption|aside|details|summary|body|html|title")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)  # one left open runs to the end (consumed: never rescanned)
_RAW_TEXT = re.compile(r"<(script|style|noscript|template|iframe|svg|textarea|xmp)\b[^<>]*>.*?(?:</\1\s*>|\Z)",
                       re.S | re.I)
_BLOCK_TAG = re.compile(rf"</?(?=[a-zA-Z])(?:{_BLOCKS})\b[^<>]*>", re.I)  # the look-ahead skips `< ` fast
_CELL_TAG = re.compile(r"</?t[dh]\b[^<>]*>", re.I)
_ANY_TAG = re.compile(r"<[a-zA-Z/!?][^<>]*(?:>|(?=<)|\Z)")  # a tag left open ends where the next one starts
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_LINE_EDGE = re.compile(r" \n ?|\n ")  # after _SPACES: at most one space either side
_BLANK_LINES = re.compile(r"\n{3,}")
# A numeric character reference of thousands of digits makes `int()` raise (and costs quadratic time below
# Python's digit limit) in html.parser and html.unescape alike; no code point has more than 7 digits.
_LONG_CHARREF = re.compile(r"&#(?:[xX]0*[0-9a-fA-F]{7,}|0*[0-9]{8,});?")


@dataclass(slots=True)
class PageText:
    """The text of a page: its first `max_chars` characters, how many it had in all, and notes for the model."""

    text: str
    total: int
    notes: list[str] = field(default_factory=list)


def convert_seconds(chars: int) -> float:
    """The time a conversion of `chars` characters of HTML may take."""
    return CONVERT_BASE_SECONDS + CONVERT_SECONDS_PER_MILLION * chars / 1_000_000


async def html_to_text(html: str, max_chars: int) -> PageText:
    """The page as markdown, or as plain text when converting it would take too long or fails."""
    notes = []
    html = _LONG_CHARREF.sub("\ufffd", html)
    source = html
    if len(source) > CONVERT_MAX_CHARS:
        source = source[:CONVERT_MAX_CHARS]
        notes.append(f"[Only the first {CONVERT_MAX_CHARS} of {len(html)} characters of HTML were converted.]")
    seconds = convert_seconds(len(source))
    try:
        total, text = await _convert(source, max_chars, seconds)
    except _ConversionFailed as exc:
        # Linear, on as much as the conversion was given: at most ~1 s on the event loop, for the worst markup.
        text = plain_text(source)
        notes.append(f"[The page is shown as plain text, tags stripped: converting it to markdown {exc}.]")
        return PageText(text[:max_chars], len(text), notes)
    return PageText(text, total, notes)


#: How a child that reached its own CPU-time limit ends: SIGXCPU, or SIGKILL at the hard limit a second later.
_OUT_OF_CPU = frozenset({-getattr(signal, "SIGXCPU", 24), -signal.SIGKILL})


class _ConversionFailed(Exception):
    """Why the child gave no markdown (the rest of a sentence: `converting it to markdown …`)."""


async def _convert(html: str, max_chars: int, seconds: float) -> tuple[int, str]:
    """The markdown's length and its first `max_chars` characters, from a child killed at `seconds`."""
    # Never with the workspace as its folder (`-m` would import a repository's `bs4`); -P drops that entry.
    argv = [sys.executable, "-P", "-m", "agentcli.tools.web.html_worker", str(max_chars), str(math.ceil(seconds))]
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=PACKAGE_ROOT, env=child_env(python=True), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=sys.platform != "win32",
            preexec_fn=parent_death_hook(),  # forked by the event loop's thread, which lives as long as we do
        )
    except OSError as exc:
        raise _ConversionFailed(f"could not start ({exc.strerror or exc})") from None
    try:
        async with asyncio.timeout(seconds):
            out, _ = await proc.communicate(html.encode("utf-8", errors="replace"))
    except TimeoutError:
        raise _ConversionFailed(f"took longer than {seconds:.0f}s (its markup is too costly to parse)") from None
    finally:
        kill(proc)  # the whole group, at once: cancelled, timed out, or already ended (then nothing)
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())
    if proc.returncode == NESTED_TOO_DEEP:
        raise _ConversionFailed("failed: its markup nests too deep")
    if proc.returncode in _OUT_OF_CPU:  # its own CPU limit (html_worker) struck before our clock did
        raise _ConversionFailed(f"took longer than {seconds:.0f}s (its markup is too costly to parse)")
    head, newline, text = out.partition(b"\n")
    if proc.returncode != 0 or not newline or not head.isdigit():
        raise _ConversionFailed(f"failed (exit status {proc.returncode})")
    return int(head), text.decode("utf-8", errors="replace")


def plain_text(html: str) -> str:
    """The page's text with every tag dropped, in linear time whatever the markup: comments and the contents of
    scripts and styles go too, block tags become line breaks, entities are decoded and runs of blank lines
    fold into one. Every pattern stops at the next `<`, or consumes what it scanned, so no stretch of the page
    is scanned twice (`<[^>]*>` would rescan to the end from each `<` of `<a <a <a …`)."""
    text = _COMMENT.sub("", html)
    text = _RAW_TEXT.sub("", text)
    text = _BLOCK_TAG.sub("\n", text)
    text = _CELL_TAG.sub(" ", text)
    text = _ANY_TAG.sub("", text)
    text = html_lib.unescape(_LONG_CHARREF.sub("\ufffd", text))
    text = _SPACES.sub(" ", text)
    text = _LINE_EDGE.sub("\n", text)
    return _BLANK_LINES.sub("\n\n", text).strip()
