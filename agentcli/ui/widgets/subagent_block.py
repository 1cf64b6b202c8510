"""SubagentBlock: one collapsible block per Task call, live while the subagent runs.

Built on Textual's `Collapsible` idioms: its look in `DEFAULT_CSS`, a focusable header that asks for a
toggle on click or Enter, a reactive `collapsed` whose watcher does the work, and `Expanded` / `Collapsed`
messages (both `Toggled`) posted on every change. Unlike `Collapsible`, a collapsed block mounts nothing
but its header: the body's widgets are built from the block's `BlockItem` (through the `BlockBody` it is
given, which records which widget shows which item) when it expands, and removed when it collapses, so
finished blocks cost one line each however long their transcripts.
"""

from __future__ import annotations

import time
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
from agentcli.status import MergeOutcome, TaskStatus
from agentcli.ui.model import BlockItem, Entry, format_seconds, result_line

STATUS_LOOK: dict[TaskStatus, tuple[str, str, str]] = {  # icon, word, style of each task status
    "queued": ("◌", "queued", "$text-muted"),
    "running": ("●", "running", "$accent"),
    "completed": ("✓", "done", "$success"),
    "failed": ("✗", "failed", "$error"),
    "timed_out": ("⏱", "timed out", "$warning"),
    "cancelled": ("⊘", "cancelled", "$warning"),
    "budget_exceeded": ("⊘", "over budget", "$warning"),
}

MERGE_STYLES: dict[MergeOutcome, str] = {"merged": "$success", "conflict": "bold $error", "kept": "$warning",
                                         "no_changes": "$text-muted"}

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_HZ = 8


def spinner_frame(now: float | None = None) -> str:
    """The spinner's frame at `now` (monotonic seconds): every running thing turns in step."""
    moment = time.monotonic() if now is None else now
    return SPINNER[int(moment * SPINNER_HZ) % len(SPINNER)]


class BlockBody(Protocol):
    """Builds the widgets of a block's entries and forgets them when they are removed (the router's views)."""

    def build(self, entry: Entry, *, in_block: bool) -> Widget:
        """A new widget showing `entry`."""
        ...

    def forget(self, entries: Iterable[Entry]) -> None:
        """`entries` (and everything nested in them) are no longer shown."""
        ...


def block_header(item: BlockItem, *, collapsed: bool, dense: bool = False) -> Content:
    """The header for the block's current state: one line, or two for a compact running block (its
    header and its latest activity); a finished block's line shows its description and first result line.

    A running block's figures (tools, tokens, so far estimated from what streams, time, context) come before
    its activity, which can be a quoted line of what it writes: the header never wraps, and the ellipsis
    that ends a line too long for the terminal only ever cuts the activity, never the figures.
    """
    icon, word, style = STATUS_LOOK.get(item.status, ("?", item.status, "$text-muted"))
    arrow = "▶" if collapsed else "▼"
    mark: tuple[str, str] = (spinner_frame(), "$accent") if item.status == "running" else (icon, style)
    parts: list[tuple[str, str] | str] = [
        (arrow, "$text-muted"), " ", mark, " ", (item.label, "bold"), "  ", item.description,
    ]
    if item.active:
        now = item.activity or (word if item.status == "queued" else "starting…")
        if item.current_text is not None and item.current_thinking is None:  # what it writes now, its last line
            tail = next((ln.strip() for ln in reversed(item.current_text.text[-400:].splitlines()) if ln.strip()), "")
            now = f"“{tail if len(tail) <= 100 else '…' + tail[-99:]}”" if tail else now
        figures = counters(item)
        if item.context is not None:
            used, window = item.context
            figures.append(f"context {100 * used / window:.0f}%")
        if dense or not collapsed:
            parts.append(("  · " + " · ".join(f for f in (*figures, now) if f), "$text-muted"))
        else:
            head = " · ".join(f for f in (item.model, *figures) if f)
            parts += [("  · " + head, "$text-muted"), "\n", ("  ⎿ ", "$text-muted"), (now, "$text-muted")]
        return Content.assemble(*parts)
    outcome = result_line(item.result) if item.status == "completed" else ""
    if item.cached_from:  # no subagent ran: no tools, tokens or time to show, only whose result it reused
        parts += [("  — ", "$text-muted"), outcome or "reused an earlier result"]
        return Content.assemble(*parts, (f"  · cached from {item.cached_from}", "$text-muted"))
    outcome = outcome or (item.short_result if item.status == "completed" else item.error or item.short_result)
    parts += [("  — ", "$text-muted"), (outcome or word, style if item.status != "completed" else "")]
    if item.code and item.status != "completed":
        parts += [" ", (f"[{item.code}]", style)]
    if item.merge is not None:  # before the figures: a narrow terminal's ellipsis cuts those first
        parts += [("  · ", "$text-muted"), (item.merge.summary(), MERGE_STYLES[item.merge.outcome])]
    parts.append(("  · " + " · ".join(f for f in (item.model, *counters(item)) if f), "$text-muted"))
    return Content.assemble(*parts)


