"""Thinking streams live and dimmed, apart from the answer, batched like text, and folds when the answer starts."""

from __future__ import annotations

from agentcli.events import (
    MessageAddedEvent,
    RetryEvent,
    RunFinishedEvent,
    SubagentBlockFinishedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallStartedEvent,
)
from agentcli.llm.base import Message, TextBlock, ThinkingBlock
from agentcli.ui.model import TextItem, ThinkingItem
from agentcli.ui.widgets.message_list import AssistantText, StreamText, ThinkingView
from tests.ui.test_router import RouterApp, add_open, added, settle, task_started, wrap


def think(text: str, agent: str = "main") -> ThinkingDeltaEvent:
    return ThinkingDeltaEvent(session_id="s", agent=agent, text=text)


def say(text: str, agent: str = "main") -> TextDeltaEvent:
    return TextDeltaEvent(session_id="s", agent=agent, text=text)


async def test_main_thinking_streams_dimmed_in_batches_and_folds_when_the_answer_starts() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(think("Let me look "))
        await settle(pilot, r)
        (item,) = r.main.items
        view = r.views.get(item)
        assert isinstance(item, ThinkingItem) and isinstance(view, ThinkingView)
        assert view.has_class("-live") and view.styles.text_style.italic
        assert str(view.render()).splitlines() == ["∴ thinking…", "Let me look"]
        # Later deltas only accumulate until the next flush, then reach the widget in one update.
        r(think("at the config "))
        r(think("loader."))
        assert r.views.pending_text(item) == "at the config loader."
        assert str(view.render()).splitlines()[-1] == "Let me look"
        await settle(pilot, r)
        assert r.views.pending_text(item) == ""
        assert str(view.render()).splitlines()[-1] == "Let me look at the config loader."
        # The answer starts: the reasoning folds to one line and the answer is its own Markdown item below it.
        r(say("It is in `config.py`."))
        await settle(pilot, r)
        assert item.done and not view.has_class("-live")
        assert str(view.render()) == "∴ thought (7 words) · click to show"
        thinking, answer = r.main.items
        answer_view = r.views.get(answer)
        assert thinking is item and isinstance(answer, TextItem) and isinstance(answer_view, AssistantText)
        assert "Let me look" not in answer_view.source and answer_view.source == "It is in `config.py`."
        # A click unfolds the whole reasoning, another folds it again.
        await pilot.click(ThinkingView)
        assert str(view.render()).splitlines()[1] == "Let me look at the config loader."
        await pilot.click(ThinkingView)
        assert str(view.render()) == "∴ thought (7 words) · click to show"


async def test_thinking_folds_when_a_tool_call_starts_or_the_turn_ends() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(think("I need the file."))
        r(ToolCallStartedEvent(session_id="s", tool_call_id="t1", name="Read", args={}, summary="a.py"))
        r(think("Now I know."))
        await settle(pilot, r)
        first, _tool, second = r.main.items
        assert isinstance(first, ThinkingItem) and first.done
        assert isinstance(second, ThinkingItem) and not second.done and second.text == "Now I know."
        message = Message(role="assistant", content=[ThinkingBlock(thinking="Now I know.", signature="x"),
                                                     TextBlock(text="done")])
        r(MessageAddedEvent(session_id="s", seq=3, message=message))
        await settle(pilot, r)
        second_view = r.views.get(second)
        assert second.done and isinstance(second_view, ThinkingView) and not second_view.has_class("-live")
        # A turn that ends mid-reasoning (an error, a stop) folds it too.
        r(think("half a thought"))
        r(RunFinishedEvent(session_id="s", status="cancelled", result="", turns=1))
        await settle(pilot, r)
        third = r.main.items[-1]
        assert isinstance(third, ThinkingItem) and third.done and r.main.current_thinking is None


async def test_a_retry_voids_the_reasoning_of_the_failed_attempt() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(think("first attempt's reasoning"))
        await settle(pilot, r)
        r(RetryEvent(session_id="s", attempt=1, delay_seconds=0.1, error="overloaded"))
        await settle(pilot, r)
        assert not [e for e in r.main.items if isinstance(e, ThinkingItem)] and not app.query(ThinkingView)


async def test_subagent_thinking_streams_in_its_block_apart_from_its_text() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        await settle(pilot, r)
        a = r.blocks["A"]
        for piece in ("Which ", "file ", "holds it?"):
            r(wrap(think(piece, "explore#1"), "A"))
        await settle(pilot, r)
        (item,) = [e for e in a.items if isinstance(e, ThinkingItem)]
        item_view = r.views.get(item)
        assert isinstance(item_view, ThinkingView) and item_view.parent is r.views.get(a)
        assert str(item_view.render()).splitlines() == ["∴ thinking…", "Which file holds it?"]
        assert r.main.current_thinking is None  # the main transcript has none of it
        r(wrap(say("config.py", "explore#1"), "A"))
        await settle(pilot, r)
        assert item.done and str(item_view.render()).startswith("∴ thought (4 words)")
        (text,) = [e for e in a.items if type(e) is TextItem]
        assert isinstance(r.views.get(text), StreamText) and text.text == "config.py"
        # A block collapsed and expanded again rebuilds the folded reasoning.
        r(wrap(think("more thought", "explore#1"), "A"))
        r(SubagentBlockFinishedEvent(session_id="s", task_id="A", status="completed", short_result="config.py"))
        await settle(pilot, r)
        assert all(e.done for e in a.items if isinstance(e, ThinkingItem)) and not app.query(ThinkingView)
        block_view = r.views.block_view(a)
        assert block_view is not None
        block_view.collapsed = False
        await settle(pilot, r)
        views = list(block_view.query(ThinkingView))
        assert len(views) == 2 and all(not v.has_class("-live") for v in views)


async def test_reasoning_after_some_text_ends_that_text_and_the_next_answer_is_a_new_item() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        r = app.router
        r(task_started("c1"))
        add_open(r, added("A", "c1"))
        r(wrap(say("Partial answer.", "explore#1"), "A"))
        r(wrap(think("On second thought", "explore#1"), "A"))
        r(wrap(say("Better answer.", "explore#1"), "A"))
        await settle(pilot, r)
        a = r.blocks["A"]
        first, thought, second = a.items
        assert isinstance(first, TextItem) and first.done and first.text == "Partial answer."
        first_view = r.views.get(first)
        assert isinstance(first_view, AssistantText)  # shown whole, as Markdown, not as a live tail
        assert isinstance(thought, ThinkingItem) and thought.done
        assert type(second) is TextItem and second.text == "Better answer." and not second.done
