"""The focus model and the keys: text always reaches the prompt, Esc, scrolling, Shift+Tab modes, Ctrl+Q."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.binding import Binding
from textual.keys import key_to_character

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.app import QUIT_QUESTION, AgentApp
from agentcli.ui.commands import KEYS_HELP
from agentcli.ui.keys import key_name
from agentcli.ui.model import BlockItem
from agentcli.ui.widgets.approval import ApprovalScreen
from agentcli.ui.widgets.question import QuestionScreen
from agentcli.ui.widgets.rewind_screen import ModePicker, RewindPicker, RewindPreviewScreen
from agentcli.ui.widgets.status_bar import QUIT_ARMED
from agentcli.ui.widgets.subagent_block import BlockHeader, SubagentBlock
from agentcli.ui.widgets.tool_call import ToolCallView
from tests.ui.conftest import MAIN, SIZE, MakeApp, block_view, idle, notes, shown, sub, submit, task, wait_for


def _blocks(app: AgentApp) -> dict[str, BlockItem]:
    return {b.description: b for b in app.router.main.items if isinstance(b, BlockItem)}


def _hanging_subagent() -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task("Hanging search job", "a")])),
        Step(match=Match(system_contains=sub("Hanging search job")), reply=Reply(text="never"), latency_ms=20_000),
    ])


async def test_tab_then_typing_lands_in_the_prompt(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("tab")  # as if to complete: the focus leaves the prompt
            await pilot.pause()
            assert app.focused is not app.prompt
            await pilot.press(*"fix it")
            assert app.prompt.text == "fix it" and app.focused is app.prompt
            await pilot.click("#messages")  # a click on the conversation takes the focus too
            await pilot.pause()
            assert app.focused is app.messages
            await pilot.press("!")
            assert app.prompt.text == "fix it!" and app.focused is app.prompt


async def test_a_paste_with_the_focus_elsewhere_lands_in_the_prompt(make_app: MakeApp) -> None:
    from textual import events

    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            app.messages.focus()
            await pilot.pause()
            app.post_message(events.Paste("pasted text"))
            await wait_for(pilot, lambda: app.prompt.text == "pasted text")
            assert app.focused is app.prompt


async def test_typing_fix_on_a_focused_running_block_cancels_nothing(make_app: MakeApp) -> None:
    with FakeLLMServer(_hanging_subagent()) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "search")
            await wait_for(pilot, lambda: "Hanging search job" in _blocks(app)
                           and _blocks(app)["Hanging search job"].status == "running"
                           and shown(app, _blocks(app)["Hanging search job"]) is not None)
            hanging = _blocks(app)["Hanging search job"]
            view = block_view(app, hanging)
            await pilot.click(view.header)  # a click on the block focuses its header (and toggles it)
            await pilot.pause()
            assert app.focused is view.header
            await pilot.press(*"fix")
            assert app.prompt.text == "fix" and app.focused is app.prompt
            assert hanging.status == "running" and app.turn_running
            assert [r.status for r in app.conversation.runner.records()] == ["running"]
            # Back on the block, only Ctrl+X cancels it.
            view.header.focus()
            await pilot.pause()
            assert "cancel_subagent" in {b.binding.action for b in app.active_bindings.values()}
            await pilot.press("ctrl+x")
            await wait_for(pilot, lambda: hanging.status == "cancelled")
            await pilot.press("escape")
            await pilot.press("escape")
            await idle(pilot)
            # A finished block no longer offers cancel in the footer.
            block_view(app, hanging).header.focus()
            await pilot.pause()
            assert "cancel_subagent" not in {b.binding.action for b in app.active_bindings.values()}


async def test_esc_returns_to_the_prompt_and_stops_the_turn_only_from_there(make_app: MakeApp) -> None:
    stalled = Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="never arrives"), latency_ms=20_000)
    with FakeLLMServer(Script(steps=[stalled])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "take your time")
            await wait_for(pilot, lambda: len(server.requests) == 1)
            app.messages.focus()
            await pilot.pause()
            actions = {b.binding.action for b in app.active_bindings.values() if b.enabled}
            assert "focus_prompt" in actions and "stop_turn" not in actions  # the footer says "Back to prompt"
            await pilot.press("escape")
            await pilot.pause()
            assert app.focused is app.prompt and app.turn_running  # only the focus moved
            actions = {b.binding.action for b in app.active_bindings.values() if b.enabled}
            assert "stop_turn" in actions and "focus_prompt" not in actions
            await pilot.press("escape")  # from the prompt: stop the turn
            await idle(pilot)
            assert notes(app)[-1] == "Turn stopped."
            await pilot.press("escape")  # nothing runs: Esc in the empty prompt only says a second one rewinds
            await pilot.pause()
            assert app.is_running and app.focused is app.prompt and app.rewind_armed
    server.assert_done()


async def test_page_keys_scroll_the_conversation_while_the_prompt_has_focus(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(80, 20)) as pilot:
            view = app.messages
            for i in range(40):
                app.say(f"line {i}")
            await pilot.pause()
            assert app.focused is app.prompt
            assert view.max_scroll_y > 0 and view.scroll_y == view.max_scroll_y
            await pilot.press("pageup")
            await pilot.pause()
            assert view.scroll_y < view.max_scroll_y and app.focused is app.prompt
            first = view.scroll_y
            await pilot.press("pageup")
            await pilot.pause()
            assert view.scroll_y < first
            app.say("more")  # scrolled up: the view stays put
            await pilot.pause()
            assert view.scroll_y < first
            await pilot.press("pagedown", "pagedown", "pagedown")
            await wait_for(pilot, lambda: view.scroll_y == view.max_scroll_y)
            app.say("latest")  # back at the bottom: following again
            await pilot.pause()
            assert view.scroll_y == view.max_scroll_y
            await pilot.press("ctrl+home")
            await pilot.pause()
            assert view.scroll_y == 0
            await pilot.press("ctrl+end")
            await wait_for(pilot, lambda: view.scroll_y == view.max_scroll_y)
            # Home / End scroll while the prompt is empty; with text they move in the prompt's line.
            await pilot.press("home")
            await pilot.pause()
            assert view.scroll_y == 0
            await pilot.press("end")
            await wait_for(pilot, lambda: view.scroll_y == view.max_scroll_y)
            await pilot.press(*"abc", "home")
            await pilot.pause()
            assert app.prompt.cursor_location == (0, 0) and view.scroll_y == view.max_scroll_y
            await pilot.press("end")
            assert app.prompt.cursor_location == (0, 3)


EDIT = {"file_path": "src/config.py", "old_string": "'debug': True", "new_string": "'debug': False"}
SUB_EDIT = {"file_path": "src/auth.py", "old_string": "'admin'", "new_string": "'root'"}


async def test_shift_tab_cycles_the_mode_and_accept_edits_runs_edits_while_bash_asks(
    make_app: MakeApp, workspace: Path
) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[ToolCall(name="Edit", input=EDIT)])),
        Step(match=Match(system_contains=MAIN, turn=1),
             reply=Reply(tool_calls=[task("Fix the login", "fix", "general")])),
        Step(match=Match(system_contains=sub("Fix the login"), turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Edit", input=SUB_EDIT)])),
        Step(match=Match(system_contains=sub("Fix the login"), turn=1),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": "echo ran > ran.txt"})])),
        Step(match=Match(system_contains=sub("Fix the login"), turn=2, last_user_contains="declined"),
             reply=Reply(text="edited, not run")),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="all done")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, mode="ask")
        async with app.run_test(size=SIZE) as pilot:
            policy = app.conversation.permissions
            assert app.status_bar.shown is not None and app.status_bar.shown.mode == "ask"
            seen = []
            for _ in range(3):
                await pilot.press("shift+tab")
                seen.append(policy.mode)
            assert seen == ["accept_edits", "readonly", "ask"]
            assert app.focused is app.prompt  # Shift+Tab no longer moves the focus
            await pilot.press("shift+tab")
            await pilot.pause()
            assert policy.mode == "accept_edits" and app.status_bar.shown.mode == "accept_edits"
            assert "accept edits" in str(app.status_bar.render())
            await submit(pilot, "fix the config and the login")
            # The main agent's Edit and the subagent's Edit ran without a question; the subagent's Bash asks.
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            screen = app.screen
            assert isinstance(screen, ApprovalScreen)
            assert (screen.request.agent, screen.request.tool) == ("general#1", "Bash")
            assert "'debug': False" in (workspace / "src" / "config.py").read_text()
            assert "'root'" in (workspace / "src" / "auth.py").read_text()
            await pilot.press("shift+tab")  # in a dialog Shift+Tab is the dialog's (focus), not the mode
            assert policy.mode == "accept_edits"
            await pilot.press("n")
            await idle(pilot)
            assert not (workspace / "ran.txt").exists()
    server.assert_done()


async def test_ctrl_q_during_a_turn_asks_once(make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    stalled = Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="never arrives"), latency_ms=20_000)
    with FakeLLMServer(Script(steps=[stalled])) as server:
        app = make_app(server)
        told: list[str] = []
        monkeypatch.setattr(app, "notify", lambda message, **_: told.append(message))
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "take your time")
            await wait_for(pilot, lambda: len(server.requests) == 1)
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert app.is_running and app.quit_armed
            assert told == [QUIT_QUESTION]
            assert app.status_bar.shown is not None and app.status_bar.shown.state == QUIT_ARMED
            await pilot.press("a")  # any other key takes it back
            assert not app.quit_armed and app.prompt.text == "a"
            await pilot.press("ctrl+q")
            assert app.quit_armed and app.is_running
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0
    assert app.conversation.session.next_seq  # stored: run_tui prints the id to resume it on the way out


async def test_ctrl_q_without_a_turn_quits_at_once(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0


def _own_bindings(cls: type) -> list[Binding]:
    """The bindings a class and its bases declare (what Textual merges for a widget of that class)."""
    return [b for base in cls.__mro__ for b in Binding.make_bindings(base.__dict__.get("BINDINGS", []))]


def test_every_key_is_in_help() -> None:
    for owner in (AgentApp, SubagentBlock, BlockHeader, ToolCallView, ApprovalScreen, RewindPicker, ModePicker,
                  RewindPreviewScreen, QuestionScreen):
        for binding in Binding.make_bindings(owner.BINDINGS):
            for key in binding.key.split(","):
                assert key_name(key) in KEYS_HELP, (owner.__name__, key)
    assert QUIT_QUESTION.startswith("Press Ctrl+Q again to quit: the running turn will be stopped")


async def test_no_widget_of_the_main_screen_binds_a_text_key(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(text="Looking.", tool_calls=[task("List things", "list"), ToolCall(name="LS", input={})])),
        Step(match=Match(system_contains=sub("List things"), turn=0), reply=Reply(text="listed")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="**done**")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "look")
            await idle(pilot)
            widgets = [app.screen, *app.screen.walk_children()]
            assert any(isinstance(w, SubagentBlock) for w in widgets)
            assert any(isinstance(w, ToolCallView) for w in widgets)
            for widget in widgets:
                if widget is app.prompt:
                    continue
                for binding in _own_bindings(type(widget)):
                    for key in binding.key.split(","):
                        char = key_to_character(key)
                        assert char is None or not char.isprintable(), (type(widget).__name__, key)
    server.assert_done()


async def test_keys_queued_behind_tab_and_esc_follow_the_focus_those_keys_set(make_app: MakeApp) -> None:
    """A fast typist (or a busy app): keys already queued when Tab or Esc is handled. Tab, then "hi", then
    Enter sends "hi"; Esc from the conversation, then "yo", then Enter sends "yo"."""
    from textual import events

    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            for key, char in [("tab", "\t"), ("h", "h"), ("i", "i")]:
                app.post_message(events.Key(key, char))  # all queued before the first is handled
            await wait_for(pilot, lambda: app.prompt.text == "hi")
            await pilot.pause()
            assert app.focused is app.prompt
            app.messages.focus()
            await pilot.pause()
            for key, char in [("escape", "\x1b"), ("enter", "\r")]:
                app.post_message(events.Key(key, char))
            await wait_for(pilot, lambda: "hi" in notes(app))
            assert app.focused is app.prompt and app.prompt.text == ""