def counters(item: BlockItem) -> list[str]:
    """`3 tools · 1.2k tok · 4.1s` (tokens marked `~` while part of them is an estimate of what streams)."""
    tokens = compact_tokens(item.tokens)
    facts = [
        f"{item.tool_calls} tool{'s' if item.tool_calls != 1 else ''}",
        f"{'~' if item.estimated_tokens else ''}{tokens} tok",
    ]
    if item.status != "queued":
        facts.append(format_seconds(item.elapsed_seconds()))
    return facts


class BlockHeader(Static, can_focus=True):
    """The block's one-line header; focus it to cancel or toggle the block from the keyboard."""

    ALLOW_SELECT = False
    DEFAULT_CSS = """
    BlockHeader {
        width: 1fr;
        height: auto;
        max-height: 2;
        padding: 0 1 0 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;

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


STYLED_STATUSES = ("completed", "failed", "timed_out", "budget_exceeded", "cancelled")  # the CSS below


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
        }
        &.-collapsed.-completed {
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
        Binding("ctrl+o", "toggle_block", "Expand/collapse", show=False),
        Binding("ctrl+e,right", "open_agent", "Open agent view"),
        Binding("ctrl+x", "cancel_subagent", "Cancel subagent"),  # never a text key: those go to the prompt
        Binding("ctrl+t", "message_subagent", "Message subagent"),
        Binding("ctrl+d", "show_changes", "Show changes"),
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

    class OpenRequested(Message):
        """The person asked to see this subagent's own transcript (`AgentScreen`)."""

        def __init__(self, block: BlockItem) -> None:
            super().__init__()
            self.block = block

    class CancelRequested(Message):
        """The person asked to cancel this subagent."""

        def __init__(self, task_id: str) -> None:
            super().__init__()
            self.task_id = task_id

    class MessageRequested(Message):
        """The person wants to send this running subagent a message (`/msg ID text`)."""

        def __init__(self, task_id: str) -> None:
            super().__init__()
            self.task_id = task_id

    def __init__(self, item: BlockItem, body: BlockBody) -> None:
        super().__init__(classes="subagent-block")
        self.item = item
        self._body = body
        self.header = BlockHeader(classes="block-header")
        self.filled = False  # body widgets mounted (the router mounts new entries directly from then on)
        self.dense = False  # one line even while running compact (many agents at once: the router sets it)
        self._rows = 0
        self._shown_status: tuple[str, bool] = ("", False)  # the status and whether a merge is known
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
        # One restyle for all of them: each class changed on its own restyles the block and everything in it,
        # and twenty blocks changing status at once held a frame back by tens of milliseconds.
        # Only the statuses the CSS draws differently get a class: queued → running changes none, so twenty
        # blocks starting at once restyle nothing.
        classes = {f"-{status}": self.item.status == status for status in STYLED_STATUSES}
        self.update_classes({"-collapsed": self.collapsed, **classes})

    def header_content(self) -> Content:
        """The header line(s) for the block's current state (`block_header`)."""
        return block_header(self.item, collapsed=self.collapsed, dense=self.dense)

    def refresh_header(self) -> None:
        """Re-render the header (and the footer's bindings when the status changed); a relayout only when
        its number of lines changed (the spinner turns several times a second)."""
        content = self.header_content()
        rows = content.plain.count("\n") + 1
        self.header.update(content, layout=rows != self._rows)
        self._rows = rows
        if self._shown_status != (self.item.status, self.item.merge is not None):
            self._shown_status = (self.item.status, self.item.merge is not None)
            self._sync_classes()
            if self.is_mounted and self.has_focus_within:  # the footer shows the focused block's keys only
                self.refresh_bindings()

    def action_toggle_block(self) -> None:
        """Expand or collapse."""
        self.collapsed = not self.collapsed

    def action_cancel_subagent(self) -> None:
        """Cancel this subagent (its siblings and parent go on)."""
        if self.item.active:
            self.post_message(self.CancelRequested(self.item.task_id))

    def action_message_subagent(self) -> None:
        """Start a message to this subagent in the prompt (it reads it at its next turn boundary)."""
        if self.item.active:
            self.post_message(self.MessageRequested(self.item.task_id))

    def action_open_agent(self) -> None:
        """Show this subagent's own transcript on a screen of its own (Esc comes back)."""
        self.post_message(self.OpenRequested(self.item))

    def action_show_changes(self) -> None:
        """An isolated task's merge back and the diff of what it changed, in a dialog (Esc closes it)."""
        if self.item.merge is not None:
            from agentcli.ui.widgets.changes_screen import ChangesScreen

            self.app.push_screen(ChangesScreen(self.item.label, self.item.merge))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel and message are offered only while the subagent runs (or waits for a slot); its changes once an
        isolated task was merged back (or kept)."""
        if action in ("cancel_subagent", "message_subagent"):
            return self.item.active
        if action == "show_changes":
            return self.item.merge is not None
        return True

    def on_block_header_toggle(self, event: BlockHeader.Toggle) -> None:
        """Toggle on a click on the header."""
        event.stop()
        self.header.focus()
        self.action_toggle_block()
