"""UIRouter on synthetic events: nested routing by task id, batching, collapsed blocks mount nothing."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.pilot import Pilot

from agentcli.events import (
    Event,
    MessageAddedEvent,
    RetryEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentBlockUpdatedEvent,
    SubagentEvent,
    TextDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    UsageEvent,
    unwrap,
)
from agentcli.llm.base import Message
from agentcli.ui.model import BlockItem, TextItem, ToolItem
from agentcli.ui.router import UIRouter
from agentcli.ui.widgets.message_list import AssistantText, MessageList, StreamText
from agentcli.ui.widgets.subagent_block import SubagentBlock
from agentcli.ui.widgets.tool_call import ToolCallView


class RouterApp(App[None]):
    """Just the conversation view and a router; it notes the blocks' Expanded / Collapsed messages."""

    def __init__(self) -> None:
        super().__init__()
        self.view = MessageList()
        self.router = UIRouter(self.view)
        self.toggles: list[tuple[str, str]] = []

    def compose(self) -> Any:
        yield self.view

    def on_subagent_block_expanded(self, message: SubagentBlock.Expanded) -> None:
        self.toggles.append(("expanded", message.control.item.task_id))

    def on_subagent_block_collapsed(self, message: SubagentBlock.Collapsed) -> None:
        self.toggles.append(("collapsed", message.block.item.task_id))


def wrap(event: Event, *task_ids: str) -> Event:
    """Wrap `event` as it reaches the main bus from the subagent `task_ids[-1]` (outermost first)."""
    for task_id in reversed(task_ids):
        event = SubagentEvent(session_id="s", agent="main", task_id=task_id, parent_tool_call_id="",
                              subagent_type="explore", event=event)
    return event


def task_started(call_id: str, agent: str = "main") -> ToolCallStartedEvent:
    return ToolCallStartedEvent(session_id="s", agent=agent, tool_call_id=call_id, name="Task",
                                args={}, summary="work")


def added(task_id: str, call_id: str, depth: int = 1, agent: str = "main") -> SubagentBlockAddedEvent:
    return SubagentBlockAddedEvent(session_id="s", agent=agent, task_id=task_id, parent_tool_call_id=call_id,
                                   subagent_type="explore", description=f"job {task_id}", model="light",
                                   depth=depth)


def delta(text: str, agent: str = "main") -> TextDeltaEvent:
    return TextDeltaEvent(session_id="s", agent=agent, text=text)


def add_open(r: UIRouter, event: Event) -> None:
    """Deliver a block-added event and expand that block (its body shows, as after Enter or ctrl+o)."""
    r(event)
    _, inner = unwrap(event)
    assert isinstance(inner, SubagentBlockAddedEvent)
    r.blocks[inner.task_id].collapsed = False


async def settle(pilot: Pilot[None], router: UIRouter) -> None:
    """What the app's frame timer does: flush, and let the mounts happen."""
    for _ in range(3):
        router.flush()
        await pilot.pause()


async def test_nested_events_find_their_block_and_text_is_batched() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        r(wrap(SubagentBlockUpdatedEvent(session_id="s", task_id="A", status="running"), ))
        r(wrap(task_started("c2", "general#1"), "A"))
        add_open(r, wrap(added("B", "c2", depth=2, agent="general#1"), "A"))
        await settle(pilot, r)
        a, b = r.blocks["A"], r.blocks["B"]
        assert a.agent == "general#1" and b.parent is a and a.items == [b]  # B replaced the Task call c2
        assert [type(e) for e in r.main.items] == [BlockItem]  # A replaced c1
        for piece in ("Hello ", "from ", "**B**"):
            r(wrap(delta(piece, "explore#1"), "A", "B"))
        assert b.agent == "explore#1"
        (text,) = [e for e in b.items if isinstance(e, TextItem)]
        assert text.text == "Hello from **B**" and not [e for e in a.items if isinstance(e, TextItem)]
        await settle(pilot, r)
        text_view, a_view, b_view = r.views.get(text), r.views.get(a), r.views.get(b)
        assert isinstance(text_view, StreamText) and text_view.parent is b_view and b_view is not None
        assert b_view.parent is a_view
        assert str(text_view.render()) == "Hello from **B**"  # plain text inside a block, its tail while live
        # Later deltas wait for the next flush, then reach the widget in one update.
        r(wrap(delta(" and more", "explore#1"), "A", "B"))
        assert str(text_view.render()) == "Hello from **B**" and r.views.pending_text(text) == " and more"
        await settle(pilot, r)
        assert str(text_view.render()) == "Hello from **B** and more" and r.views.pending_text(text) == ""
        # The main agent's text is Markdown, appended in batches.
        r(delta("# Title\n\nmain "))
        await settle(pilot, r)
        r(delta("text"))
        r(delta(" streams"))
        (main_text,) = [e for e in r.main.items if isinstance(e, TextItem)]
        main_view = r.views.get(main_text)
        assert isinstance(main_view, AssistantText) and r.views.pending_text(main_text) == "text streams"
        await settle(pilot, r)
        assert main_view.source == "# Title\n\nmain text streams"
        # Tool calls are keyed by owner: the same id in two agents never collides.
        r(ToolCallStartedEvent(session_id="s", tool_call_id="t1", name="Read", args={}, summary="main.py"))
        r(wrap(ToolCallStartedEvent(session_id="s", tool_call_id="t1", name="Grep", args={}, summary="x"), "A", "B"))
        r(wrap(ToolCallFinishedEvent(session_id="s", tool_call_id="t1", name="Grep", is_error=True, output="boom",
                                     duration_ms=3), "A", "B"))
        main_tool = r.main.items[-1]
        b_tool = b.items[-1]
        assert isinstance(main_tool, ToolItem) and isinstance(b_tool, ToolItem)
        assert (main_tool.status, b_tool.status, b_tool.output) == ("running", "error", "boom")


