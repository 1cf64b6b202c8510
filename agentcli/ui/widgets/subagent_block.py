"""SubagentBlock: one collapsible block per Task call, live while the subagent runs.

Modelled on Textual's `Collapsible`: a focusable header that toggles on click or Enter, and a
`collapsed` state kept in a CSS class. Unlike `Collapsible`, a collapsed block mounts nothing but
its header: the body's widgets are built from the block's `BlockItem` when it is expanded and
removed when it collapses, so finished blocks cost one line each however long their transcripts.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from agentcli.ui.model import (
    BlockItem,
    Entry,
    NoteItem,
    TextItem,
    ThinkingItem,
    ToolItem,
    compact_tokens,
    detach,
    format_seconds,
)
from agentcli.ui.widgets.message_list import AssistantText, NoteLine, StreamText, ThinkingView
from agentcli.ui.widgets.tool_call import ToolCallView

STATUS_LOOK: dict[str, tuple[str, str, str]] = {
    "queued": ("◌", "queued", "$text-muted"),
    "running": ("●", "running", "$accent"),
    "completed": ("✓", "done", "$success"),
    "failed": ("✗", "failed", "$error"),
    "timed_out": ("⏱", "timed out", "$warning"),
    "cancelled": ("⊘", "cancelled", "$warning"),
    "budget_exceeded": ("⊘", "over budget", "$warning"),
}


def entry_view(entry: Entry, *, in_block: bool) -> Widget:
    """Build the widget that shows one transcript entry, and link the entry to it. Text is Markdown in the
    main view and plain text inside subagent blocks."""
    view: Widget
    if isinstance(entry, ThinkingItem):  # dimmed, apart from the answer, in the main view and in blocks alike
        entry.pending.clear()
        view = entry.view = ThinkingView(entry)
    elif isinstance(entry, TextItem):
        entry.pending.clear()  # the new widget starts with the whole text
        view = entry.view = StreamText(entry) if in_block else AssistantText(entry)
    elif isinstance(entry, ToolItem):
        view = entry.view = ToolCallView(entry)
    elif isinstance(entry, BlockItem):
        view = entry.view = SubagentBlock(entry)
    else:
        assert isinstance(entry, NoteItem)
        view = entry.view = NoteLine(entry)
    return view


class BlockHeader(Static, can_focus=True):
    """The block's one-line header; focus it to cancel or toggle the block from the keyboard."""

    ALLOW_SELECT = False

    class Clicked(Message):
        """The header was clicked."""

    def on_click(self, event: events.Click) -> None:
        """Ask the block to toggle."""
        event.stop()
        self.post_message(self.Clicked())


class SubagentBlock(Vertical):
    """A subagent's live block: header (type, description, model, status, time, tools, tokens) and body."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_block", "Expand/collapse"),
        Binding("x", "cancel_subagent", "Cancel subagent"),
    ]

    class CancelRequested(Message):
        """The person asked to cancel this subagent."""

        def __init__(self, task_id: str) -> None:
            super().__init__()
            self.task_id = task_id

    def __init__(self, item: BlockItem) -> None:
        super().__init__(classes="subagent-block")
        self.item = item
        self.header = BlockHeader(classes="block-header")
        self.filled = False  # body widgets mounted (the router mounts new entries directly from then on)
        self._shown_status = ""
        self._sync_classes()

    def compose(self) -> Any:
        """The header; body entries are mounted after it."""
        yield self.header

    def on_mount(self) -> None:
        """Render the header and, unless collapsed, the body."""
        self.refresh_header()
        if not self.item.collapsed:
            self._fill()

    @property
    def accepts_entries(self) -> bool:
        """Whether new entries should be mounted into this block now."""
        return self.filled and not self.item.collapsed

    def _fill(self) -> None:
        views = [entry_view(entry, in_block=True) for entry in self.item.items]
        if views:
            self.mount_all(views)
        self.filled = True

    def set_collapsed(self, collapsed: bool) -> None:
        """Collapse to the header (removing the body's widgets) or expand (rebuilding them)."""
        item = self.item
        if item.collapsed == collapsed:
            return
        item.collapsed = collapsed
        if collapsed:
            detach(item.items)
            self.filled = False
            self.remove_children([child for child in self.children if child is not self.header])
        else:
            self._fill()
        self._sync_classes()
        self.refresh_header()

    def _sync_classes(self) -> None:
        self.set_class(self.item.collapsed, "-collapsed")
        for status in STATUS_LOOK:
            self.set_class(self.item.status == status, f"-{status}")

    def header_content(self) -> Content:
        """The header line for the block's current state."""
        item = self.item
        icon, word, style = STATUS_LOOK.get(item.status, ("?", item.status, "$text-muted"))
        arrow = "▶" if item.collapsed else "▼"
        parts: list[tuple[str, str] | str] = [
            (arrow, "$text-muted"), " ", (f"{icon} {word}", style), "  ", (item.label, "bold"), "  ",
        ]
        facts = [item.model]
        if item.active:
            parts.append(item.description)
        else:
            parts.append((item.short_result or word, style))
            facts.insert(0, item.description)
        if item.status != "queued":
            facts.append(format_seconds(item.elapsed_seconds()))
        facts.append(f"{item.tool_calls} tool{'s' if item.tool_calls != 1 else ''}")
        facts.append(f"{compact_tokens(item.input_tokens + item.output_tokens)} tok")
        parts.append(("  · " + " · ".join(f for f in facts if f), "$text-muted"))
        return Content.assemble(*parts)

    def refresh_header(self) -> None:
        """Re-render the header (and the footer's bindings when the status changed)."""
        self.header.update(self.header_content())
        if self._shown_status != self.item.status:
            self._shown_status = self.item.status
            self._sync_classes()
            if self.is_mounted:
                self.refresh_bindings()

    def action_toggle_block(self) -> None:
        """Expand or collapse."""
        self.set_collapsed(not self.item.collapsed)

    def action_cancel_subagent(self) -> None:
        """Cancel this subagent (its siblings and parent go on)."""
        if self.item.active:
            self.post_message(self.CancelRequested(self.item.task_id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel is shown disabled once the subagent has finished."""
        if action == "cancel_subagent":
            return True if self.item.active else None
        return True

    def on_block_header_clicked(self, event: BlockHeader.Clicked) -> None:
        """Toggle on a click on the header."""
        event.stop()
        self.header.focus()
        self.action_toggle_block()

    def on_unmount(self) -> None:
        """Forget the widget once removed."""
        if self.item.view is self:
            self.item.view = None
