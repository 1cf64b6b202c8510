"""The conversation view: a scrolling list of messages that follows new output until the person scrolls up."""

from __future__ import annotations

import io
import textwrap

from markdown_it import MarkdownIt
from rich.console import Console
from rich.markdown import Markdown as RichMarkdown
from rich.styled import Styled
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from agentcli.text import terminal_safe
from agentcli.ui.model import NoteItem, TextItem, ThinkingItem


class MessageList(VerticalScroll):
    """The main transcript. Anchored to the bottom: new content scrolls into view unless the person
    scrolled up; scrolling back to the end re-anchors it (Textual's `anchor()`)."""

    def on_mount(self) -> None:
        """Start following new output."""
        self.anchor()

    def follow(self) -> None:
        """Jump to the end and follow new output again."""
        self.anchor()


SEGMENT_BLOCKS = 2  # complete top-level blocks a segment holds, at least
# Where a segment may be cut so that the segments, drawn one below the other with one blank line between, look
# exactly as the whole text drawn at once (Rich's Markdown separates top-level blocks with one blank line): before
# a block that draws nothing above itself when it comes first (a list, table or quote does: its own blank line),
# and not right after a rule (a rule draws its blank line below itself).
CUT_BEFORE = frozenset({"paragraph_open", "heading_open", "fence", "code_block", "html_block"})
NO_CUT_AFTER = frozenset({"hr"})
_parser: MarkdownIt | None = None


def top_level_blocks(source: str) -> list[tuple[int, str]]:
    """(first line, token type) of each top-level block of `source`, parsed as Rich's Markdown parses it."""
    global _parser
    if _parser is None:
        _parser = MarkdownIt().enable("strikethrough").enable("table")
    return [(token.map[0], token.type) for token in _parser.parse(source)
            if token.level == 0 and token.map is not None]


def segment_end(source: str) -> int | None:
    """Where the first segment of `source` ends (a character offset), or None while it has none yet.

    A segment is at least `SEGMENT_BLOCKS` complete top-level blocks, and ends before a complete block where
    `CUT_BEFORE` and `NO_CUT_AFTER` allow; a block is complete once the next one has started. The same function
    cuts a streamed text as it grows and a whole text at once, so both end as the same segments.
    """
    blocks = top_level_blocks(source)
    for index in range(SEGMENT_BLOCKS, len(blocks) - 1):
        line, kind = blocks[index]
        if kind in CUT_BEFORE and blocks[index - 1][1] not in NO_CUT_AFTER:
            return sum(len(text) for text in source.splitlines(keepends=True)[:line])
    return None


def split_segments(source: str) -> tuple[list[str], str]:
    """`source` cut into finished segments and the rest (the live tail)."""
    segments: list[str] = []
    while (end := segment_end(source)) is not None:
        segments.append(source[:end])
        source = source[end:]
    return segments, source


WARM_UP_TEXT = (
    "# a\n\n- b `c`\n\n| d | e |\n| - | - |\n| 1 | 2 |\n\n"
    "```python\ndef f(x: int) -> int:\n    return x\n```\n"
)


def warm_up() -> None:
    """Draw a small answer once, off screen (any thread): Rich's Markdown, tables and the code highlighter
    import modules and build tables on first use, tens of ms that would otherwise land in the frame of the
    first answer, while the person may be typing."""
    console = Console(width=80, file=io.StringIO(), color_system="truecolor")
    console.print(RichMarkdown(WARM_UP_TEXT, code_theme="monokai", hyperlinks=False))
    top_level_blocks(WARM_UP_TEXT)


