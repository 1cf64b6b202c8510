"""The TUI's tool-call lines: a compact line per call (its running clock, its output tail, its outcome), a
TodoWrite call as the turn's checklist instead."""

from __future__ import annotations

import time
from typing import Any

from agentcli.events import ToolCallFinishedEvent, ToolCallStartedEvent, ToolCallStreamingEvent, ToolOutputEvent
from agentcli.text import terminal_safe
from agentcli.ui.model import BlockItem, NoteItem, TodoListItem, ToolItem
from agentcli.ui.router_state import ACTIVITY_CHARS, RouterState, clip, first_line


class ToolRouting(RouterState):
    """The tool call events, where they happened (the main transcript or a subagent block)."""

    def on_tool_call_started(self, event: ToolCallStartedEvent, owner: BlockItem | None = None) -> None:
        """A compact tool call line (a Task call is replaced by its block when that appears)."""
        self.end_thinking(owner)
        transcript = self.transcript_of(owner)
        transcript.current_text = None
        name, summary = terminal_safe(event.name), terminal_safe(event.summary)
        verb = summary.split(" ", 1)[0].lower()
        what = summary.split(" ", 1)[1] if verb == name.lower() and " " in summary else summary  # not `Grep grep`
        transcript.activity = clip(f"{name} {what}".strip(), ACTIVITY_CHARS)
        if owner is not None:
            self.dirty_blocks[owner] = None
        key = (self.owner_key(owner), event.tool_call_id)
        if event.name == "TodoWrite":  # no tool line: the turn's checklist shows it, updated in place
            if transcript.todo is None:
                transcript.todo = TodoListItem()
                self.add_entry(owner, transcript.todo)
            self.todo_calls[key] = transcript.todo
            return
        item = ToolItem(event.tool_call_id, name, summary, started=time.monotonic())
        self.tool_items[key] = item
        self.running_tools[item] = None
        self.add_entry(owner, item)

    def on_tool_call_streaming(self, event: ToolCallStreamingEvent, owner: BlockItem | None = None) -> None:
        """The model is writing a tool call: the activity says so (the call runs once it is complete)."""
        self.end_thinking(owner)
        what = "a Task call (delegating)" if event.name == "Task" else f"a {terminal_safe(event.name)} call"
        size = f" ({event.chars:,} chars)" if event.chars else ""
        self.transcript_of(owner).activity = f"writing {what}…{size}"
        if owner is not None:
            self.dirty_blocks[owner] = None

    def on_tool_output(self, event: ToolOutputEvent, owner: BlockItem | None = None) -> None:
        """A running command's latest output: its line shows the last lines, its block the last one."""
        item = self.tool_items.get((self.owner_key(owner), event.tool_call_id))
        if item is None or item.status != "running":
            return
        item.tail = terminal_safe(event.tail)
        view = self.views.tool_view(item)
        if view is not None:
            view.refresh_state()
        if owner is not None:
            last = next((ln.strip() for ln in reversed(item.tail.splitlines()) if ln.strip()), "")
            if last:
                owner.activity = clip(f"{item.name} {item.summary} │ {last}", ACTIVITY_CHARS)
                self.dirty_blocks[owner] = None

    def on_tool_call_finished(self, event: ToolCallFinishedEvent, owner: BlockItem | None = None) -> None:
        """Status icon, duration, error code and output of a finished call; a Task call's short result goes
        to its block (or its line, when no subagent ran)."""
        key = (self.owner_key(owner), event.tool_call_id)
        todo = self.todo_calls.pop(key, None)
        if todo is not None:
            self._update_todo(owner, todo, event)
            return
        code = terminal_safe(event.code) if event.code and event.is_error else None
        short = terminal_safe(event.short_result) if event.short_result else ""
        block = self.task_blocks.get(key)
        if block is not None:
            block.short_result = short or block.short_result
            block.code = code or block.code
            self.refresh_header(block)
        item = self.tool_items.get(key)
        if item is None:
            return
        self.running_tools.pop(item, None)
        item.status = "error" if event.is_error else "ok"
        item.tail = ""
        item.output = terminal_safe(event.output)
        item.duration_ms = event.duration_ms
        item.code = code
        item.short_result = short
        item.diff = event.diff
        item.diagnostics = [_diagnostic_line(found) for found in event.diagnostics]
        view = self.views.tool_view(item)
        if view is not None:
            view.refresh_state()

    def _update_todo(self, owner: BlockItem | None, todo: TodoListItem, event: ToolCallFinishedEvent) -> None:
        """A TodoWrite call finished: its checklist shows the new list (a refused call says why, on one line)."""
        if event.is_error or event.todos is None:
            if event.is_error:
                failed = f"TodoWrite failed: {first_line(terminal_safe(event.output), 160)}"
                self.add_entry(owner, NoteItem(failed, "error"))
            return
        todo.todos = [(terminal_safe(t.get("content", "")), t.get("status", "pending")) for t in event.todos]
        self.transcript_of(owner).activity = clip(todo.summary(), ACTIVITY_CHARS)
        view = self.views.todo_view(todo)
        if view is not None:
            view.refresh_state()
        if owner is not None:
            self.dirty_blocks[owner] = None


def _diagnostic_line(found: dict[str, Any]) -> tuple[str, str]:
    """One finding of `ToolCallFinishedEvent.diagnostics` as (severity, `path:line:column message [rule]`)."""
    rule = " ".join(str(found[key]) for key in ("source", "code") if found.get(key))
    where = f"{found.get('path', '')}:{found.get('line', '?')}:{found.get('column', '?')}"
    text = f"{where} {' '.join(str(found.get('message', '')).split())}" + (f" [{rule}]" if rule else "")
    return terminal_safe(str(found.get("severity", "")))[:12], terminal_safe(text)
