"""The TUI against the real engine and the fake server: streaming, commands, history, stopping a turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from agentcli.ui.app import AgentApp
from agentcli.ui.commands import is_command
from agentcli.ui.model import NoteItem, TextItem
from agentcli.ui.router import UIRouter
from agentcli.ui.widgets.message_list import AssistantText, NoteLine
from tests.ui.conftest import MAIN, SIZE, MakeApp, idle, notes, screen_text, submit, wait_for

ANSWER = "Here is **the answer**: the config loader lives in `src/config.py`, on line one. " * 3


def _texts(app: AgentApp) -> list[str]:
    return [widget.source for widget in app.query(AssistantText)]


async def test_a_prompt_streams_its_answer_into_the_view(
    make_app: MakeApp, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pushes: list[tuple[int, str]] = []  # (the flush it came from, the text appended)
    flushes = [0]
    real_push, real_flush = AssistantText.push, UIRouter.flush

    def push(self: AssistantText, chunk: str) -> None:
        pushes.append((flushes[0], chunk))
        real_push(self, chunk)

    def flush(self: UIRouter, text: bool = True, mounts: int | None = None) -> None:
        flushes[0] += 1
        real_flush(self, text, mounts)

    monkeypatch.setattr(AssistantText, "push", push)
    monkeypatch.setattr(UIRouter, "flush", flush)
    deltas = len(ANSWER) // 4
    step = Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="where is the config?"),
                reply=Reply(text=ANSWER, chunk_size=4), chunk_delay_ms=15)
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            assert app.title == f"agentcli — {workspace}"
            await submit(pilot, "where is the config?")
            assert notes(app)[-1] == "where is the config?"
            assert app.prompt.text == ""
            await idle(pilot)
            assert _texts(app) == [ANSWER]
            # It streamed into the widget in several appends (~1 s of deltas), batched: at most one append per
            # flush of the frame timer, whatever the deltas' timing, never one per delta.
            texts = [chunk for _, chunk in pushes if chunk]
            assert ANSWER.endswith("".join(texts)) and 2 <= len(texts) < deltas, (len(texts), deltas)  # after the mount
            frames = [frame for frame, chunk in pushes if chunk]
            assert len(frames) == len(set(frames)), frames
            user = app.query(NoteLine).filter(".-user").last()
            assert str(user.render()) == "where is the config?"
            shown = app.status_bar.shown
            assert shown is not None and shown.input_tokens > 0 and shown.state == "ready"
    server.assert_done()


async def test_a_session_budget_stop_is_an_error_note_and_refuses_the_next_turn(make_app: MakeApp) -> None:
    from agentcli.testing.fake_llm import Usage

    step = Step(match=Match(system_contains=MAIN, turn=0),
                reply=Reply(text="A long answer.", usage=Usage(input_tokens=900, output_tokens=200)))
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server, AGENTCLI_BUDGET__SESSION_MAX_TOKENS="1000")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "hello")
            await idle(pilot)
            errors = [n.text for n in app.router.main.items if isinstance(n, NoteItem) and n.kind == "error"]
            line = "session token budget exceeded: 1100 > 1000 tokens (budget.session_max_tokens)"
            assert errors == [f"Turn stopped: {line}"]
            await submit(pilot, "more")  # no request goes out: the session spent its budget
            await idle(pilot)
            errors = [n.text for n in app.router.main.items if isinstance(n, NoteItem) and n.kind == "error"]
            assert errors[-1] == f"Turn stopped: the session is over its budget: {line}"
    server.assert_done()
    assert len(server.requests) == 1


async def test_a_provider_error_is_one_line_in_the_view(make_app: MakeApp) -> None:
    from agentcli.testing.fake_llm import Fault

    step = Step(match=Match(system_contains=MAIN, turn=0), fault=Fault(kind="http", status=400,
                                                                         message="bad request: nope"))
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "hello")
            await idle(pilot)
            errors = [n for n in app.router.main.items if isinstance(n, NoteItem) and n.kind == "error"]
            assert len(errors) == 1 and "\n" not in errors[0].text
            assert errors[0].text.startswith("error: ")
            await submit(pilot, "/cost")  # the app is still alive and takes commands
            assert notes(app)[-1].startswith("Tokens: ")
    server.assert_done()


async def test_slash_commands(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "/help")
            assert "/agents" in notes(app)[-1] and "Esc" in notes(app)[-1]
            await submit(pilot, "/agents")
            listing = notes(app)[-1]
            assert "explore" in listing and "general" in listing and "read-only" in listing
            await submit(pilot, "/tasks")
            assert notes(app)[-1] == "No tasks in this session yet."
            await submit(pilot, "/model light")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("Model set to light"))
            assert app.conversation.model.display == "light"
            await wait_for(pilot, lambda: app.status_bar.shown is not None and app.status_bar.shown.model == "light")
            await submit(pilot, "/model nonsense:thing")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("/model: unknown model"))
            assert "\n" not in notes(app)[-1]
            assert app.conversation.model.display == "light"
            await submit(pilot, "/cost")
            assert notes(app)[-1].startswith("Tokens: 0 in / 0 out")
            await submit(pilot, "/frobnicate now")
            assert notes(app)[-1] == "Unknown command /frobnicate. Type /help for the list."
            session = app.conversation.session.id
            await submit(pilot, "/clear")
            await wait_for(pilot, lambda: notes(app) == ["Started a new session."])
            assert app.conversation.session.id != session
            await pilot.pause()
            assert len(app.messages.children) == 1
            await submit(pilot, "/quit")
            await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0


def test_only_a_slash_word_is_a_command() -> None:
    assert is_command("/help") and is_command("/model light")
    assert not is_command("/usr/lib is missing") and not is_command("/ 2") and not is_command("a /help")


async def test_input_history_and_newlines(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            prompt = app.prompt
            await submit(pilot, "/help")
            await submit(pilot, "/cost")
            await pilot.press("d", "r", "a", "f", "t")
            await pilot.press("up")
            assert prompt.text == "/cost"
            await pilot.press("up")
            assert prompt.text == "/help"
            await pilot.press("up")  # the oldest entry stays
            assert prompt.text == "/help"
            await pilot.press("down")
            assert prompt.text == "/cost"
            await pilot.press("down")
            assert prompt.text == "draft"  # back to what was being typed
            prompt.load_text("")
            await pilot.press("l", "i", "n", "e", "ctrl+j", "t", "w", "o")
            assert prompt.text == "line\ntwo"  # Ctrl+J inserts a newline, does not send
            await pilot.press("up")  # on the second line: moves the cursor, not history
            assert prompt.text == "line\ntwo" and prompt.cursor_location[0] == 0
            await pilot.press("up")  # on the first line: history
            assert prompt.text == "/cost"


async def test_esc_stops_a_running_turn_and_gives_back_the_prompt_queued_meanwhile(make_app: MakeApp) -> None:
    stalled = Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="never arrives"),
                   latency_ms=20_000, name="stalled")
    with FakeLLMServer(Script(steps=[stalled])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "take your time")
            await wait_for(pilot, lambda: len(server.requests) == 1)
            assert app.turn_running
            await submit(pilot, "another thing")
            assert app.prompt.queued == ["another thing"] and app.prompt.text == ""  # queued, not sent
            assert notes(app)[-1] == "take your time"
            await pilot.press("escape")
            await idle(pilot)
            assert notes(app)[-2] == "Turn stopped."
            assert notes(app)[-1].startswith("The turn was stopped: your queued prompt is back in the input")
            assert app.prompt.text == "another thing" and not app.prompt.queued  # kept for later, not sent
            assert not any(isinstance(e, TextItem) and e.text for e in app.router.main.items)
    server.assert_done()


async def test_the_demo_can_set_its_own_title(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server, title="agentcli demo — scripted model")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.title == "agentcli demo — scripted model"
            assert "agentcli demo — scripted model" in screen_text(app)


async def test_ctrl_c_stops_a_running_turn(make_app: MakeApp) -> None:
    stalled = Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="never arrives"), latency_ms=20_000)
    with FakeLLMServer(Script(steps=[stalled])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+c")  # nothing runs: only a hint, the app stays
            assert app.is_running
            await submit(pilot, "take your time")
            await wait_for(pilot, lambda: len(server.requests) == 1)
            await pilot.press("ctrl+c")
            await idle(pilot)
            assert notes(app)[-1] == "Turn stopped."
    server.assert_done()


async def test_the_view_follows_new_output_until_the_person_scrolls_up(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(80, 20)) as pilot:
            view = app.messages
            for i in range(30):
                app.say(f"line {i}")
            await pilot.pause()
            assert view.max_scroll_y > 0 and view.scroll_y == view.max_scroll_y  # following
            view.focus()
            await pilot.press("pageup")  # the person scrolls up: stop following
            await pilot.pause()
            top = view.scroll_y
            assert top < view.max_scroll_y
            for i in range(5):
                app.say(f"more {i}")
            await pilot.pause()
            assert view.scroll_y == top  # stays where the person put it
            await pilot.press("end")  # back at the bottom: follow again
            await wait_for(pilot, lambda: view.scroll_y == view.max_scroll_y)
            app.say("latest")
            await pilot.pause()
            assert view.scroll_y == view.max_scroll_y
