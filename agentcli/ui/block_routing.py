"""The TUI's subagent blocks: a subagent's events reach the block of the task they belong to (a block nested in
its parent's), and the block's header follows its status, counters and end."""

from __future__ import annotations

import time

from agentcli.events import (
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentBlockUpdatedEvent,
    SubagentEvent,
    SubagentMergedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    UsageEvent,
    unwrap,
)
from agentcli.text import terminal_safe
from agentcli.ui.model import BlockItem, MergeItem
from agentcli.ui.router_state import RouterState


class BlockRouting(RouterState):
    """The subagent block events, and the dispatch of a subagent's events to its block."""

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

    def on_usage(self, event: UsageEvent, owner: BlockItem | None = None) -> None:
        """A subagent's request: its block learns how full that agent's own context is."""
        if owner is not None and event.context_window:
            owner.context = (event.context_tokens, event.context_window)
            self.dirty_blocks[owner] = None

    def on_subagent_block_added(self, event: SubagentBlockAddedEvent, owner: BlockItem | None = None) -> None:
        """A new block, in place of the Task call that created it (inside the parent block when nested)."""
        transcript = self.transcript_of(owner)
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
        key = (self.owner_key(owner), event.parent_tool_call_id)
        self.task_blocks[key] = block
        tool = self.tool_items.get(key)
        index = next((i for i, entry in enumerate(transcript.items) if entry is tool), None)
        if tool is None or index is None:
            self.add_entry(owner, block)
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
        self.dirty_blocks[block] = None

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
        self.end_thinking(block)
        self.end_text(block)
        self.views.drop_tail(block)  # collapsed: its whole text shows only if expanded again
        view = self.views.block_view(block)
        if view is not None:
            view.collapsed = True
            view.refresh_header()
        else:
            block.collapsed = True
        self.dirty_blocks.pop(block, None)

    def on_subagent_merged(self, event: SubagentMergedEvent, owner: BlockItem | None = None) -> None:
        """An isolated task's merge back: its block's line says how it ended; Ctrl+D on it shows the diff."""
        block = self.blocks.get(event.task_id)
        if block is None:
            return
        safe = terminal_safe
        block.merge = MergeItem(event.merge, safe(event.branch) if event.branch else None,
                                [safe(p) for p in event.files_merged], [safe(p) for p in event.files_conflicted],
                                list(event.diffs), safe(event.look))
        self.refresh_header(block)
