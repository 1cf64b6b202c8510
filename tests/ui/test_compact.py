"""`/compact` in the TUI and the context meter in the status bar, over a real Conversation and the fake server."""

from __future__ import annotations

import json

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from tests.ui.conftest import MAIN, SIZE, MakeApp, idle, notes, screen_text, submit

SUMMARY = "SUMMARY: the person asked about the parser twice."


async def test_compact_summarises_with_the_light_model_and_the_meter_drops(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, last_user_contains="first question"),
             reply=Reply(text="A long first answer. " * 200)),
        Step(match=Match(system_contains=MAIN, last_user_contains="second question"),
             reply=Reply(text="The second answer.")),
        Step(match=Match(system_contains="You compact the conversation"), reply=Reply(text=SUMMARY)),
        Step(match=Match(system_contains=MAIN, last_user_contains="third question"),
             reply=Reply(text="Third, after the compaction.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, AGENTCLI_MODELS__MAIN__CONTEXT_WINDOW="100000")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "first question")
            await idle(pilot)
            await submit(pilot, "second question")
            await idle(pilot)
            shown = app.status_bar.shown
            assert shown is not None and shown.context is not None
            before, window = shown.context
            assert window == 100_000 and before > 0
            assert "context " in screen_text(app) and "of 100.0k" in screen_text(app)

            await submit(pilot, "/compact the parser")
            await idle(pilot)
            said = notes(app)
            assert said[-2] == "Compacting the context (focus: the parser)…"
            assert said[-1].startswith("context compacted (older turns summarised): ")
            await pilot.pause()
            after = app.status_bar.shown
            assert after is not None and after.context is not None and after.context[0] < before

            await submit(pilot, "third question")
            await idle(pilot)
        summary_request, last = server.requests[-2], server.requests[-1]
    assert "Focus on: the parser" in json.dumps(summary_request.body)
    assert "claude-haiku" in summary_request.body["model"]  # the light model summarises
    sent = json.dumps(last.body["messages"])
    assert SUMMARY in sent and "A long first answer" not in sent and "The second answer." in sent
    server.assert_done()


async def test_compact_with_nothing_to_compact_says_so(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "/compact")
            await idle(pilot)
            assert notes(app)[-1].startswith("Nothing to compact yet")
        assert server.requests == []


async def test_switching_model_switches_the_window_the_meter_measures_against(make_app: MakeApp) -> None:
    script = Script(steps=[Step(match=Match(system_contains=MAIN), reply=Reply(text="an answer"))])
    with FakeLLMServer(script) as server:
        app = make_app(server, AGENTCLI_MODELS__MAIN__CONTEXT_WINDOW="100000",
                       AGENTCLI_MODELS__LIGHT__CONTEXT_WINDOW="50000")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "a question")
            await idle(pilot)
            before = app.conversation.context_use()
            assert before is not None and before[1] == 100_000
            await submit(pilot, "/model light")
            await idle(pilot)
            after = app.conversation.context_use()
            assert after is not None and after == (before[0], 50_000)  # same context, the light model's window
