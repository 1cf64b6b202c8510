"""The main agent's answer renders incrementally: finished blocks freeze into segments, a streamed answer ends
exactly as the whole text renders at once (and as one Rich `Markdown` of the whole text would), and keys typed
while a long answer streams all land in the prompt, in order."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.markdown import Markdown
from textual import events
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from agentcli.ui.model import TextItem
from agentcli.ui.widgets.message_list import (
    CUT_BEFORE,
    NO_CUT_AFTER,
    SEGMENT_BLOCKS,
    AssistantText,
    split_segments,
    top_level_blocks,
)
from tests.ui.conftest import MAIN, MakeApp, idle, wait_for

HOSTILE = "[bold red]not markup[/bold red] [@click=app.quit]quit[/] [x](file:///etc/passwd)"


def long_markdown(sections: int) -> str:
    """Headings, prose with inline code and links, lists, fences, tables, a quote and a rule, `sections` times."""
    parts = []
    for i in range(sections):
        parts.append(
            f"## Part {i}\n\nThe `step_{i}` reads the config, see [docs](https://example.com/{i}) and {HOSTILE}.\n"
            "It goes on for a second line.\n\n"
            + "".join(f"- item {k} of part {i}\n" for k in range(3))
            + "\n```python\n" + "".join(f"def f{k}(x: int) -> int:\n    return x * {k}\n\n" for k in range(2))
            + "```\n\n| name | value |\n| --- | ---: |\n"
            + "".join(f"| row {k} | {k * i} |\n" for k in range(3))
            + "\n1. first\n2. second\n\n> a quoted line\n\n---\n\n"
        )
    return "".join(parts) + "The end, in a last paragraph."


TEXT = long_markdown(6)


class Host(App[None]):
    """One answer in a scrolling view tall enough to show all of it, styled as the TUI styles answers."""

    CSS = """
    .assistant-text { margin: 1 0 0 0; padding: 0; background: transparent; }
    """

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            if self.mode == "plain":
                yield Static(Markdown(TEXT, code_theme="monokai", hyperlinks=False), classes="assistant-text")
            else:
                item = TextItem()
                if self.mode == "whole":
                    item.add(TEXT)
                yield AssistantText(item)


async def screenshot(mode: str, chunk: int = 23) -> tuple[str, int]:
    """The rendered screen (SVG, its random id removed) and the answer's frozen segments."""
    app = Host(mode)
    segments = 0
    async with app.run_test(size=(100, 1000)) as pilot:
        if mode == "stream":
            view = app.query_one(AssistantText)
            for start in range(0, len(TEXT), chunk):
                while view.busy:
                    await pilot.pause()
                piece = TEXT[start : start + chunk]
                view.item.add(piece)
                view.push(piece)
            while view.busy:
                await pilot.pause()
        if mode != "plain":
            segments = app.query_one(AssistantText).segments
        await pilot.pause()
        svg = app.export_screenshot()
    return re.sub(r"terminal-\d+", "terminal", svg), segments


async def test_a_streamed_answer_ends_exactly_as_the_whole_text_renders() -> None:
    streamed, streamed_segments = await screenshot("stream")
    whole, whole_segments = await screenshot("whole")
    plain, _ = await screenshot("plain")
    assert streamed_segments == whole_segments >= 2  # the incremental path froze segments on the way
    assert streamed == whole
    assert streamed == plain  # segments split only where one Markdown of the whole text shows the same gap
    assert "[bold red]not markup[/bold red]".replace(" ", "&#160;") in streamed  # markup is shown as typed


def test_segments_cut_only_between_complete_blocks_and_the_same_way_as_the_text_grows() -> None:
    segments, rest = split_segments(TEXT)
    assert "".join(segments) + rest == TEXT
    assert len(segments) >= 2 and rest
    for segment in segments:
        assert len(top_level_blocks(segment)) >= SEGMENT_BLOCKS
    for segment in segments:
        assert top_level_blocks(segment)[-1][1] not in NO_CUT_AFTER  # no cut right after a rule
    for later in [*segments[1:], rest]:
        assert top_level_blocks(later)[0][1] in CUT_BEFORE
    # Cutting a prefix of the text (what a stream has so far) never disagrees with cutting the whole.
    for end in range(0, len(TEXT), 97):
        early, _ = split_segments(TEXT[:end])
        assert early == segments[: len(early)]


async def _until(predicate: Callable[[], object], what: str, timeout: float = 20.0) -> None:
    """Wait until `predicate()` holds, checking every 5 ms. Not `wait_for` (Pilot's pause): that also waits for the
    process to be idle, which it never is while an answer streams, so each pause lasts its full second and a
    whole answer could stream past before the test has looked."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        await asyncio.sleep(0.005)


def _grew(item: TextItem, past: int) -> bool:
    """Whether the answer ended or has more than `past` characters."""
    return item.done or len(item.text) > past


def _press(app: App[Any], key: str, char: str) -> None:
    """Post a key as the terminal driver does: the app is not waited for (Pilot's `press` waits for it to idle)."""
    app.post_message(events.Key(key, char))


async def test_keys_typed_while_a_long_answer_streams_all_land_in_the_prompt_in_order(
    make_app: MakeApp, workspace: Path
) -> None:
    answer = long_markdown(12)
    step = Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text=answer, chunk_size=16), chunk_delay_ms=5)
    typed = "the quick brown fox jumps over the lazy dog " * 4
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server)
        async with app.run_test(size=(120, 40)) as pilot:
            # Sent and watched without Pilot's waits: they wait for the process to be idle, up to a second each,
            # and the ~2 s answer streams past in them unless the provider SDK is still being imported (which
            # holds the request back, but only in the first app of a test process).
            app.prompt.load_text("write a long answer")
            _press(app, "enter", "\r")
            await _until(lambda: app.router.main.current_text is not None, "the answer to start")
            item = app.router.main.current_text
            assert item is not None
            words_while_streaming = 0
            for word in re.findall(r"\S+ ", typed):
                for char in word:
                    _press(app, "space" if char == " " else char, char)
                words_while_streaming += not item.done
                await _until(partial(_grew, item, len(item.text) + 40), "more of the answer")
            await idle(pilot)
            await wait_for(pilot, lambda: app.prompt.text == typed, what="every typed key in the prompt")
            (view,) = app.query(AssistantText)
            assert view.source == answer and view.segments >= 2
    assert words_while_streaming > len(typed.split()) // 2  # most keys arrived while the answer still streamed
    server.assert_done()
