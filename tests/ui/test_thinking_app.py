"""Thinking in the real TUI against the fake server: live and dimmed, batched, folded once the answer starts,
in the main view and in a subagent's block, and never part of the answer."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Raw, RawFrame, Reply, Script, Step
from agentcli.ui.model import BlockItem, TextItem, ThinkingItem
from agentcli.ui.widgets.message_list import AssistantText, ThinkingView
from tests.ui.conftest import MAIN, SIZE, MakeApp, block_view, idle, screen_text, shown, sub, submit, task, wait_for

PIECES = [f"step {i} of my reasoning; " for i in range(40)]
THOUGHT = "".join(PIECES)


def _ev(event: str, data: dict[str, Any]) -> RawFrame:
    return RawFrame(event=event, data={"type": event, **data})


def _thinks_then_answers(pieces: list[str], answer: str) -> Raw:
    """Claude with thinking: the thinking deltas, its signature, then the answer (Anthropic's streaming order)."""
    frames = [
        _ev("message_start", {"message": {"id": "msg_01U", "type": "message", "role": "assistant",
                                          "model": "claude-sonnet-5-5", "content": [], "stop_reason": None,
                                          "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        _ev("content_block_start", {"index": 0, "content_block": {"type": "thinking", "thinking": "",
                                                                  "signature": ""}}),
        *[_ev("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": p}})
          for p in pieces],
        _ev("content_block_delta", {"index": 0, "delta": {"type": "signature_delta", "signature": "EqSIGui"}}),
        _ev("content_block_stop", {"index": 0}),
        _ev("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}),
        _ev("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": answer}}),
        _ev("content_block_stop", {"index": 1}),
        _ev("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                              "usage": {"output_tokens": 300}}),
        _ev("message_stop", {}),
    ]
    return Raw(frames=frames)


async def test_main_thinking_streams_batched_and_folds_when_the_answer_starts(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    pushes: list[str] = []
    real_push = ThinkingView.push

    def push(self: ThinkingView, chunk: str) -> None:
        pushes.append(chunk)
        real_push(self, chunk)

    monkeypatch.setattr(ThinkingView, "push", push)
    step = Step(match=Match(system_contains=MAIN, turn=0), raw=_thinks_then_answers(PIECES, "The answer is 42."),
                chunk_delay_ms=10)
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "think hard")
            await idle(pilot)
            thinking = [e for e in app.router.main.items if isinstance(e, ThinkingItem)]
            answers = [e for e in app.router.main.items if type(e) is TextItem]
            assert len(thinking) == 1 and thinking[0].text == THOUGHT and thinking[0].done
            answer = shown(app, answers[0]) if answers else None
            assert len(answers) == 1 and isinstance(answer, AssistantText)
            assert answer.source == "The answer is 42."  # the reasoning is never part of the answer
            # It streamed into its widget in batched updates, not one per delta.
            assert 1 <= len(pushes) < len(PIECES) / 2, len(pushes)
            view = app.query_one(ThinkingView)
            assert not view.has_class("-live") and view.styles.text_style.italic
            screen = screen_text(app)
            assert "∴ thought (200 words) · click to show" in screen and "step 39" not in screen
            assert "The answer is 42." in screen
    server.assert_done()


async def test_subagent_thinking_streams_in_its_block(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task("Find the loader", "find it")])),
        Step(match=Match(system_contains=sub("Find the loader")),
             raw=_thinks_then_answers(PIECES[:5], "It is in src/config.py."), chunk_delay_ms=5),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="It is in src/config.py."),
             reply=Reply(text="Found it.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "where is the loader?")
            await idle(pilot)
            (block,) = [e for e in app.router.main.items if isinstance(e, BlockItem)]
            (thinking,) = [e for e in block.items if isinstance(e, ThinkingItem)]
            assert thinking.text == "".join(PIECES[:5]) and thinking.done
            assert block.short_result and "step 0" not in block.short_result
            assert not [e for e in app.router.main.items if isinstance(e, ThinkingItem)]
            view_of_block = block_view(app, block)
            view_of_block.collapsed = False
            await wait_for(pilot, lambda: [v.is_mounted for v in view_of_block.query(ThinkingView)] == [True])
            (view,) = view_of_block.query(ThinkingView)
            assert str(view.render()).startswith("∴ thought (25 words)")
    server.assert_done()
