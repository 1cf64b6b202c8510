"""A stored session's transcript as the TUI's model (`ui/model.py`), for a resumed session's screen.

The main agent's messages become what the router would have made of them live: the person's prompts as
notes, text and (folded) reasoning, one line per tool call with its stored status and output, and each
Task call the block of its task, collapsed, with its record's figures and its subagent's own transcript
inside (nested tasks nest). Everything read from the store is model, tool or file text: terminal-safe
here, as the router makes live text.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentcli.frontend import ATTACHMENT_MARK, attached_paths
from agentcli.llm import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentcli.status import short_result
from agentcli.text import terminal_safe
from agentcli.ui.model import BlockItem, Entry, NoteItem, TextItem, ThinkingItem, ToolItem

if TYPE_CHECKING:
    from agentcli.store import Store, TaskRecord, ToolCallRecord

PROMPT_PREVIEW_CHARS = 300  # as the router shows a subagent's prompt
MAX_TASKS = 100_000


@dataclass
class History:
    """The main transcript's entries and every block in it (nested ones too), by task id."""

    items: list[Entry] = field(default_factory=list)
    blocks: dict[str, BlockItem] = field(default_factory=dict)


def _prompt_text(message: Message) -> str | None:
    """The person's (or parent's) prompt in a user message; None for tool results. Notices that rode
    along (`<system-notice>` blocks after the prompt) are not shown."""
    if any(isinstance(b, ToolResultBlock) for b in message.content):
        return None
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    return texts[0].strip() if texts and texts[0].strip() else None


def _segments(messages: list[Message], parts: int) -> list[list[Message]]:
    """A child session that several tasks ran (resumed ones) split at its prompts, one part per task;
    when the prompts do not match the tasks, every task shows the whole history."""
    if parts <= 1:
        return [messages]
    starts = [i for i, m in enumerate(messages) if m.role == "user" and _prompt_text(m) is not None]
    if len(starts) != parts or starts[0] != 0:
        return [messages] * parts
    bounds = [*starts, len(messages)]
    return [messages[a:b] for a, b in itertools.pairwise(bounds)]


class _Builder:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.history = History()

    def session(self, session_id: str, owner: BlockItem | None) -> list[Entry]:
        """The entries of one session's whole history."""
        return self.messages(session_id, self.store.get_messages(session_id), owner)

    def messages(self, session_id: str, messages: list[Message], owner: BlockItem | None) -> list[Entry]:
        """The entries of `messages` of one session (with its tool calls and tasks)."""
        calls = {c.id: c for c in self.store.get_tool_calls(session_id)}
        tasks: dict[str, TaskRecord] = {}
        runs: dict[str, list[TaskRecord]] = defaultdict(list)  # child session -> the tasks that ran it, oldest first
        for task in reversed(self.store.list_tasks(parent_session_id=session_id, limit=MAX_TASKS)):
            if task.parent_tool_call_id:
                tasks.setdefault(task.parent_tool_call_id, task)
            if task.child_session_id:
                runs[task.child_session_id].append(task)
        entries: list[Entry] = []
        for message in messages:
            if message.role == "user":
                prompt = _prompt_text(message)
                if prompt is not None:
                    entries.append(self._prompt(prompt, owner))
                    texts = [b.text for b in message.content if isinstance(b, TextBlock)][1:]
                    if owner is None and (paths := attached_paths(texts)):
                        lines = "\n".join(f"{ATTACHMENT_MARK} {terminal_safe(p)} (attached)" for p in paths)
                        entries.append(NoteItem(lines, "attachment"))
                continue
            for block in message.content:
                if isinstance(block, ThinkingBlock) and block.thinking.strip():
                    entries.append(ThinkingItem([terminal_safe(block.thinking)], done=True))
                elif isinstance(block, TextBlock) and block.text.strip():
                    entries.append(TextItem([terminal_safe(block.text)], done=True))
                elif isinstance(block, ToolUseBlock):
                    record = tasks.get(block.id)
                    call = calls.get(block.id)
                    if record is None:
                        entries.append(self._tool(block, call))
                    else:
                        entries.append(self._block(record, call, owner, runs.get(record.child_session_id or "", [])))
        return entries

    @staticmethod
    def _prompt(text: str, owner: BlockItem | None) -> NoteItem:
        text = terminal_safe(text)
        if owner is None:
            return NoteItem(text, "user")
        clipped = text if len(text) <= PROMPT_PREVIEW_CHARS else text[:PROMPT_PREVIEW_CHARS] + "…"
        return NoteItem(f"▸ {clipped}", "user")

    @staticmethod
    def _tool(block: ToolUseBlock, call: ToolCallRecord | None) -> ToolItem:
        item = ToolItem(block.id, terminal_safe(block.name), terminal_safe(call.summary if call else ""))
        if call is None:
            item.status = "error"
            item.output = "(no result was stored)"
            return item
        item.status = "ok" if call.status == "ok" else "error"  # running / cancelled: it never finished
        item.output = terminal_safe(call.output or ("(cancelled)" if call.status != "ok" else ""))
        item.duration_ms = call.duration_ms
        item.code = terminal_safe(call.code) if call.code and call.is_error else None
        item.short_result = terminal_safe(call.short_result) if call.short_result else ""
        return item

    def _block(
        self, record: TaskRecord, call: ToolCallRecord | None, owner: BlockItem | None, runs: list[TaskRecord]
    ) -> BlockItem:
        stored_short = call.short_result if call is not None and call.short_result else None
        block = BlockItem(
            task_id=record.task_id,
            parent_tool_call_id=record.parent_tool_call_id or "",
            subagent_type=terminal_safe(record.subagent_type),
            description=terminal_safe(record.shown_description()),
            model=terminal_safe(record.model_used or ""),
            depth=record.depth,
            parent=owner,
            status=record.status,
            tool_calls=record.tool_calls,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            elapsed_ms=record.time_ms or 0.0,
            short_result=terminal_safe(stored_short or short_result(record.status, record.subagent_type, record.error)),
            error=terminal_safe(record.error) if record.error else None,
            code=terminal_safe(call.code) if call is not None and call.code and call.is_error else None,
            collapsed=True,
            result=terminal_safe(record.result or ""),
            cached_from=terminal_safe(record.cached_from) if record.cached_from else None,
        )
        self.history.blocks[record.task_id] = block
        child = record.child_session_id
        if child:
            row = self.store.get_session(child)
            block.agent = terminal_safe(row.agent) if row is not None and row.agent != "main" else ""
            block.items = self._child_part(child, record, block, runs or [record])
        return block

    def _child_part(self, child: str, record: TaskRecord, block: BlockItem, runs: list[TaskRecord]) -> list[Entry]:
        """The part of the child session's history this task ran (a resumed task's session holds several); a
        fork's starts after its parent's messages."""
        parts = _segments(self.store.get_messages(child)[runs[0].inherited_messages:], len(runs))
        index = next((i for i, r in enumerate(runs) if r.task_id == record.task_id), len(runs) - 1)
        return self.messages(child, parts[min(index, len(parts) - 1)], block)


def load_history(store: Store, session_id: str) -> History:
    """The transcript of a stored session (its whole history, not only what its model context still holds)."""
    builder = _Builder(store)
    builder.history.items = builder.session(session_id, None)
    return builder.history


