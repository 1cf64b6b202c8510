"""What the TUI's event router keeps and does whatever the event: the transcript model of the main agent and of
every subagent block, the entries it adds (their widgets mounted at the next flush), the streaming item it
ends, and the batched rendering (`flush`, `tick`) with the activity line. The event handlers build on it:
`ui/tool_routing` (tool calls), `ui/block_routing` (subagent blocks), `ui/router` (the rest, and `UIRouter`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from agentcli.events import MessageManager
from agentcli.text import terminal_safe
from agentcli.ui.model import BlockItem, Entry, NoteItem, TextItem, TodoListItem, ToolItem, Transcript
from agentcli.ui.views import EntryViews
from agentcli.ui.widgets.message_list import MessageList, ThinkingView
from agentcli.ui.widgets.subagent_block import SPINNER_HZ

ACTIVITY_CHARS = 120
TICKS_PER_SECOND = SPINNER_HZ
DENSE_MARGIN_ROWS = 8  # rows of the conversation view left for other lines when deciding on dense blocks
T = TypeVar("T", bound=TextItem)


def clip(text: str, limit: int) -> str:
    """`text` on one line (runs of white space as one space), at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def first_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of `text`, clipped: errors are shown on one line."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


class RouterState(MessageManager):
    """Keeps the transcript model current and the mounted widgets in step with it."""

    def __init__(self, view: MessageList) -> None:
        self.view = view
        self.views = EntryViews(view)
        self.main = Transcript()
        self.blocks: dict[str, BlockItem] = {}
        self.tool_items: dict[tuple[str, str], ToolItem] = {}
        self.task_blocks: dict[tuple[str, str], BlockItem] = {}  # (owner task id, Task call id) -> its block
        self.dirty_blocks: dict[BlockItem, None] = {}
        self.todo_calls: dict[tuple[str, str], TodoListItem] = {}  # (owner task id, TodoWrite call id) -> its list
        self.running_tools: dict[ToolItem, None] = {}  # running tool lines: their clocks tick
        self._ticks = 0
        self.dense = False  # many agents run at once: compact blocks take one line each
        self.turn_started: float | None = None  # monotonic time the main turn started (the app sets it)
        self.background: dict[str, None] = {}  # ids of the background commands running (kept across /new)

    def transcript_of(self, owner: BlockItem | None) -> Transcript:
        """The main transcript, or the block's own."""
        return owner if owner is not None else self.main

    def add_entry(self, owner: BlockItem | None, entry: Entry) -> None:
        """Append an entry; its widget is built and mounted at the next flush, with the frame's others."""
        if owner is not None:
            self.views.show_whole_text(owner)
        self.transcript_of(owner).items.append(entry)
        self.views.queue(owner, entry)

    def end_text(self, owner: BlockItem | None) -> None:
        """The owner's streaming text is complete (a block's shows its tail until the subagent goes on)."""
        transcript = self.transcript_of(owner)
        item, transcript.current_text = transcript.current_text, None
        if item is None:
            return
        item.done = True
        if owner is not None:
            self.views.end_block_text(owner, item)

    def end_thinking(self, owner: BlockItem | None) -> None:
        """The owner's reasoning is over (the answer or a tool call starts, or the turn ends): fold it."""
        transcript = self.transcript_of(owner)
        item, transcript.current_thinking = transcript.current_thinking, None
        if item is None:
            return
        item.done = True
        self.views.drop_text(item)
        view = self.views.text_view(item)
        if isinstance(view, ThinkingView) and not view.busy:
            view.finish()  # a widget still to be mounted renders folded on mount

    @staticmethod
    def owner_key(owner: BlockItem | None) -> str:
        """The key of an owner's tool calls: its task id (the main agent: "")."""
        return owner.task_id if owner is not None else ""

    def add_note(self, text: str, kind: str = "info") -> NoteItem:
        """A line from the app in the main transcript: the person's prompt, a command's output, an error."""
        note = NoteItem(terminal_safe(text), kind)  # type: ignore[arg-type]
        self.end_thinking(None)
        self.main.current_text = None
        if kind == "user":  # a new turn: its TodoWrite list is a new checklist, under it
            self.main.todo = None
            self.main.activity = ""
        self.add_entry(None, note)
        return note

    def stream(self, owner: BlockItem | None, item: T | None, make: Callable[[], T], delta: str) -> T:
        """Add a streamed delta (made terminal-safe) to `item`, or to a new item of `make` when there is none."""
        text = terminal_safe(delta)
        if item is None:
            item = make()
            item.add(text)
            self.add_entry(owner, item)
        else:
            item.add(text)
            self.views.add_text(item, text)
        return item

    def refresh_header(self, block: BlockItem) -> None:
        """Re-render a block's header, and the detail view's when it shows that block."""
        view = self.views.block_view(block)
        if view is not None:
            view.dense = self.dense
            view.refresh_header()
        detail = self.views.detail
        if detail is not None and detail.block is block:
            detail.refresh_header()

    def flush(self, text: bool = True, mounts: int | None = None) -> None:
        """Mount the frame's new entries (one mount per container; at most `mounts`, the rest later), push
        accumulated text to its widgets (one append per widget; not while `text` is False) and re-render dirty
        headers."""
        self.views.flush(text, mounts)
        self._set_density()
        if self.dirty_blocks:
            blocks = list(self.dirty_blocks)
            self.dirty_blocks.clear()
            for block in blocks:
                self.refresh_header(block)

    def _set_density(self) -> None:
        """Compact running blocks take two lines (header, activity) while they fit the view, one line when
        there are too many for that (twenty agents at once on a 45-row terminal)."""
        compact = sum(1 for b in self.blocks.values() if b.active and b.collapsed)
        dense = compact * 2 + DENSE_MARGIN_ROWS > max(self.view.size.height, 1) if compact else False
        if dense == self.dense:
            return
        self.dense = dense
        for block in self.blocks.values():
            view = self.views.block_view(block)
            if view is not None and view.dense != dense:
                view.dense = dense
                self.dirty_blocks[block] = None

    @property
    def settled(self) -> bool:
        """Whether everything received so far has been handed to the widgets (nothing waits for a flush)."""
        return self.views.settled and not self.dirty_blocks

    def tick(self) -> None:
        """`TICKS_PER_SECOND` times a second: running blocks' spinners, activity and clocks; once a second the
        clocks of running tool lines. (Streamed text does not re-render a header: the next tick shows it.)"""
        self._ticks += 1
        for block in self.blocks.values():
            if block.status == "running":
                self.refresh_header(block)
        if self._ticks % TICKS_PER_SECOND:
            return
        for item in self.running_tools:
            view = self.views.tool_view(item)
            if view is not None:
                view.refresh_state()

    def activity(self) -> str:
        """What the main turn does now, for the line above the prompt."""
        running, queued = self.counts()
        agents = f"{running} subagent{'s' if running != 1 else ''} running" if running else ""
        if queued:
            agents += f"{', ' if agents else ''}{queued} queued"
        now = self.main.activity or "waiting for the model…"
        if agents and now.startswith("Task "):
            return f"waiting for subagents · {agents}"
        return f"{now} · {agents}" if agents else now

    def counts(self) -> tuple[int, int]:
        """(running, queued) subagents."""
        running = sum(1 for b in self.blocks.values() if b.status == "running")
        queued = sum(1 for b in self.blocks.values() if b.status == "queued")
        return running, queued

    def restore(self, items: list[Entry], blocks: dict[str, BlockItem]) -> None:
        """Show a resumed session's stored transcript (`ui/history.py`): finished blocks collapsed, their
        transcripts kept in the model for when they are expanded."""
        self.end_thinking(None)
        self.main.current_text = None
        for entry in items:
            self.add_entry(None, entry)
        self.blocks.update(blocks)

    def reset(self) -> None:
        """Forget everything (`/clear`) and empty the view."""
        self.main = Transcript()
        self.blocks.clear()
        self.tool_items.clear()
        self.task_blocks.clear()
        self.dirty_blocks.clear()
        self.todo_calls.clear()
        self.running_tools.clear()
        self.views.clear()
        self.view.remove_children()
