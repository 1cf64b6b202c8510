"""The conversation view: a scrolling list of messages that follows new output until the person scrolls up."""

from __future__ import annotations

import textwrap

from markdown_it import MarkdownIt
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Markdown, Static

from agentcli.text import terminal_safe
from agentcli.ui.model import NoteItem, TextItem, ThinkingItem

SAFE_LINK_SCHEMES = ("http://", "https://")


class MessageList(VerticalScroll):
    """The main transcript. Anchored to the bottom: new content scrolls into view unless the person
    scrolled up; scrolling back to the end re-anchors it (Textual's `anchor()`)."""

    def on_mount(self) -> None:
        """Start following new output."""
        self.anchor()

    def follow(self) -> None:
        """Jump to the end and follow new output again."""
        self.anchor()


SEGMENT_BLOCKS = 8  # complete top-level blocks a segment holds, at least
# A segment may start only with a top-level block whose top margin is 0 in Textual's Markdown CSS (paragraph,
# lists, table, rule): margins collapse between the blocks of one Markdown widget, not across two, so the gap
# above such a block is the previous block's bottom margin either way.
SEGMENT_STARTS = frozenset({"paragraph_open", "bullet_list_open", "ordered_list_open", "table_open", "hr"})
_parser: MarkdownIt | None = None


def top_level_blocks(source: str) -> list[tuple[int, str]]:
    """(first line, token type) of each top-level block of `source`, parsed as Textual's Markdown parses it."""
    global _parser
    if _parser is None:
        _parser = MarkdownIt("gfm-like")
    return [(token.map[0], token.type) for token in _parser.parse(source)
            if token.level == 0 and token.map is not None]


def segment_end(source: str) -> int | None:
    """Where the first segment of `source` ends (a character offset), or None while it has none yet.

    A segment is at least `SEGMENT_BLOCKS` complete top-level blocks, and ends before a complete block that
    may start one (`SEGMENT_STARTS`); a block is complete once the next one has started. The same function
    cuts a streamed text as it grows and a whole text at once, so both end as the same segments.
    """
    blocks = top_level_blocks(source)
    for index in range(SEGMENT_BLOCKS, len(blocks) - 1):
        line, kind = blocks[index]
        if kind in SEGMENT_STARTS:
            return sum(len(text) for text in source.splitlines(keepends=True)[:line])
    return None


def split_segments(source: str) -> tuple[list[str], str]:
    """`source` cut into finished segments and the rest (the live tail)."""
    segments: list[str] = []
    while (end := segment_end(source)) is not None:
        segments.append(source[:end])
        source = source[end:]
    return segments, source


class MarkdownSegment(Markdown):
    """A run of top-level blocks of an answer. Markdown shows Rich/Textual markup literally; links are handled
    by the `AssistantText` that holds it."""

    def __init__(self, markdown: str, *, live: bool = False) -> None:
        super().__init__(markdown, classes="-live" if live else "-done", open_links=False)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The height its blocks need at `width`. Textual arranges auto-height children against the container's
        height too, which changes whenever the live tail grows; the blocks' heights do not depend on it, so
        leaving it out lets a finished segment's arrangement stay cached instead of being redone every frame."""
        return super().get_content_height(Size(container.width, 0), viewport, width)


