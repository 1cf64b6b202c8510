"""One subagent's own transcript on a screen of its own, live; Esc (or Left) goes back to the conversation.

While the screen is open the block's entries are shown here and not in the conversation, where the block
stays compact: the router's one entry → widget map (`EntryViews`) is told to mount the block's new entries
in this screen's body (`DetailHost.attach`), and forgets them when the screen closes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Protocol

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from agentcli.ui.model import BlockItem, Entry
from agentcli.ui.widgets.subagent_block import block_header


class DetailHost(Protocol):
    """What the screen needs of the router's views: build and forget widgets, and be where a block's entries go."""

    def build(self, entry: Entry, *, in_block: bool) -> Widget:
        """A new widget showing `entry`."""
        ...

    def forget(self, entries: Iterable[Entry]) -> None:
        """`entries` (and everything nested in them) are no longer shown."""
        ...

    def attach(self, screen: AgentScreen) -> None:
        """New entries of `screen.block` go to `screen.body` from now on."""
        ...

    def detach(self, screen: AgentScreen) -> None:
        """The screen closes: its block's entries go back to the conversation's block."""
        ...


class AgentScreen(Screen[None]):
    """A header line (the block's, live) and the subagent's whole transcript, following new output."""

    DEFAULT_CSS = """
    AgentScreen {
        layout: vertical;
    }
    AgentScreen > #agent-title {
        width: 1fr;
        height: 1;
        padding: 0 1;
        background: $panel;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    AgentScreen > #agent-body {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,left", "back", "Back to the conversation"),
    ]

    def __init__(self, block: BlockItem, host: DetailHost) -> None:
        super().__init__()
        self.block = block
        self.host = host
        self.title_line = Static(id="agent-title", markup=False)
        self.body = VerticalScroll(id="agent-body")
        self.filled = False

    def compose(self) -> Any:
        """Title, transcript, keys."""
        yield self.title_line
        yield self.body
        yield Footer()

    def on_mount(self) -> None:
        """Show the transcript so far; from now on the router mounts new entries here."""
        views = [self.host.build(entry, in_block=True) for entry in self.block.items]
        if views:
            self.body.mount_all(views)
        self.filled = True
        self.host.attach(self)
        self.body.anchor()
        self.refresh_header()
        self.body.focus()

    def on_unmount(self) -> None:
        """Hand the block's entries back to the conversation."""
        self.host.detach(self)
        self.host.forget(self.block.items)

    def refresh_header(self) -> None:
        """Re-render the title from the block (its status, activity and counters)."""
        self.title_line.update(block_header(self.block, collapsed=False, dense=True), layout=False)

    def action_back(self) -> None:
        """Back to the conversation."""
        self.dismiss(None)
