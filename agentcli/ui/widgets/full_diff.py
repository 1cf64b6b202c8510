"""The whole diff of an edit waiting for approval, one key away from the dialog (`d`): every line, however many.

The approval dialog shows the first `PREVIEW_LINES` lines of a diff; this screen shows all of it (a rewind's
preview opens it too, for one file it changes). The lines are
drawn as they scroll into view (Textual's line API), each numbered and coloured as the dialog's and highlighted
on its own, so a rewrite of a hundred thousand lines opens at once. PageUp/PageDown, the arrows and Home/End
scroll; Esc goes back to the question. Every line goes through `safe_line`: the file's text is untrusted.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual
from textual.widgets import Static

from agentcli.diffs import FileDiff
from agentcli.ui.widgets.diff_view import (
    GUTTER_STYLE,
    TAB_SIZE,
    diff_row,
    diff_title,
    highlight_line,
    language_of,
    line_number_width,
    safe_line,
)

_CACHED_ROWS = 4096  # rows kept drawn; scrolling back past them draws them again


class DiffLines(ScrollView, can_focus=True):
    """Every line of `diff`, drawn when it is in view."""

    DEFAULT_CSS = """
    DiffLines {
        height: 1fr;
        background: $panel;
    }
    """

    def __init__(self, diff: FileDiff, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.diff = diff
        self.lines = list(diff.lines())
        self._width = line_number_width(diff)
        self._language = language_of(diff.path)
        self._rows: dict[int, Content] = {}
        widest = max((len(line.text) + line.text.count("\t") * (TAB_SIZE - 1) for line in self.lines), default=0)
        self.virtual_size = Size(widest + 2 * self._width + 4, len(self.lines) + (1 if diff.omitted else 0))

    def row(self, index: int) -> Content:
        """Row `index`: a diff line, or the count of lines the diff itself left out."""
        if index >= len(self.lines):
            return Content.styled(f"… {self.diff.omitted} more lines (not in this diff)", GUTTER_STYLE)
        found = self._rows.get(index)
        if found is None:
            line = self.lines[index]
            text = safe_line(line.text)
            shown = highlight_line(text, self._language) if line.kind in ("context", "removed", "added") else \
                Content(text)
            found = diff_row(line, shown, self._width)
            if len(self._rows) >= _CACHED_ROWS:
                self._rows.clear()
            self._rows[index] = found
        return found

    def text_of(self, index: int) -> str:
        """Row `index` as plain text (what the person reads there)."""
        return self.row(index).plain

    def render_line(self, y: int) -> Strip:
        """Line `y` of the view: the row scrolled there, cut to the view's width at the horizontal scroll."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        index = scroll_y + y
        if index >= self.virtual_size.height:
            return Strip.blank(width, self.rich_style)
        content = self.row(index)
        strips = Visual.to_strips(self, content, max(content.cell_length, 1), 1, self.visual_style)
        strip = strips[0] if strips else Strip.blank(0)
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)


class FullDiffScreen(ModalScreen[None]):
    """The whole diff of one edit the person is asked about (or of one file a rewind changes); Esc goes back."""

    DEFAULT_CSS = """
    FullDiffScreen {
        align: center middle;
        background: $background 60%;
    }
    #full-diff-dialog {
        width: 95%;
        height: 95%;
        padding: 0 1;
        border: heavy $warning;
        background: $surface;
    }
    #full-diff-hint {
        color: $text-muted;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,d,q", "close", "Back to the question"),
        Binding("pageup", "scroll('page_up')", "Page up", show=False),
        Binding("pagedown", "scroll('page_down')", "Page down", show=False),
        Binding("home", "scroll('home')", "Top", show=False),
        Binding("end", "scroll('end')", "Bottom", show=False),
    ]

    def __init__(self, diff: FileDiff, *, back: str = "the question") -> None:
        """`back`: what Esc goes back to (the approval's question, a rewind's preview)."""
        super().__init__(classes="full-diff-screen")
        self.diff = diff
        self.back = back

    def compose(self) -> Any:
        """The file and its counts, the lines, and the keys."""
        with Vertical(id="full-diff-dialog"):
            yield Static(diff_title(self.diff), id="full-diff-title", markup=False)
            lines = DiffLines(self.diff, id="full-diff-lines")
            yield lines
            yield Static(f"the whole diff: {len(lines.lines)} lines · PageUp/PageDown, arrows, Home/End scroll · Esc "
                         f"goes back to {self.back}", id="full-diff-hint", markup=False)

    def on_mount(self) -> None:
        """The lines take the keys (arrows scroll them)."""
        self.query_one(DiffLines).focus()

    def action_scroll(self, where: str) -> None:
        """Scroll the lines a page, or to either end."""
        view = self.query_one(DiffLines)
        {"page_up": view.scroll_page_up, "page_down": view.scroll_page_down, "home": view.scroll_home,
         "end": view.scroll_end}[where](animate=False)

    def action_close(self) -> None:
        """Back to the approval dialog (or the rewind's preview)."""
        self.dismiss(None)
