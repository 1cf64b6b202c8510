"""Which widget shows which transcript entry: the router's one item → widget mapping, and its batching.

The model (`agentcli.ui.model`) knows nothing of widgets and widgets only read their item; this map is
the one place that links the two. It builds an entry's widget (Markdown, but a block's text streams as
plain lines until it is complete), forgets it when it is removed (a block collapses, a retry voids its
text, `/clear`), holds the text a widget has not shown yet, and mounts the frame's new entries at the next
flush (a block's into its own screen while that is open). An entry not yet shown is built when it is
mounted; an entry a block already rebuilt (it expanded meanwhile) is not mounted twice.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.widget import Widget

from agentcli.ui.model import BlockItem, Entry, NoteItem, TextItem, ThinkingItem, TodoListItem, ToolItem
from agentcli.ui.widgets.agent_screen import AgentScreen
from agentcli.ui.widgets.message_list import (
    AssistantText,
    MessageList,
    NoteLine,
    StreamText,
    TextView,
    ThinkingView,
)
from agentcli.ui.widgets.subagent_block import SubagentBlock
from agentcli.ui.widgets.todo_list import TodoChecklist
from agentcli.ui.widgets.tool_call import ToolCallView


class EntryViews:
    """The widgets that show the main transcript's and every open block's entries."""

    def __init__(self, main: MessageList) -> None:
        self.main = main
        self._views: dict[Entry, Widget] = {}
        self._pending: dict[TextItem, list[str]] = {}  # streamed text its widget has not shown yet
        self._mounts: dict[BlockItem | None, list[Entry]] = {}  # entries to mount at the next flush, per owner
        self._tails: dict[BlockItem, TextItem] = {}  # a block's complete text, still shown as its tail
        self.detail: AgentScreen | None = None  # a subagent's own screen, where its block's entries go while open

    def get(self, entry: Entry) -> Widget | None:
        """The widget showing `entry`, if one does."""
        return self._views.get(entry)

    def text_view(self, item: TextItem) -> TextView | None:
        """The widget showing a text or thinking item, if one does."""
        view = self._views.get(item)
        return view if isinstance(view, TextView) else None

    def block_view(self, block: BlockItem) -> SubagentBlock | None:
        """The widget showing a block, if one does."""
        view = self._views.get(block)
        return view if isinstance(view, SubagentBlock) else None

    def tool_view(self, tool: ToolItem) -> ToolCallView | None:
        """The widget showing a tool call, if one does."""
        view = self._views.get(tool)
        return view if isinstance(view, ToolCallView) else None

    def todo_view(self, item: TodoListItem) -> TodoChecklist | None:
        """The widget showing a checklist, if one does."""
        view = self._views.get(item)
        return view if isinstance(view, TodoChecklist) else None

    def attach(self, screen: AgentScreen) -> None:
        """A subagent's screen opened: its block's new entries are mounted there."""
        self.detail = screen

    def detach(self, screen: AgentScreen) -> None:
        """That screen closed."""
        if self.detail is screen:
            self.detail = None

    # --- building and forgetting (also what a SubagentBlock uses for its body) -------------------------

    def build(self, entry: Entry, *, in_block: bool, tail: bool = False) -> Widget:
        """A new widget for `entry`, recorded as the one that shows it (it starts with the whole text; a
        complete block text with `tail` shows its last lines until the subagent goes on)."""
        view: Widget
        if isinstance(entry, ThinkingItem):  # dimmed, apart from the answer, in the main view and in blocks alike
            view = ThinkingView(entry)
        elif isinstance(entry, TextItem):  # a block's text streams as plain lines; complete, it is Markdown
            live = not entry.done or tail
            view = StreamText(entry, live=live) if in_block and live else AssistantText(entry)
        elif isinstance(entry, TodoListItem):
            view = TodoChecklist(entry)
        elif isinstance(entry, ToolItem):
            view = ToolCallView(entry)
        elif isinstance(entry, BlockItem):
            view = SubagentBlock(entry, self)
        else:
            assert isinstance(entry, NoteItem)
            view = NoteLine(entry)
        self._views[entry] = view
        if isinstance(entry, TextItem):
            self._pending.pop(entry, None)
        return view

    def forget(self, entries: Iterable[Entry]) -> None:
        """`entries` and everything nested in them are no longer shown (their widgets are being removed)."""
        for entry in entries:
            self._views.pop(entry, None)
            if isinstance(entry, TextItem):
                self._pending.pop(entry, None)
            elif isinstance(entry, BlockItem):
                self._mounts.pop(entry, None)
                self.forget(entry.items)

    def remove(self, entry: Entry) -> None:
        """Take `entry` off the screen (a retry voided it)."""
        view = self._views.get(entry)
        self.forget([entry])
        for queued in self._mounts.values():
            if entry in queued:
                queued.remove(entry)
        if view is not None:
            view.remove()

    def clear(self) -> None:
        """Forget everything (`/clear`)."""
        self._views.clear()
        self._pending.clear()
        self._mounts.clear()
        self._tails.clear()

    # --- the frame's changes -----------------------------------------------------------------------------

    def container(self, owner: BlockItem | None) -> Widget | None:
        """Where entries of `owner` are mounted now (None: a collapsed or not yet mounted block)."""
        if owner is None:
            return self.main
        if self.detail is not None and self.detail.block is owner:
            return self.detail.body if self.detail.filled else None
        view = self.block_view(owner)
        return view if view is not None and view.accepts_entries else None

    def queue(self, owner: BlockItem | None, entry: Entry) -> None:
        """Mount `entry` at the next flush, if its owner shows entries then."""
        if self.container(owner) is not None:
            self._mounts.setdefault(owner, []).append(entry)

    def replace(self, owner: BlockItem | None, old: Entry, new: Entry) -> None:
        """Show `new` where `old` is (a Task call gives way to the block it created)."""
        queued = self._mounts.get(owner, [])
        if old in queued:  # not mounted yet: take its place in the queue
            queued[queued.index(old)] = new
            return
        view = self._views.pop(old, None)
        if view is None:
            return
        parent = view.parent
        if isinstance(parent, Widget):
            parent.mount(self.build(new, in_block=owner is not None), before=view)
        view.remove()

    def add_text(self, item: TextItem, delta: str) -> None:
        """`delta` was appended to `item`: its widget, if any, shows it at the next flush."""
        if item in self._views:
            self._pending.setdefault(item, []).append(delta)

    def drop_text(self, item: TextItem) -> None:
        """Whatever `item`'s widget was still to append is moot (the widget renders from the item)."""
        self._pending.pop(item, None)

    def end_block_text(self, owner: BlockItem, item: TextItem) -> None:
        """A block's text is complete: its widget shows the final tail now and the whole text once the
        subagent goes on (`show_whole_text`). After a subagent's last message its block collapses at once,
        and laying out five whole texts just before that stalled the screen for 80 ms (bench/tui_stream.py)."""
        self._pending.pop(item, None)
        view = self.text_view(item)
        if isinstance(view, StreamText) and not view.busy:
            view.push("")  # the final tail (a widget still to be mounted renders it on mount)
        self._tails[owner] = item

    def show_whole_text(self, owner: BlockItem) -> None:
        """The block goes on after a complete text: show all of that text now."""
        item = self._tails.pop(owner, None)
        view = self.text_view(item) if item is not None else None
        if item is not None and isinstance(view, StreamText):
            self.as_markdown(item, view)

    def as_markdown(self, item: TextItem, view: StreamText) -> None:
        """Show a block's complete text as Markdown in place of its plain streamed lines."""
        parent = view.parent
        if not view.is_mounted or not isinstance(parent, Widget):
            view.finish()
            return
        markdown = AssistantText(item)
        self._views[item] = markdown
        parent.mount(markdown, before=view)
        view.remove()

    def drop_tail(self, owner: BlockItem) -> None:
        """The block collapsed for good: its last text shows whole only if it is expanded again."""
        self._tails.pop(owner, None)

    def pending_text(self, item: TextItem) -> str:
        """The text `item`'s widget has not shown yet."""
        return "".join(self._pending.get(item, ()))

    @property
    def settled(self) -> bool:
        """Whether every entry and all streamed text is handed to the widgets."""
        return not self._mounts and not self._pending

    def flush(self, text: bool = True, mounts: int | None = None) -> None:
        """Mount the queued entries (one mount per container; at most `mounts` of them, the rest at the next
        flushes, in order) and, with `text`, push accumulated text (one append per widget)."""
        if self._mounts:
            queued, self._mounts = self._mounts, {}
            budget = sum(map(len, queued.values())) if mounts is None else mounts
            for owner, entries in queued.items():
                container = self.container(owner)  # a block collapsed meanwhile rebuilds them when expanded
                fresh = [e for e in entries if e not in self._views]  # one it rebuilt meanwhile is shown already
                if container is None or not fresh:
                    continue
                now, later = fresh[: max(budget, 0)], fresh[max(budget, 0) :]
                if later:
                    self._mounts[owner] = later  # the next flush goes on, in order
                if now:
                    budget -= len(now)
                    tail = self._tails.get(owner) if owner is not None else None
                    container.mount_all([self.build(e, in_block=owner is not None, tail=e is tail) for e in now])
        if not text:
            return
        for item in list(self._pending):
            view = self.text_view(item)
            if view is not None and not view.busy:
                view.push("".join(self._pending.pop(item)))
