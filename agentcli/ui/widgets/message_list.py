"""The conversation view: a scrolling list of messages that follows new output until the person scrolls up."""

from __future__ import annotations

import textwrap

from textual.await_complete import AwaitComplete
from textual.containers import VerticalScroll
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


class AssistantText(Markdown):
    """Streaming assistant text. The router appends batched chunks; one append runs at a time.

    Markdown shows Rich/Textual markup literally; a link opens on a click only if it is http(s) (a model's
    `file:` or custom-scheme link is not handed to the system's opener)."""

    def __init__(self, item: TextItem) -> None:
        super().__init__(item.text, classes="assistant-text", open_links=False)
        self.item = item
        self._appending: AwaitComplete | None = None

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Open http(s) links only."""
        event.stop()
        if event.href.strip().lower().startswith(SAFE_LINK_SCHEMES):
            self.app.open_url(event.href.strip())

    @property
    def busy(self) -> bool:
        """Whether an earlier append is still being parsed and mounted (or the widget is not mounted yet)."""
        return not self.is_mounted or (self._appending is not None and not self._appending.is_done)

    def push(self, chunk: str) -> None:
        """Append a chunk of Markdown (call only when not `busy`)."""
        if chunk:
            self._appending = self.append(chunk)


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
