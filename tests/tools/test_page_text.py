"""WebFetch's HTML conversion: a child process bounded in size and time, and a linear plain-text fallback."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from agentcli.tools.web import page_text
from agentcli.tools.web.page_text import html_to_text, plain_text
from tests.processes import wait_dead


def _workers() -> list[int]:
    """Live conversion children of this process."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == os.getpid() and b"agentcli.tools.web.html_worker" in cmdline and fields[0] != b"Z":
            found.append(int(name))
    return found


async def test_an_ordinary_page_becomes_markdown() -> None:
    page = await html_to_text("<html><head><title>x</title></head><body><h2>Notes</h2><p>Version <b>7.1</b>"
                              "</p><script>evil()</script></body></html>", 1000)
    assert page.text == "## Notes\n\nVersion **7.1**" and page.total == len(page.text) and page.notes == []


async def test_the_markdown_is_cut_in_the_child_and_its_length_kept() -> None:
    page = await html_to_text("<p>" + "word " * 2000 + "</p>", 100)
    assert len(page.text) == 100 and page.total > 9000


async def test_a_costly_page_comes_back_as_plain_text_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_text, "CONVERT_BASE_SECONDS", 1.0)
    monkeypatch.setattr(page_text, "CONVERT_SECONDS_PER_MILLION", 0.0)
    started = time.monotonic()
    page = await html_to_text("<p>Intro &amp; more.</p>" + "<a " * 30_000, 1000)  # ~7 s for html.parser
    assert time.monotonic() - started < 5
    assert page.text == "Intro & more."
    assert page.notes == ["[The page is shown as plain text, tags stripped: converting it to markdown took longer "
                          "than 1s (its markup is too costly to parse).]"]


async def test_markup_nested_too_deep_comes_back_as_plain_text() -> None:
    page = await html_to_text("<div>" * 5000 + "deep" + "</div>" * 5000, 1000)
    assert page.text == "deep"
    assert "its markup nests too deep" in page.notes[0]


async def test_a_huge_character_reference_neither_crashes_nor_stalls() -> None:
    page = await html_to_text("<p>a &#" + "9" * 5000 + "; b &#65; c</p>", 1000)
    assert page.text == "a \ufffd b A c" and page.notes == []


async def test_only_the_first_million_characters_are_converted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_text, "CONVERT_MAX_CHARS", 1000)
    page = await html_to_text("<p>" + "x" * 2000 + "</p>", 10_000)
    assert page.total == 1000 - len("<p>")
    assert page.notes == ["[Only the first 1000 of 2007 characters of HTML were converted.]"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
async def test_a_cancelled_conversion_kills_its_child_at_once() -> None:
    task = asyncio.ensure_future(html_to_text("<a " * 100_000, 1000))
    deadline = time.monotonic() + 30
    while not (workers := _workers()):
        assert time.monotonic() < deadline and not task.done()
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all(wait_dead(pid, 2) for pid in workers)


def test_plain_text_drops_tags_scripts_and_comments() -> None:
    html = ("<html><head><title>T</title><style>p{}</style></head><body><h1>Hi &amp; bye</h1>"
            "<p>a < b and <b>bold</b>\n   text</p><script>evil()</script><!-- note --><ul><li>one<li>two</ul>"
            "<table><tr><td>x<td>y</table><p>left open <a href=x")
    assert plain_text(html) == "T\n\nHi & bye\n\na < b and bold\ntext\n\none\ntwo\n\nx y\n\nleft open"


@pytest.mark.parametrize("hostile", ["<a ", "< ", "<p ", "<script ", "<!--", "<style>", "&#0", " \n"])
def test_plain_text_is_linear_on_hostile_markup(hostile: str) -> None:
    html = hostile * (1_000_000 // len(hostile))
    started = time.monotonic()
    plain_text(html)
    assert time.monotonic() - started < 5  # ~0.5 s; a quadratic pass would take hours
