"""SubagentBlock: one collapsible block per Task call, live while the subagent runs.

Built on Textual's `Collapsible` idioms: its look in `DEFAULT_CSS`, a focusable header that asks for a
toggle on click or Enter, a reactive `collapsed` whose watcher does the work, and `Expanded` / `Collapsed`
messages (both `Toggled`) posted on every change. Unlike `Collapsible`, a collapsed block mounts nothing
but its header: the body's widgets are built from the block's `BlockItem` (through the `BlockBody` it is
given, which records which widget shows which item) when it expands, and removed when it collapses, so
finished blocks cost one line each however long their transcripts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Protocol

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from agentcli.figures import compact_tokens
from agentcli.status import TaskStatus
from agentcli.ui.model import BlockItem, Entry, format_seconds

STATUS_LOOK: dict[TaskStatus, tuple[str, str, str]] = {  # icon, word, style of each task status
    "queued": ("◌", "queued", "$text-muted"),
    "running": ("●", "running", "$accent"),
    "completed": ("✓", "done", "$success"),
    "failed": ("✗", "failed", "$error"),
    "timed_out": ("⏱", "timed out", "$warning"),
    "cancelled": ("⊘", "cancelled", "$warning"),
    "budget_exceeded": ("⊘", "over budget", "$warning"),
}


class BlockBody(Protocol):
    """Builds the widgets of a block's entries and forgets them when they are removed (the router's views)."""

    def build(self, entry: Entry, *, in_block: bool) -> Widget:
        """A new widget showing `entry`."""
        ...

    def forget(self, entries: Iterable[Entry]) -> None:
        """`entries` (and everything nested in them) are no longer shown."""
        ...


class BlockHeader(Static, can_focus=True):
    """The block's one-line header; focus it to cancel or toggle the block from the keyboard."""

    ALLOW_SELECT = False
    DEFAULT_CSS = """
    BlockHeader {
        width: 1fr;
        height: auto;
        max-height: 2;
        padding: 0 1 0 0;

        &:hover {
            background: $block-hover-background;
        }
        &:focus {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """

    class Toggle(Message):
        """The header asks its block to toggle (a click; Enter is the block's binding)."""

    def on_click(self, event: events.Click) -> None:
        """Ask the block to toggle."""
        event.stop()
        self.post_message(self.Toggle())


class SubagentBlock(Widget):
    """A subagent's live block: header (type, description, model, status, time, tools, tokens) and body."""

    DEFAULT_CSS = """
    SubagentBlock {
        layout: vertical;
        width: 1fr;
        height: auto;
        margin: 1 0 0 0;
        padding: 0 0 0 1;
        border-left: heavy $accent 60%;
        background: $surface;

        &.-collapsed {
            margin: 0;
            border-left: heavy $panel;
        }
        &.-completed {
            border-left: heavy $success 50%;
        }
        &.-failed, &.-timed_out, &.-budget_exceeded {
            border-left: heavy $error 60%;
        }
        &.-cancelled {
            border-left: heavy $warning 60%;
        }
        & SubagentBlock {
            background: $surface-lighten-1;
        }
        & > NoteLine {
            margin: 0;
        }
        & > NoteLine.-user {
            color: $text-muted;
            background: transparent;
            border-left: none;
            padding: 0;
        }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_block", "Expand/collapse"),
        Binding("ctrl+x", "cancel_subagent", "Cancel subagent"),  # never a text key: those go to the prompt
    ]

    collapsed: reactive[bool] = reactive(False, init=False)
    """Whether only the header shows. Set it to collapse (the body's widgets go) or expand (they are rebuilt)."""

    class Toggled(Message):
        """The block was collapsed or expanded (`Collapsed` / `Expanded`)."""

        def __init__(self, block: SubagentBlock) -> None:
            super().__init__()
            self.block = block

        @property
        def control(self) -> SubagentBlock:
            """The block that was toggled."""
            return self.block

    class Expanded(Toggled):
        """The block was expanded: its body is mounted."""

    class Collapsed(Toggled):
        """The block was collapsed to its header."""

    class CancelRequested(Message):
        """The person asked to cancel this subagent."""

        def __init__(self, task_id: str) -> None:
            super().__init__()
            self.task_id = task_id

    def __init__(self, item: BlockItem, body: BlockBody) -> None:
        super().__init__(classes="subagent-block")
        self.item = item
        self._body = body
        self.header = BlockHeader(classes="block-header")
        self.filled = False  # body widgets mounted (the router mounts new entries directly from then on)
        self._shown_status = ""
        self.set_reactive(SubagentBlock.collapsed, item.collapsed)
        self._sync_classes()

    def compose(self) -> Any:
        """The header; body entries are mounted after it."""
        yield self.header

    def on_mount(self) -> None:
        """Render the header and, unless collapsed, the body."""
        self.refresh_header()
        if not self.collapsed:
            self._fill()

    @property
    def accepts_entries(self) -> bool:
        """Whether new entries should be mounted into this block now."""
        return self.filled and not self.collapsed

    def _fill(self) -> None:
        views = [self._body.build(entry, in_block=True) for entry in self.item.items]
        if views:
            self.mount_all(views)
        self.filled = True

    def watch_collapsed(self, collapsed: bool) -> None:
        """Collapse to the header (removing the body's widgets) or expand (rebuilding them from the model)."""
        self.item.collapsed = collapsed
        if collapsed:
            self._body.forget(self.item.items)
            self.filled = False
            self.remove_children([child for child in self.children if child is not self.header])
        elif self.is_mounted:
            self._fill()  # not mounted yet: `on_mount` fills it
        self._sync_classes()
        self.refresh_header()
        self.post_message(self.Collapsed(self) if collapsed else self.Expanded(self))

    def _sync_classes(self) -> None:
        self.set_class(self.collapsed, "-collapsed")
        for status in STATUS_LOOK:
            self.set_class(self.item.status == status, f"-{status}")

    def header_content(self) -> Content:
        """The header line for the block's current state."""
        item = self.item
        icon, word, style = STATUS_LOOK.get(item.status, ("?", item.status, "$text-muted"))
        arrow = "▶" if self.collapsed else "▼"
        parts: list[tuple[str, str] | str] = [
            (arrow, "$text-muted"), " ", (f"{icon} {word}", style), "  ", (item.label, "bold"), "  ",
        ]
        facts = [item.model]
        if item.active:
            parts.append(item.description)
        else:
            parts.append((item.short_result or word, style))
            if item.code and item.status != "completed":
                parts += [" ", (f"[{item.code}]", style)]
            facts.insert(0, item.description)
        if item.status != "queued":
            facts.append(format_seconds(item.elapsed_seconds()))
        facts.append(f"{item.tool_calls} tool{'s' if item.tool_calls != 1 else ''}")
        facts.append(f"{compact_tokens(item.input_tokens + item.output_tokens)} tok")
        if item.context is not None and item.active:
            used, window = item.context
            facts.append(f"context {100 * used / window:.0f}%")
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
        self.collapsed = not self.collapsed

    def action_cancel_subagent(self) -> None:
        """Cancel this subagent (its siblings and parent go on)."""
        if self.item.active:
            self.post_message(self.CancelRequested(self.item.task_id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel is offered only while the subagent runs (or waits for a slot)."""
        if action == "cancel_subagent":
            return self.item.active
        return True

    def on_block_header_toggle(self, event: BlockHeader.Toggle) -> None:
        """Toggle on a click on the header."""
        event.stop()
        self.header.focus()
        self.action_toggle_block()