class AssistantText(Widget):
    """Streaming assistant text, rendered as Markdown incrementally: finished top-level blocks are frozen into
    segments (each a `Markdown` widget rendered once and never touched again) and only the live tail is
    re-parsed as text arrives. A Textual `Markdown` re-arranges and (with order CSS) re-styles all its blocks
    whenever it grows, so one widget for a long answer made every frame cost more as the answer grew, and keys
    waited behind that work (bench/tui_stream.py). A text built at once is cut into the same segments
    (`split_segments`), so a streamed answer ends as it would have been rendered whole.

    The router appends batched chunks; one append runs at a time (`busy`). A link opens on a click only if it
    is http(s) (a model's `file:` or custom-scheme link is not handed to the system's opener)."""

    DEFAULT_CSS = """
    AssistantText {
        height: auto;
        layout: vertical;

        & > MarkdownSegment {
            padding: 0;
            background: transparent;
        }
        & > MarkdownSegment.-live > MarkdownBlock:last-child {
            margin-bottom: 0;
        }
    }
    """

    def __init__(self, item: TextItem) -> None:
        super().__init__(classes="assistant-text")
        self.item = item
        self._source = item.text
        self._shown = len(item.text)  # how much of the source the segments and the tail were handed
        self._frozen = 0  # how much of the source the frozen segments hold
        segments, rest = split_segments(item.text)
        self._frozen = len(item.text) - len(rest)
        self._segments = [MarkdownSegment(text) for text in segments]
        self._tail = MarkdownSegment(rest, live=True)
        self._work: AwaitComplete | None = None

    def compose(self) -> ComposeResult:
        """The frozen segments, then the live tail."""
        yield from self._segments
        yield self._tail

    @property
    def source(self) -> str:
        """The Markdown handed to the widget so far."""
        return self._source

    @property
    def segments(self) -> int:
        """How many frozen segments it shows (the live tail not counted)."""
        return len(self._segments)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Open http(s) links only."""
        event.stop()
        if event.href.strip().lower().startswith(SAFE_LINK_SCHEMES):
            self.app.open_url(event.href.strip())

    @property
    def busy(self) -> bool:
        """Whether an earlier append is still being parsed and mounted (or the widget is not mounted yet)."""
        return not self.is_mounted or (self._work is not None and not self._work.is_done)

    def push(self, chunk: str) -> None:
        """Append a chunk of Markdown (call only when not `busy`)."""
        if chunk:
            self._source += chunk
            self._work = AwaitComplete(self._catch_up())

    async def _catch_up(self) -> None:
        """Hand the text not shown yet to the tail; when blocks finished a segment, freeze them."""
        new, self._shown = self._source[self._shown :], len(self._source)
        rest = self._source[self._frozen :]
        segments, rest = split_segments(rest) if "\n" in new else ([], rest)
        if not segments:
            await self._tail.append(new)
            return
        # Build the new segments and tail hidden, then swap them in at once: no frame shows a half-built state.
        fresh = [MarkdownSegment(text) for text in segments]
        tail = MarkdownSegment(rest, live=True)
        for widget in (*fresh, tail):
            widget.display = False
        await self.mount_all([*fresh, tail], before=self._tail)
        old, self._tail = self._tail, tail
        self._segments += fresh
        self._frozen = len(self._source) - len(rest)
        for widget in (*fresh, tail):
            widget.display = True
        old.display = False
        await old.remove()


TAIL_ROWS = 4


def tail_lines(text: str, width: int, rows: int = TAIL_ROWS) -> list[str]:
    """The last `rows` lines of `text` wrapped at `width` (only the end of the text is wrapped)."""
    width = max(width, 20)
    lines: list[str] = []
    for paragraph in reversed(text[-rows * width * 2 :].split("\n")):
        lines[:0] = textwrap.wrap(paragraph, width) or [""]
        if len(lines) > rows:
            break
    while lines and not lines[-1].strip():
        lines.pop()
    return lines[-rows:]


class StreamText(Static):
    """A subagent's text inside its block, as plain text. While it streams it shows only its last few
    lines, wrapped here, so five parallel streams cost a few short lines per frame and no relayout
    unless the line count changes; once the message is complete it shows the whole text."""

    DEFAULT_CSS = """
    StreamText {
        width: 1fr;
        margin: 0;
        color: $text;

        &.-tail {
            text-wrap: nowrap;
            text-overflow: clip;
            color: $text-muted;
        }
    }
    """

    def __init__(self, item: TextItem, *, live: bool | None = None) -> None:
        super().__init__("", markup=False, classes="stream-text")
        self.item = item
        self.live = not item.done if live is None else live  # a complete text can still show as its tail
        self._rows = -1
        self.set_class(self.live, "-tail")

    @property
    def busy(self) -> bool:
        """Whether it cannot take text yet (not mounted)."""
        return not self.is_mounted

    def on_mount(self) -> None:
        """First render."""
        self._render_text()

    def on_resize(self) -> None:
        """The tail is wrapped here: re-wrap at the new width."""
        if self.live:
            self._render_text()

    def push(self, chunk: str) -> None:
        """Show the new end of the text (the chunk is already part of the item)."""
        self._render_text()

    def finish(self) -> None:
        """The message is complete: show all of it."""
        self.live = False
        self.remove_class("-tail")
        self._render_text()

    def _render_text(self) -> None:
        if not self.live:
            self.update(self.item.text)
            return
        width = self.content_size.width or max(self.app.size.width - 12, 20)
        lines = tail_lines(self.item.text, width)
        layout = len(lines) != self._rows
        self._rows = len(lines)
        self.update("\n".join(lines), layout=layout)


THINKING_LABEL = "∴ thinking…"


class ThinkingView(Static, can_focus=False):
    """The model's reasoning, dimmed and apart from the answer. While it streams it shows a label and the
    last few lines (wrapped here, like `StreamText`: a few short lines per frame); once the answer starts or
    the turn ends it folds to one line, which a click unfolds to the whole reasoning and folds again."""

    DEFAULT_CSS = """
    ThinkingView {
        width: 1fr;
        height: auto;
        margin: 0 0 0 0;
        padding: 0 1;
        color: $text-muted;
        text-style: italic;
    }
    """

    def __init__(self, item: ThinkingItem) -> None:
        super().__init__("", markup=False, classes="thinking")
        self.item = item
        self._rows = -1
        self.set_class(not item.done, "-live")

    @property
    def busy(self) -> bool:
        """Whether it cannot take text yet (not mounted)."""
        return not self.is_mounted

    def on_mount(self) -> None:
        """First render."""
        self._render_text()

    def on_resize(self) -> None:
        """The live tail is wrapped here: re-wrap at the new width."""
        if not self.item.done:
            self._render_text()

    def push(self, chunk: str) -> None:
        """Show the new end of the reasoning (the chunk is already part of the item)."""
        self._render_text()

    def finish(self) -> None:
        """The answer started or the turn ended: fold to one line."""
        self.remove_class("-live")
        self._render_text()

    def on_click(self) -> None:
        """Unfold a folded reasoning to all of it, or fold it again."""
        if self.item.done:
            self.item.expanded = not self.item.expanded
            self._render_text()

    def folded_line(self) -> str:
        """The one line a finished reasoning folds to."""
        words = self.item.words()
        hint = "click to fold" if self.item.expanded else "click to show"
        return f"∴ thought ({words} word{'s' if words != 1 else ''}) · {hint}"

    def _render_text(self) -> None:
        item = self.item
        self.set_class(not item.done, "-live")
        if item.done:
            text = f"{self.folded_line()}\n{item.text.strip()}" if item.expanded else self.folded_line()
            self._rows = -1
            self.update(text)
            return
        width = self.content_size.width or max(self.app.size.width - 12, 20)
        lines = [THINKING_LABEL, *tail_lines(item.text, width)]
        layout = len(lines) != self._rows
        self._rows = len(lines)
        self.update("\n".join(lines), layout=layout)


TextView = AssistantText | StreamText | ThinkingView


class NoteLine(Static):
    """A prompt the person sent, an error, or a notice (plain text, never markup)."""

    DEFAULT_CSS = """
    NoteLine {
        width: 1fr;
        margin: 1 0 0 0;

        &.-user {
            color: $text;
            background: $boost;
            border-left: outer $primary;
            padding: 0 1;
        }
        &.-info {
            color: $text-muted;
        }
        &.-error {
            color: $text-error;
        }
    }
    """

    def __init__(self, item: NoteItem) -> None:
        super().__init__(terminal_safe(item.text), markup=False, classes=f"note -{item.kind}")
        self.item = item