class MarkdownSegment(Widget):
    """A run of top-level blocks of an answer, drawn as one widget by Rich's Markdown renderer.

    One widget per run of blocks, not one per block: Textual lays out the whole screen whenever a height
    changes (every append to a streaming answer), walking every widget in it, so an answer made of hundreds
    of block widgets made each frame cost more as the session grew (bench/tui_stream.py). Its lines are drawn
    once per width and theme and handed out one by one (Textual's line API): measuring its height and drawing
    it used to render the Markdown twice a frame. Model text is shown as typed: Rich's Markdown does not read
    console markup, and links are drawn as their text and address, never as terminal hyperlinks a click could
    open (a model's `file:` or custom-scheme link stays text)."""

    DEFAULT_CSS = """
    MarkdownSegment {
        height: auto;
        &.-done { margin-bottom: 1; }
    }
    """

    def __init__(self, markdown: str, *, live: bool = False) -> None:
        super().__init__(classes="-live" if live else "-done")
        self._markdown = markdown
        self._drawn: tuple[tuple[int, str], list[Strip]] | None = None  # (width, theme) and the lines

    @property
    def markdown(self) -> str:
        """The Markdown source it shows."""
        return self._markdown

    def append(self, text: str) -> None:
        """Show more of the text: drawn (and measured) again at the next frame."""
        self.replace(self._markdown + text)

    def replace(self, text: str) -> None:
        """Show `text` instead."""
        self._markdown = text
        self._drawn = None
        self.refresh(layout=True)

    def lines(self, width: int) -> list[Strip]:
        """Its lines at `width`, drawn by Rich the first time; code fences in a theme that suits the app's."""
        key = (width, self.app.theme)
        if self._drawn is None or self._drawn[0] != key:
            dark = self.app.current_theme.dark
            markdown = RichMarkdown(self._markdown, code_theme="monokai" if dark else "default", hyperlinks=False)
            options = self.app.console_options.update(width=width, highlight=False)
            drawn = self.app.console.render_lines(Styled(markdown, self.rich_style), options, pad=False)
            self._drawn = (key, [Strip(line) for line in drawn])
        return self._drawn[1]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """As many rows as it has lines at `width`."""
        return len(self.lines(width)) if width else 0

    def render_line(self, y: int) -> Strip:
        """Line `y` of the drawing."""
        width = self.content_size.width
        lines = self.lines(width)
        return lines[y] if y < len(lines) else Strip.blank(width)


class AssistantText(Widget):
    """Streaming assistant text, rendered as Markdown incrementally: finished top-level blocks are frozen into
    segments (each rendered once and cached until the width changes) and only the live tail is re-parsed as
    text arrives. A text built at once is cut into the same segments (`split_segments`), and Rich renders a run
    of blocks cut there exactly as the whole text with a blank line at the cut, so a streamed answer ends as it
    would have been rendered whole.

    The router appends batched chunks; `busy` stays for its contract (an append is synchronous here)."""

    DEFAULT_CSS = """
    AssistantText {
        height: auto;
        layout: vertical;
    }
    """

    def __init__(self, item: TextItem) -> None:
        super().__init__(classes="assistant-text")
        self.item = item
        self._source = item.text
        segments, rest = split_segments(item.text)
        self._frozen = len(item.text) - len(rest)  # how much of the source the frozen segments hold
        self._segments = [MarkdownSegment(text) for text in segments]
        self._tail = MarkdownSegment(rest, live=True)
        self._tail.display = bool(rest)

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

    @property
    def busy(self) -> bool:
        """Whether it cannot take text yet (not mounted)."""
        return not self.is_mounted

    def push(self, chunk: str) -> None:
        """Append a chunk of Markdown; when blocks finished a segment, freeze them."""
        if not chunk:
            return
        self._source += chunk
        rest = self._source[self._frozen :]
        segments, rest = split_segments(rest) if "\n" in chunk else ([], rest)
        if not segments:
            self._tail.append(chunk)
            self._tail.display = bool(rest)
            return
        fresh = [MarkdownSegment(text) for text in segments]
        self._segments += fresh
        self._frozen = len(self._source) - len(rest)
        self.mount_all(fresh, before=self._tail)
        self._tail.replace(rest)
        self._tail.display = bool(rest)


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