async def test_a_collapsed_block_keeps_data_but_mounts_no_body() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        await settle(pilot, r)
        a = r.blocks["A"]
        view = r.views.block_view(a)
        assert view is not None
        view.collapsed = True
        await settle(pilot, r)
        for i in range(50):
            r(wrap(delta(f"chunk {i} ", "explore#1"), "A"))
            r(wrap(ToolCallStartedEvent(session_id="s", tool_call_id=f"t{i}", name="Read", args={},
                                        summary=f"f{i}.py"), "A"))
        await settle(pilot, r)
        assert list(view.children) == [view.header]
        assert not app.query(StreamText) and not app.query(ToolCallView)
        assert len(a.items) == 100 and all(r.views.get(e) is None for e in a.items)
        view.collapsed = False  # expanding builds the body from the kept data
        await settle(pilot, r)
        assert len(view.query(ToolCallView)) == 50 and len(view.query(StreamText)) == 50
        r(wrap(delta("pending while collapsing", "explore#1"), "A"))
        r(wrap(SubagentBlockFinishedEvent(session_id="s", task_id="A", status="completed",
                                          short_result="Task completed by explore", elapsed_ms=1500), ))
        await settle(pilot, r)
        assert a.collapsed and view.collapsed and list(view.children) == [view.header]
        assert "Task completed by explore" in str(view.header.render()) and "1.5s" in str(view.header.render())


async def test_usage_retry_and_subagent_prompt() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        r(UsageEvent(session_id="s", provider="anthropic", model="m", input_tokens=10, output_tokens=5,
                     cache_read_tokens=2, cost_usd=0.5))
        r(wrap(UsageEvent(session_id="s", provider="anthropic", model="m", input_tokens=7, output_tokens=3), "A"))
        # Usage is the conversation's ledger's to count (tests/ui/test_subagent_block.py): no transcript entry.
        assert len(r.main.items) == 1 and r.blocks["A"].items == []
        r(wrap(MessageAddedEvent(session_id="s", seq=0, message=Message.user("look for the auth code")), "A"))
        r(delta("partial answ"))
        r(RetryEvent(session_id="s", attempt=1, delay_seconds=0.1, error="overloaded"))
        r(delta("fresh answer"))
        await settle(pilot, r)
        a = r.blocks["A"]
        assert getattr(a.items[0], "text", "") == "▸ look for the auth code"
        texts = [e for e in r.main.items if isinstance(e, TextItem)]
        assert [t.text for t in texts] == ["fresh answer"]
        assert any("retrying (attempt 1)" in getattr(e, "text", "") for e in r.main.items)
        assert r.counts() == (0, 1)
        assert isinstance(app.query_one(SubagentBlock).item, BlockItem)


async def test_collapse_and_expand_before_a_flush_mounts_each_entry_once() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        await settle(pilot, r)
        view = r.views.block_view(r.blocks["A"])
        assert view is not None
        r(wrap(ToolCallStartedEvent(session_id="s", tool_call_id="t1", name="Read", args={}, summary="x.py"), "A"))
        view.collapsed = True  # a fast double click, between two frames
        view.collapsed = False
        await settle(pilot, r)
        assert len(view.query(ToolCallView)) == 1


async def test_a_complete_block_text_shows_whole_only_once_the_subagent_goes_on() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        await settle(pilot, r)
        a = r.blocks["A"]
        lines = [f"line {i}" for i in range(10)]
        r(wrap(delta("\n".join(lines), "explore#1"), "A"))
        await settle(pilot, r)
        (text,) = [e for e in a.items if isinstance(e, TextItem)]
        view = r.views.get(text)
        assert isinstance(view, StreamText)
        r(wrap(MessageAddedEvent(session_id="s", seq=1, message=Message(role="assistant", content=[])), "A"))
        assert text.done and view.live and str(view.render()).splitlines() == lines[-4:]  # still its tail
        r(wrap(ToolCallStartedEvent(session_id="s", tool_call_id="t1", name="Read", args={}, summary="x.py"), "A"))
        whole = r.views.get(text)  # the subagent went on: all of it, now as Markdown (never raw source)
        assert isinstance(whole, AssistantText)
        await settle(pilot, r)
        assert whole.source == "\n".join(lines) and whole.parent is r.views.get(a) and not view.is_attached


