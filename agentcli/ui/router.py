"""Event → widget dispatch: the TUI's subscriber on the conversation's event bus.

`UIRouter` is a `MessageManager`: `on_subagent_block_added` / `on_subagent_block_updated` /
... receive the bus events. A subagent's events arrive wrapped in `SubagentEvent` (once per
level of nesting); `events.unwrap` takes them apart, and the innermost wrapper's `task_id` names
the block the event belongs to, so an event is handled with `owner` = that block (None for the
main agent). A nested block is announced by a `SubagentBlockAddedEvent` inside its parent's
wrapper: it takes the place of the parent's Task tool call (found by `parent_tool_call_id`) inside
the parent block. Tool calls are keyed by (owner task id, tool call id).

The router owns the item → widget mapping (`self.views`, an `EntryViews`): the model holds no widget
pointers, and a widget only reads the item it shows.

Text from models, tools, files and agent files is made terminal-safe here, as it enters the model
(`agentcli.text.terminal_safe`): no escape sequence reaches the terminal. Widgets never parse it as
markup (plain `Static`s, `Content` parts, and Markdown, which shows markup literally).

Thinking (`ThinkingDeltaEvent`) streams into its own dimmed item (`ThinkingItem`), batched like text; it
folds to one line as soon as the answer starts (a text delta), a tool call starts, or the turn ends.

Rendering is batched: new entries are queued, streamed text accumulates (in the views' pending text) and
block headers are only marked dirty; `flush()` — called by the app on a 20 Hz timer — mounts the queued
entries, appends each widget's accumulated text in one go and re-renders dirty headers. Collapsed blocks
keep their data in the model and have no body widgets to update.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from agentcli.events import (
    AgentMessageEvent,
    CompactionEvent,
    ErrorEvent,
    HookRunEvent,
    MessageAddedEvent,
    MessageManager,
    NoticeEvent,
    RetryEvent,
    RunFinishedEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentBlockUpdatedEvent,
    SubagentEvent,
    SubagentMergedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    ToolCallStreamingEvent,
    ToolOutputEvent,
    UsageEvent,
    unwrap,
)
from agentcli.figures import compaction_text
from agentcli.subagents.messaging.mailbox import PERSON
from agentcli.text import terminal_safe
from agentcli.ui.model import (
    BlockItem,
    Entry,
    MergeItem,
    NoteItem,
    TextItem,
    ThinkingItem,
    TodoListItem,
    ToolItem,
    Transcript,
)
from agentcli.ui.views import EntryViews
from agentcli.ui.widgets.message_list import MessageList, ThinkingView
from agentcli.ui.widgets.subagent_block import SPINNER_HZ

PROMPT_PREVIEW_CHARS = 300
ACTIVITY_CHARS = 120
TICKS_PER_SECOND = SPINNER_HZ
DENSE_MARGIN_ROWS = 8  # rows of the conversation view left for other lines when deciding on dense blocks
T = TypeVar("T", bound=TextItem)


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def first_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of `text`, clipped: errors are shown on one line."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


class UIRouter(MessageManager):
    """Keeps the transcript model current and the mounted widgets in step with it."""

    def __init__(self, view: MessageList) -> None:
        self.view = view
        self.views = EntryViews(view)
        self.main = Transcript()
        self.blocks: dict[str, BlockItem] = {}
        self._tools: dict[tuple[str, str], ToolItem] = {}
        self._task_blocks: dict[tuple[str, str], BlockItem] = {}  # (owner task id, Task call id) -> its block
        self._dirty_blocks: dict[BlockItem, None] = {}
        self._todo_calls: dict[tuple[str, str], TodoListItem] = {}  # (owner task id, TodoWrite call id) -> its list
        self._running_tools: dict[ToolItem, None] = {}  # running tool lines: their clocks tick
        self._ticks = 0
        self.dense = False  # many agents run at once: compact blocks take one line each
        self.turn_started: float | None = None  # monotonic time the main turn started (the app sets it)

    # --- helpers ----------------------------------------------------------------------------------

    def _transcript(self, owner: BlockItem | None) -> Transcript:
        return owner if owner is not None else self.main

    def _add(self, owner: BlockItem | None, entry: Entry) -> None:
        """Append an entry; its widget is built and mounted at the next flush, with the frame's others."""
        if owner is not None:
            self.views.show_whole_text(owner)
        self._transcript(owner).items.append(entry)
        self.views.queue(owner, entry)

    def _end_text(self, owner: BlockItem | None) -> None:
        """The owner's streaming text is complete (a block's shows its tail until the subagent goes on)."""
        transcript = self._transcript(owner)
        item, transcript.current_text = transcript.current_text, None
        if item is None:
            return
        item.done = True
        if owner is not None:
            self.views.end_block_text(owner, item)

    def _end_thinking(self, owner: BlockItem | None) -> None:
        """The owner's reasoning is over (the answer or a tool call starts, or the turn ends): fold it."""
        transcript = self._transcript(owner)
        item, transcript.current_thinking = transcript.current_thinking, None
        if item is None:
            return
        item.done = True
        self.views.drop_text(item)
        view = self.views.text_view(item)
        if isinstance(view, ThinkingView) and not view.busy:
            view.finish()  # a widget still to be mounted renders folded on mount

    @staticmethod
    def _key(owner: BlockItem | None) -> str:
        return owner.task_id if owner is not None else ""

    def add_note(self, text: str, kind: str = "info") -> NoteItem:
        """A line from the app in the main transcript: the person's prompt, a command's output, an error."""
        note = NoteItem(terminal_safe(text), kind)  # type: ignore[arg-type]
        self._end_thinking(None)
        self.main.current_text = None
        if kind == "user":  # a new turn: its TodoWrite list is a new checklist, under it
            self.main.todo = None
            self.main.activity = ""
        self._add(None, note)
        return note

    # --- the main agent's and every subagent's events ----------------------------------------------

    def on_subagent_event(self, event: SubagentEvent) -> None:
        """A subagent's event: it belongs to the block of the innermost wrapper's task id. Each block on the
        way learns its agent's label (`explore#2`) from the first event it relays."""
        wrappers, inner = unwrap(event)
        block: BlockItem | None = None
        chain: list[BlockItem] = []
        for wrapper, relayed in zip(wrappers, (*wrappers[1:], inner), strict=True):
            block = self.blocks.get(wrapper.task_id)
            if block is None:
                return
            chain.append(block)
            if not block.agent:
                block.agent = terminal_safe(relayed.agent)
        if isinstance(inner, TextDeltaEvent | ThinkingDeltaEvent):  # tokens while they stream, estimated
            for each in chain:
                each.streamed[inner.session_id] = each.streamed.get(inner.session_id, 0) + len(inner.text)
        elif isinstance(inner, UsageEvent):  # counted now: the block's update carries it
            for each in chain:
                each.streamed.pop(inner.session_id, None)
        handler = getattr(self, f"on_{inner.kind}", None)
        if handler is not None:
            handler(inner, block)

    def on_thinking_delta(self, event: ThinkingDeltaEvent, owner: BlockItem | None = None) -> None:
        """Streamed reasoning goes to the owner's current thinking item (created on the first delta), dimmed."""
        transcript = self._transcript(owner)
        if transcript.current_thinking is None and transcript.current_text is not None:
            self._end_text(owner)  # an answer after this reasoning is a new item, below it
        transcript.current_thinking = self._stream(owner, transcript.current_thinking, ThinkingItem, event.text)
        transcript.activity = "thinking…"

    def on_text_delta(self, event: TextDeltaEvent, owner: BlockItem | None = None) -> None:
        """Streamed text goes to the owner's current text item (created on the first delta)."""
        if self._transcript(owner).current_thinking is not None:
            self._end_thinking(owner)  # the answer starts: the reasoning folds
        transcript = self._transcript(owner)
        transcript.current_text = self._stream(owner, transcript.current_text, TextItem, event.text)
        transcript.activity = "writing…"

    def _stream(self, owner: BlockItem | None, item: T | None, make: Callable[[], T], delta: str) -> T:
        """Add a streamed delta (made terminal-safe) to `item`, or to a new item of `make` when there is none."""
        text = terminal_safe(delta)
        if item is None:
            item = make()
            item.add(text)
            self._add(owner, item)
        else:
            item.add(text)
            self.views.add_text(item, text)
        return item

    def on_message_added(self, event: MessageAddedEvent, owner: BlockItem | None = None) -> None:
        """An assistant message ends the streaming item; a subagent's first message is its prompt."""
        message = event.message
        if message.role == "assistant":
            self._end_thinking(owner)
            self._end_text(owner)
        elif owner is not None and event.seq == 0:
            prompt = terminal_safe(message.text().strip())
            if prompt:
                clipped = prompt if len(prompt) <= PROMPT_PREVIEW_CHARS else prompt[:PROMPT_PREVIEW_CHARS] + "…"
                self._add(owner, NoteItem(f"▸ {clipped}", "user"))

    def on_run_finished(self, event: RunFinishedEvent, owner: BlockItem | None = None) -> None:
        """The turn ended (also by an error or a stop mid-reasoning): its reasoning folds; a subagent's block
        keeps its answer (its collapsed header shows the first line)."""
        self._end_thinking(owner)
        self._transcript(owner).activity = ""
        if owner is not None:
            owner.result = terminal_safe(event.result)

    def on_retry(self, event: RetryEvent, owner: BlockItem | None = None) -> None:
        """A retried request voids the text its failed attempt streamed: that item goes away."""
        transcript = self._transcript(owner)
        voided = [transcript.current_text, transcript.current_thinking]
        transcript.current_text = transcript.current_thinking = None
        for item in voided:
            if item is None:
                continue
            item.reset()
            transcript.items = [entry for entry in transcript.items if entry is not item]
            self.views.remove(item)
        if owner is None:
            self.add_note(f"retrying (attempt {event.attempt}) after: {first_line(event.error, 160)}", "info")

    def on_tool_call_started(self, event: ToolCallStartedEvent, owner: BlockItem | None = None) -> None:
        """A compact tool call line (a Task call is replaced by its block when that appears)."""
        self._end_thinking(owner)
        transcript = self._transcript(owner)
        transcript.current_text = None
        name, summary = terminal_safe(event.name), terminal_safe(event.summary)
        verb = summary.split(" ", 1)[0].lower()
        what = summary.split(" ", 1)[1] if verb == name.lower() and " " in summary else summary  # not `Grep grep`
        transcript.activity = _clip(f"{name} {what}".strip(), ACTIVITY_CHARS)
        if owner is not None:
            self._dirty_blocks[owner] = None
        key = (self._key(owner), event.tool_call_id)
        if event.name == "TodoWrite":  # no tool line: the turn's checklist shows it, updated in place
            if transcript.todo is None:
                transcript.todo = TodoListItem()
                self._add(owner, transcript.todo)
            self._todo_calls[key] = transcript.todo
            return
        item = ToolItem(event.tool_call_id, name, summary, started=time.monotonic())
        self._tools[key] = item
        self._running_tools[item] = None
        self._add(owner, item)

    def on_tool_call_streaming(self, event: ToolCallStreamingEvent, owner: BlockItem | None = None) -> None:
        """The model is writing a tool call: the activity says so (the call runs once it is complete)."""
        self._end_thinking(owner)
        what = "a Task call (delegating)" if event.name == "Task" else f"a {terminal_safe(event.name)} call"
        size = f" ({event.chars:,} chars)" if event.chars else ""
        self._transcript(owner).activity = f"writing {what}…{size}"
        if owner is not None:
            self._dirty_blocks[owner] = None

    def on_tool_output(self, event: ToolOutputEvent, owner: BlockItem | None = None) -> None:
        """A running command's latest output: its line shows the last lines, its block the last one."""
        item = self._tools.get((self._key(owner), event.tool_call_id))
        if item is None or item.status != "running":
            return
        item.tail = terminal_safe(event.tail)
        view = self.views.tool_view(item)
        if view is not None:
            view.refresh_state()
        if owner is not None:
            last = next((ln.strip() for ln in reversed(item.tail.splitlines()) if ln.strip()), "")
            if last:
                owner.activity = _clip(f"{item.name} {item.summary} │ {last}", ACTIVITY_CHARS)
                self._dirty_blocks[owner] = None

    def on_tool_call_finished(self, event: ToolCallFinishedEvent, owner: BlockItem | None = None) -> None:
        """Status icon, duration, error code and output of a finished call; a Task call's short result goes
        to its block (or its line, when no subagent ran)."""
        key = (self._key(owner), event.tool_call_id)
        todo = self._todo_calls.pop(key, None)
        if todo is not None:
            self._update_todo(owner, todo, event)
            return
        code = terminal_safe(event.code) if event.code and event.is_error else None
        short = terminal_safe(event.short_result) if event.short_result else ""
        block = self._task_blocks.get(key)
        if block is not None:
            block.short_result = short or block.short_result
            block.code = code or block.code
            self._refresh_header(block)
        item = self._tools.get(key)
        if item is None:
            return
        self._running_tools.pop(item, None)
        item.status = "error" if event.is_error else "ok"
        item.tail = ""
        item.output = terminal_safe(event.output)
        item.duration_ms = event.duration_ms
        item.code = code
        item.short_result = short
        item.diff = event.diff
        view = self.views.tool_view(item)
        if view is not None:
            view.refresh_state()

    def _update_todo(self, owner: BlockItem | None, todo: TodoListItem, event: ToolCallFinishedEvent) -> None:
        """A TodoWrite call finished: its checklist shows the new list (a refused call says why, on one line)."""
        if event.is_error or event.todos is None:
            if event.is_error:
                self._add(owner, NoteItem(f"TodoWrite failed: {first_line(terminal_safe(event.output), 160)}", "error"))
            return
        todo.todos = [(terminal_safe(t.get("content", "")), t.get("status", "pending")) for t in event.todos]
        self._transcript(owner).activity = _clip(todo.summary(), ACTIVITY_CHARS)
        view = self.views.todo_view(todo)
        if view is not None:
            view.refresh_state()
        if owner is not None:
            self._dirty_blocks[owner] = None

    def on_error(self, event: ErrorEvent, owner: BlockItem | None = None) -> None:
        """An error, on one line, where it happened."""
        self._add(owner, NoteItem(terminal_safe(f"error: {first_line(event.message)}"), "error"))

    def on_notice(self, event: NoticeEvent, owner: BlockItem | None = None) -> None:
        """A warning that does not stop the run (e.g. a deprecated model), on one line, where it happened."""
        self._add(owner, NoteItem(f"{event.level}: {first_line(event.message)}", "info"))

    def on_hook_run(self, event: HookRunEvent, owner: BlockItem | None = None) -> None:
        """A hook ran: a line where it happened when it blocked, failed or timed out (a quiet success shows none)."""
        if event.outcome == "ok":
            return
        on = f" [{event.tool_name}]" if event.tool_name else ""
        said = f": {first_line(event.reason, 160)}" if event.reason else ""
        line = terminal_safe(f"hook {event.hook_event}{on} {event.outcome}{said}")
        self._add(owner, NoteItem(line, "info" if event.outcome == "blocked" else "error"))

    def on_usage(self, event: UsageEvent, owner: BlockItem | None = None) -> None:
        """A subagent's request: its block learns how full that agent's own context is."""
        if owner is not None and event.context_window:
            owner.context = (event.context_tokens, event.context_window)
            self._dirty_blocks[owner] = None

    def on_agent_message(self, event: AgentMessageEvent, owner: BlockItem | None = None) -> None:
        """A message to an agent: `you: …` / `main: …` in the recipient's block (or the main transcript); a message
        that continued a finished task is a line where its sender works."""
        text = first_line(event.text, 300)
        if event.delivery == "continued":
            line, kind = f"→ {event.recipient_task_id} (it had finished: continued): {text}", "info"
        elif event.sender == PERSON:
            line, kind = f"you: {text}", "user"
        else:
            line, kind = f"{event.sender}: {text}", "info"
        self._add(owner, NoteItem(terminal_safe(line), kind))  # type: ignore[arg-type]

    def on_compaction(self, event: CompactionEvent, owner: BlockItem | None = None) -> None:
        """A context was compacted (the main agent's or a subagent's): one line, where it happened."""
        line = compaction_text(event.mode, event.tokens_before, event.tokens_after, event.window)
        self._add(owner, NoteItem(line, "info"))

    # --- subagent blocks ---------------------------------------------------------------------------

    def on_subagent_block_added(self, event: SubagentBlockAddedEvent, owner: BlockItem | None = None) -> None:
        """A new block, in place of the Task call that created it (inside the parent block when nested)."""
        transcript = self._transcript(owner)
        block = BlockItem(
            task_id=event.task_id,
            parent_tool_call_id=event.parent_tool_call_id,
            subagent_type=terminal_safe(event.subagent_type),
            description=terminal_safe(event.description),
            model=terminal_safe(event.model),
            depth=event.depth,
            parent=owner,
            status=event.status,
        )
        self.blocks[event.task_id] = block
        key = (self._key(owner), event.parent_tool_call_id)
        self._task_blocks[key] = block
        tool = self._tools.get(key)
        index = next((i for i, entry in enumerate(transcript.items) if entry is tool), None)
        if tool is None or index is None:
            self._add(owner, block)
            return
        transcript.items[index] = block
        self.views.replace(owner, tool, block)

    def on_subagent_block_updated(self, event: SubagentBlockUpdatedEvent, owner: BlockItem | None = None) -> None:
        """Status and counters; the header is re-rendered at the next flush."""
        block = self.blocks.get(event.task_id)
        if block is None or (block.short_result and not block.active):
            return
        block.status = event.status
        block.tool_calls = event.tool_calls
        block.input_tokens = event.input_tokens
        block.output_tokens = event.output_tokens
        block.elapsed_ms = event.elapsed_ms
        if event.status == "running" and block.started is None:
            block.started = time.monotonic() - event.elapsed_ms / 1000
        self._dirty_blocks[block] = None

    def on_subagent_block_finished(self, event: SubagentBlockFinishedEvent, owner: BlockItem | None = None) -> None:
        """Final status; the block collapses to its short result."""
        block = self.blocks.get(event.task_id)
        if block is None:
            return
        block.status = event.status
        block.short_result = terminal_safe(event.short_result)
        block.error = terminal_safe(event.error) if event.error else event.error
        block.cached_from = terminal_safe(event.cached_from) if event.cached_from else None
        block.elapsed_ms = event.elapsed_ms
        block.streamed.clear()
        block.activity = ""
        if event.input_tokens is not None and event.output_tokens is not None:  # a stopped one's spend too
            block.input_tokens, block.output_tokens = event.input_tokens, event.output_tokens
        if event.tool_calls is not None:
            block.tool_calls = event.tool_calls
        self._end_thinking(block)
        self._end_text(block)
        self.views.drop_tail(block)  # collapsed: its whole text shows only if expanded again
        view = self.views.block_view(block)
        if view is not None:
            view.collapsed = True
            view.refresh_header()
        else:
            block.collapsed = True
        self._dirty_blocks.pop(block, None)

    def on_subagent_merged(self, event: SubagentMergedEvent, owner: BlockItem | None = None) -> None:
        """An isolated task's merge back: its block's line says how it ended; Ctrl+D on it shows the diff."""
        block = self.blocks.get(event.task_id)
        if block is None:
            return
        safe = terminal_safe
        block.merge = MergeItem(event.merge, safe(event.branch) if event.branch else None,
                                [safe(p) for p in event.files_merged], [safe(p) for p in event.files_conflicted],
                                list(event.diffs), safe(event.look))
        self._refresh_header(block)

    def _refresh_header(self, block: BlockItem) -> None:
        view = self.views.block_view(block)
        if view is not None:
            view.dense = self.dense
            view.refresh_header()
        detail = self.views.detail
        if detail is not None and detail.block is block:
            detail.refresh_header()

    # --- rendering ---------------------------------------------------------------------------------

    def flush(self, text: bool = True, mounts: int | None = None) -> None:
        """Mount the frame's new entries (one mount per container; at most `mounts`, the rest later), push
        accumulated text to its widgets (one append per widget; not while `text` is False) and re-render dirty
        headers."""
        self.views.flush(text, mounts)
        self._set_density()
        if self._dirty_blocks:
            blocks = list(self._dirty_blocks)
            self._dirty_blocks.clear()
            for block in blocks:
                self._refresh_header(block)

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
                self._dirty_blocks[block] = None
    @property
    def settled(self) -> bool:
        """Whether everything received so far has been handed to the widgets (nothing waits for a flush)."""
        return self.views.settled and not self._dirty_blocks

    def tick(self) -> None:
        """`TICKS_PER_SECOND` times a second: running blocks' spinners, activity and clocks; once a second the
        clocks of running tool lines. (Streamed text does not re-render a header: the next tick shows it.)"""
        self._ticks += 1
        for block in self.blocks.values():
            if block.status == "running":
                self._refresh_header(block)
        if self._ticks % TICKS_PER_SECOND:
            return
        for item in self._running_tools:
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
        self._end_thinking(None)
        self.main.current_text = None
        for entry in items:
            self._add(None, entry)
        self.blocks.update(blocks)

    def reset(self) -> None:
        """Forget everything (`/clear`) and empty the view."""
        self.main = Transcript()
        self.blocks.clear()
        self._tools.clear()
        self._task_blocks.clear()
        self._dirty_blocks.clear()
        self._todo_calls.clear()
        self._running_tools.clear()
        self.views.clear()
        self.view.remove_children()
