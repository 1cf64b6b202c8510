"""AskUserQuestion in the TUI: the dialog shows the model's questions, the person's picks go back to the model."""

from __future__ import annotations

import json
from typing import Any

from textual.widgets import Input

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.widgets.question import QuestionScreen
from agentcli.ui.widgets.status_bar import QUESTION
from tests.ui.conftest import MAIN, SIZE, MakeApp, idle, screen_text, sub, submit, task, wait_for

LIBRARY = {"question": "Which date library should we use?", "header": "Library", "multiSelect": False,
           "options": [{"label": "date-fns", "description": "small, functional"},
                       {"label": "luxon", "description": "time zones built in"}]}
FEATURES = {"question": "Which features do you want?", "header": "Features", "multiSelect": True,
            "options": [{"label": "Dark mode", "description": "a second theme"},
                        {"label": "Search", "description": "find anything"},
                        {"label": "Export", "description": "to CSV"}]}


def _ask(*questions: dict[str, Any]) -> ToolCall:
    return ToolCall(name="AskUserQuestion", id="toolu_ask", input={"questions": list(questions)})


def _tool_result(server: FakeLLMServer, system: str) -> str:
    """The text of the tool result the agent whose system prompt holds `system` sent back after asking."""
    def system_text(body: dict[str, Any]) -> str:
        blocks = body.get("system") or ""
        return blocks if isinstance(blocks, str) else "".join(block.get("text", "") for block in blocks)

    request = [r for r in server.requests if system in system_text(r.body)][1]
    last = request.body["messages"][-1]
    (result,) = [b for b in last["content"] if b.get("type") == "tool_result"]
    content = result["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


async def test_a_pick_and_a_multiselect_reach_the_model_in_the_tool_result(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_ask(LIBRARY, FEATURES)])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains='"luxon"'), reply=Reply(text="Noted.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "add dates")
            await wait_for(pilot, lambda: isinstance(app.screen, QuestionScreen))
            screen = app.screen
            assert isinstance(screen, QuestionScreen)
            await wait_for(pilot, lambda: app.status_bar.shown is not None and app.status_bar.shown.state == QUESTION)
            text = screen_text(app)
            assert "[main] asks you (question 1 of 2):" in text and "Which date library should we use?" in text
            assert "1. date-fns — small, functional" in text and "3. Other… (type your own answer)" in text
            await pilot.press("down", "enter")  # the second option: luxon
            await wait_for(pilot, lambda: screen.index == 1)
            assert "[ ] Dark mode" in screen_text(app)
            await pilot.press("1", "down", "down", "space")  # toggle Dark mode, move to Export, toggle it
            assert "[x] Dark mode" in screen_text(app) and "[x] Export" in screen_text(app)
            await pilot.press("enter")
            await idle(pilot)
            assert not isinstance(app.screen, QuestionScreen)
    server.assert_done()
    result = _tool_result(server, MAIN)
    assert result.splitlines()[:3] == ["The person answered your questions:",
                                       '- "Which date library should we use?" (Library): "luxon"',
                                       '- "Which features do you want?" (Features): "Dark mode", "Export"']


async def test_a_subagents_question_is_labelled_and_other_takes_typed_words(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Pick a library", "ask which library", "explore")])),
        Step(match=Match(system_contains=sub("Pick a library"), turn=0), reply=Reply(tool_calls=[_ask(LIBRARY)])),
        Step(match=Match(system_contains=sub("Pick a library"), turn=1, last_user_contains="own words"),
             reply=Reply(text="They want moment.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "delegate the question")
            await wait_for(pilot, lambda: isinstance(app.screen, QuestionScreen))
            assert "[explore#1] asks you:" in screen_text(app)
            await pilot.press("3")  # Other…
            other = app.screen.query_one("#question-other", Input)
            await wait_for(pilot, lambda: other.has_focus)
            await pilot.press(*["space" if ch == " " else ch for ch in "moment please"], "enter")
            await idle(pilot)
    server.assert_done()
    assert _tool_result(server, sub("Pick a library")).splitlines()[1] == (
        '- "Which date library should we use?" (Library): in their own words: "moment please"')


async def test_escape_declines_and_the_model_is_told(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_ask(LIBRARY)])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="declined to answer"),
             reply=Reply(text="I will pick luxon myself.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "add dates")
            await wait_for(pilot, lambda: isinstance(app.screen, QuestionScreen))
            await pilot.press("3")  # Other… then Esc: back to the options, nothing declined yet
            await pilot.press("escape")
            assert isinstance(app.screen, QuestionScreen)
            await pilot.press("escape")
            await idle(pilot)
            assert not isinstance(app.screen, QuestionScreen)
    server.assert_done()
    messages = json.dumps(server.requests[-1].body["messages"])
    assert '"is_error": true' in messages and "The person declined to answer your questions" in messages


async def test_the_models_text_is_shown_as_plain_text_never_markup(make_app: MakeApp) -> None:
    tricky = {"question": "Pick [bold]one[/bold]\x1b[31m?", "header": "[red]H",
              "options": [{"label": "[link=x]a[/link]", "description": "$text"}, {"label": "b", "description": ""}]}
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_ask(tricky)])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains='"[link=x]a[/link]"'),
             reply=Reply(text="ok")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "ask")
            await wait_for(pilot, lambda: isinstance(app.screen, QuestionScreen))
            text = screen_text(app)
            assert "Pick [bold]one[/bold]" in text and "\x1b" not in text
            assert "[red]H" in text and "1. [link=x]a[/link] — $text" in text
            await pilot.press("enter")
            await idle(pilot)
    server.assert_done()