async def test_a_notice_is_one_line_where_it_happened() -> None:
    from agentcli.events import NoticeEvent

    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        r(NoticeEvent(session_id="s", message="model claude-sonnet-4-5 (models.main.model) is deprecated\nby X"))
        r(wrap(NoticeEvent(session_id="s", message="the reply was cut at the output token limit"), "A"))
        await settle(pilot, r)
        assert any(getattr(e, "text", "") == "warning: model claude-sonnet-4-5 (models.main.model) is deprecated"
                   for e in r.main.items)
        assert any("cut at the output token limit" in getattr(e, "text", "") for e in r.blocks["A"].items)


async def test_a_hook_that_blocks_or_fails_is_a_line_where_it_happened() -> None:
    from agentcli.events import HookRunEvent

    def run(outcome: str, reason: str = "") -> HookRunEvent:
        return HookRunEvent(session_id="s", hook_event="PreToolUse", command="guard.sh", source="x",
                            tool_name="Bash", outcome=outcome, reason=reason)  # type: ignore[arg-type]

    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        r(run("ok"))
        r(run("blocked", "no shell\x1b[31m here\nsecond line"))
        r(wrap(run("timeout", "timed out"), "A"))
        await settle(pilot, r)
        notes = [getattr(e, "text", "") for e in r.main.items if "hook" in getattr(e, "text", "")]
        assert notes == ["hook PreToolUse [Bash] blocked: no shell\u241b[31m here"]  # the escape shown, not obeyed
        assert any(getattr(e, "text", "") == "hook PreToolUse [Bash] timeout: timed out" for e in r.blocks["A"].items)


async def test_a_running_block_shows_how_full_its_own_context_is() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        r(SubagentBlockUpdatedEvent(session_id="s", task_id="A", status="running"))
        r(UsageEvent(session_id="s", provider="anthropic", model="m", input_tokens=10, output_tokens=5,
                     context_tokens=150_000, context_window=200_000))  # the main agent's: not the block's
        r(wrap(UsageEvent(session_id="s", provider="anthropic", model="m", input_tokens=7, output_tokens=3,
                          context_tokens=84_000, context_window=200_000), "A"))
        await settle(pilot, r)
        view = r.views.block_view(r.blocks["A"])
        assert view is not None and r.blocks["A"].context == (84_000, 200_000)
        assert "context 42%" in view.header_content().plain


async def test_streamed_tokens_reach_the_header_at_the_tick_without_a_relayout() -> None:
    """Deltas only add to the block's estimate (no header render per delta: twenty agents stream at once); the
    spinner's tick re-renders the header with the figure, in place (its two lines stay two: no layout)."""
    app = RouterApp()
    async with app.run_test(size=(80, 24)) as pilot:
        r = app.router
        r(task_started("c1"))
        r(added("A", "c1"))  # compact: header and activity line
        r(SubagentBlockUpdatedEvent(session_id="s", task_id="A", status="running"))
        await settle(pilot, r)
        view = r.views.block_view(r.blocks["A"])
        assert view is not None and view.collapsed
        renders: list[bool] = []
        real_update = view.header.update

        def update(content: Any = "", *, layout: bool = True) -> None:
            renders.append(layout)
            real_update(content, layout=layout)

        view.header.update = update  # type: ignore[method-assign]
        r.tick()
        assert renders == [False]
        for _ in range(200):
            r(wrap(delta("x" * 40, agent="explore#1"), "A"))  # 8000 characters, about 2000 tokens
        r.flush()
        assert renders == [False]  # not re-rendered by the deltas
        r.tick()
        assert renders == [False, False]
        head, activity = view.header_content().plain.splitlines()
        assert "job A  · light · 0 tools · ~2.0k tok · " in head and activity.startswith("  ⎿ “")
        r(wrap(UsageEvent(session_id="s", provider="anthropic", model="m", input_tokens=900, output_tokens=2100),
               "A"))
        r(SubagentBlockUpdatedEvent(session_id="s", task_id="A", status="running", input_tokens=900,
                                    output_tokens=2100))
        r.flush()  # counted: the update marks the header dirty, the flush renders it
        assert renders == [False, False, False]
        assert "job A  · light · 0 tools · 3.0k tok · " in view.header_content().plain.splitlines()[0]


async def test_a_block_answered_from_an_earlier_result_says_whose() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        r(added("B", "c1"))
        r(SubagentBlockFinishedEvent(session_id="s", task_id="B", status="completed", tool_calls=0, input_tokens=0,
                                     output_tokens=0, short_result="Task completed by explore (cached from tsk_a)",
                                     cached_from="tsk_a"))
        await settle(pilot, r)
        header = str(r.views.block_view(r.blocks["B"]).header.render())  # type: ignore[union-attr]
        assert r.blocks["B"].cached_from == "tsk_a"
        assert "reused an earlier result" in header and "cached from tsk_a" in header and "tok" not in header
