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

from agentcli.events import (
    AgentMessageEvent,
    BackgroundFinishedEvent,
    BackgroundStartedEvent,
    CompactionEvent,
    ErrorEvent,
    HookRunEvent,
    MessageAddedEvent,
    NoticeEvent,
    RetryEvent,
    RunFinishedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
)
from agentcli.figures import compaction_text
from agentcli.subagents import PERSON
from agentcli.text import terminal_safe
from agentcli.ui.block_routing import BlockRouting
from agentcli.ui.model import BlockItem, NoteItem, TextItem, ThinkingItem
from agentcli.ui.router_state import first_line
from agentcli.ui.tool_routing import ToolRouting

PROMPT_PREVIEW_CHARS = 300


class UIRouter(ToolRouting, BlockRouting):
    """Keeps the transcript model current and the mounted widgets in step with it: the event handlers of
    `ToolRouting` (tool calls) and `BlockRouting` (subagent blocks), and those of text, messages and notes."""

    def on_thinking_delta(self, event: ThinkingDeltaEvent, owner: BlockItem | None = None) -> None:
        """Streamed reasoning goes to the owner's current thinking item (created on the first delta), dimmed."""
        transcript = self.transcript_of(owner)
        if transcript.current_thinking is None and transcript.current_text is not None:
            self.end_text(owner)  # an answer after this reasoning is a new item, below it
        transcript.current_thinking = self.stream(owner, transcript.current_thinking, ThinkingItem, event.text)
        transcript.activity = "thinking…"

    def on_text_delta(self, event: TextDeltaEvent, owner: BlockItem | None = None) -> None:
        """Streamed text goes to the owner's current text item (created on the first delta)."""
        if self.transcript_of(owner).current_thinking is not None:
            self.end_thinking(owner)  # the answer starts: the reasoning folds
        transcript = self.transcript_of(owner)
        transcript.current_text = self.stream(owner, transcript.current_text, TextItem, event.text)
        transcript.activity = "writing…"

    def on_message_added(self, event: MessageAddedEvent, owner: BlockItem | None = None) -> None:
        """An assistant message ends the streaming item; a subagent's first message is its prompt."""
        message = event.message
        if message.role == "assistant":
            self.end_thinking(owner)
            self.end_text(owner)
        elif owner is not None and event.seq == 0:
            prompt = terminal_safe(message.text().strip())
            if prompt:
                clipped = prompt if len(prompt) <= PROMPT_PREVIEW_CHARS else prompt[:PROMPT_PREVIEW_CHARS] + "…"
                self.add_entry(owner, NoteItem(f"▸ {clipped}", "user"))

    def on_run_finished(self, event: RunFinishedEvent, owner: BlockItem | None = None) -> None:
        """The turn ended (also by an error or a stop mid-reasoning): its reasoning folds; a subagent's block
        keeps its answer (its collapsed header shows the first line)."""
        self.end_thinking(owner)
        self.transcript_of(owner).activity = ""
        if owner is not None:
            owner.result = terminal_safe(event.result)

    def on_retry(self, event: RetryEvent, owner: BlockItem | None = None) -> None:
        """A retried request voids the text its failed attempt streamed: that item goes away."""
        transcript = self.transcript_of(owner)
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

    def on_error(self, event: ErrorEvent, owner: BlockItem | None = None) -> None:
        """An error, on one line, where it happened."""
        self.add_entry(owner, NoteItem(terminal_safe(f"error: {first_line(event.message)}"), "error"))

    def on_notice(self, event: NoticeEvent, owner: BlockItem | None = None) -> None:
        """A warning that does not stop the run (e.g. a deprecated model), on one line, where it happened."""
        self.add_entry(owner, NoteItem(f"{event.level}: {first_line(event.message)}", "info"))

    def on_hook_run(self, event: HookRunEvent, owner: BlockItem | None = None) -> None:
        """A hook ran: a line where it happened when it blocked, failed or timed out (a quiet success shows none)."""
        if event.outcome == "ok":
            return
        on = f" [{event.tool_name}]" if event.tool_name else ""
        said = f": {first_line(event.reason, 160)}" if event.reason else ""
        line = terminal_safe(f"hook {event.hook_event}{on} {event.outcome}{said}")
        self.add_entry(owner, NoteItem(line, "info" if event.outcome == "blocked" else "error"))

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
        self.add_entry(owner, NoteItem(terminal_safe(line), kind))  # type: ignore[arg-type]

    def on_compaction(self, event: CompactionEvent, owner: BlockItem | None = None) -> None:
        """A context was compacted (the main agent's or a subagent's): one line, where it happened."""
        line = compaction_text(event.mode, event.tokens_before, event.tokens_after, event.window)
        self.add_entry(owner, NoteItem(line, "info"))

    def on_background_started(self, event: BackgroundStartedEvent, owner: BlockItem | None = None) -> None:
        """A background command started (any agent's): the status bar counts it."""
        self.background[event.task_id] = None

    def on_background_finished(self, event: BackgroundFinishedEvent, owner: BlockItem | None = None) -> None:
        """A background command exited or was stopped: one line where its agent works (the agent itself is told at
        its next turn)."""
        self.background.pop(event.task_id, None)
        code = event.exit_code
        how = ("stopped" if event.status == "stopped" else f"killed by signal {-code}" if code is not None and code < 0
               else f"exited with code {code}")
        line = f"Background command {event.task_id} ({first_line(event.command, 80)}) {how} after " \
               f"{event.elapsed_seconds:.0f}s"
        ok = event.status == "stopped" or code == 0
        self.add_entry(owner, NoteItem(terminal_safe(line), "info" if ok else "error"))
