"""Vim keys in the TUI's prompt (Pilot): `[ui] vim_mode` or `/vim` turns them on (and `/vim` saves the choice),
Esc goes to normal mode where text keys are commands, the status bar shows the mode, Enter sends in either mode,
the prompt's own keys still work in insert mode, and Esc in normal mode keeps its meaning (stop the turn, rewind)."""

from __future__ import annotations

import tomllib

from agentcli.paths import user_config_file
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from agentcli.ui.app import AgentApp
from agentcli.ui.widgets.status_bar import fit
from tests.ui.conftest import MAIN, SIZE, MakeApp, notes, submit, wait_for

VIM = {"AGENTCLI_UI__VIM_MODE": "true"}


def _shown_mode(app: AgentApp) -> str:
    status = app.status_bar.shown
    return status.vim if status is not None else "?"


def _status_line(app: AgentApp) -> str:
    status = app.status_bar.shown
    assert status is not None
    return fit(status, 400).plain


async def test_normal_mode_edits_with_motions_and_operators(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server, **VIM)
        async with app.run_test(size=SIZE) as pilot:
            prompt = app.prompt
            await wait_for(pilot, lambda: _shown_mode(app) == "INSERT")
            assert "-- INSERT --" in _status_line(app)
            await pilot.press(*"foo bar baz")
            await pilot.press("escape")
            await wait_for(pilot, lambda: _shown_mode(app) == "NORMAL")
            assert "-- NORMAL --" in _status_line(app)
            assert prompt.text == "foo bar baz" and prompt.cursor_location == (0, 10)  # on the last character
            await pilot.press("0", "w")
            assert prompt.cursor_location == (0, 4)
            await pilot.press("backspace")  # moves left, as in vim: deletes nothing
            assert prompt.text == "foo bar baz" and prompt.cursor_location == (0, 3)
            await pilot.press("l")
            await pilot.press("d", "w")
            assert prompt.text == "foo baz" and prompt.cursor_location == (0, 4)
            await pilot.press("x")
            assert prompt.text == "foo az"
            await pilot.press("u")
            assert prompt.text == "foo baz"
            await pilot.press("c", "q")  # no command: both keys are dropped
            assert prompt.text == "foo baz" and _shown_mode(app) == "NORMAL"
            await pilot.press("l", "c", "i", "w", *"qux", "escape")
            assert prompt.text == "foo qux" and prompt.cursor_location == (0, 6)
            await pilot.press("y", "y", "p")
            assert prompt.text == "foo qux\nfoo qux" and prompt.cursor_location == (1, 0)
            await pilot.press("k", "D")
            assert prompt.text == "\nfoo qux"
            await pilot.press("A", *"end")
            await wait_for(pilot, lambda: _shown_mode(app) == "INSERT")
            assert prompt.text == "end\nfoo qux"
            await pilot.press("escape", "2", "u")  # the insert session, then D
            assert prompt.text == "foo qux\nfoo qux"
            await pilot.press("u")
            assert prompt.text == "foo qux"


async def test_enter_sends_in_normal_mode_and_the_next_prompt_starts_in_insert_mode(make_app: MakeApp) -> None:
    script = Script(steps=[Step(match=Match(system_contains=MAIN), reply=Reply(text="Hello there."))])
    with FakeLLMServer(script) as server:
        app = make_app(server, **VIM)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"hi you", "escape", "b", "d", "w")
            assert app.prompt.text == "hi "
            await pilot.press("enter")
            await wait_for(pilot, lambda: len(server.requests) == 1 and not app.turn_running)
            assert "hi" in notes(app) and app.prompt.text == ""
            await wait_for(pilot, lambda: _shown_mode(app) == "INSERT")
            await pilot.press(*"ok")
            assert app.prompt.text == "ok"
    server.assert_done()


async def test_the_prompts_own_keys_work_in_insert_mode(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server, **VIM)
        async with app.run_test(size=SIZE) as pilot:
            prompt = app.prompt
            await pilot.press(*"one", "shift+enter", *"two", "ctrl+j", *"three")
            assert prompt.text == "one\ntwo\nthree" and prompt.vim.mode == "insert"
            prompt.load_text("")
            await pilot.press(*"/co")
            await wait_for(pilot, lambda: prompt.completions.shown)
            await pilot.press("escape")  # an open completion list takes Esc first
            await wait_for(pilot, lambda: not prompt.completions.shown)
            assert prompt.vim.mode == "insert"
            await pilot.press("tab")  # in a word being completed, Tab completes
            await wait_for(pilot, lambda: prompt.text.startswith("/co") and prompt.text.endswith(" "))
            assert prompt.text in ("/compact ", "/copy ", "/cost ")
            prompt.load_text("/cost")
            await pilot.press("enter")
            await wait_for(pilot, lambda: any(n.startswith("Tokens:") for n in notes(app)))
            await pilot.press("up")  # the history
            assert prompt.text == "/cost"
            mode = app.conversation.permissions.mode
            await pilot.press("shift+tab")
            assert app.conversation.permissions.mode != mode
            await pilot.press("ctrl+r")
            assert prompt.searching
            await pilot.press("escape")  # Ctrl+R's search takes Esc first too
            assert not prompt.searching and prompt.vim.mode == "insert"


async def test_k_on_the_first_line_walks_the_history_and_j_comes_back(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server, **VIM)
        async with app.run_test(size=SIZE) as pilot:
            prompt = app.prompt
            for command in ("/cost", "/help"):
                await submit(pilot, command)
            await pilot.press(*"draft", "escape", "k")
            assert prompt.text == "/help" and prompt.cursor_location == (0, 4)  # on the last character
            await pilot.press("k")
            assert prompt.text == "/cost"
            await pilot.press("j", "j")
            assert prompt.text == "draft" and prompt.vim.mode == "normal"


async def test_a_text_key_typed_with_the_focus_elsewhere_is_a_command_in_normal_mode(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server, **VIM)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"abc", "escape", "0")
            app.messages.focus()
            await pilot.pause()
            assert app.focused is app.messages
            await pilot.press("x")
            assert app.focused is app.prompt and app.prompt.text == "bc"  # deleted, not typed
            await pilot.press("i", "escape")  # insert mode takes Esc: the focus stays, normal mode again
            app.messages.focus()
            await pilot.pause()
            await pilot.press("escape")  # away from the prompt, Esc goes back to it as ever
            await pilot.pause()
            assert app.focused is app.prompt and app.prompt.vim.mode == "normal"


async def test_esc_in_normal_mode_stops_the_turn_and_twice_in_the_empty_prompt_rewinds(make_app: MakeApp) -> None:
    stalled = Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="never arrives"), latency_ms=20_000)
    with FakeLLMServer(Script(steps=[stalled])) as server:
        app = make_app(server, **VIM)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "take your time")
            await wait_for(pilot, lambda: len(server.requests) == 1)
            await pilot.press("escape")  # insert mode: to normal mode, the turn goes on
            await wait_for(pilot, lambda: _shown_mode(app) == "NORMAL")
            assert app.turn_running
            await pilot.press("d", "escape")  # Esc drops the command being typed, and only that
            await pilot.pause()
            assert app.turn_running and app.prompt.vim.pending == ""
            await pilot.press("escape")  # normal mode: stops the turn
            await wait_for(pilot, lambda: not app.turn_running and "Turn stopped." in notes(app))
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.rewind_armed)  # the first Esc of Esc Esc: /rewind


async def test_vim_command_toggles_and_saves_the_setting(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.status_bar.shown is not None)
            assert _shown_mode(app) == "" and "INSERT" not in _status_line(app)
            await pilot.press(*"ab", "escape")  # without vim keys Esc stays the app's
            await pilot.press("x")
            assert app.prompt.text == "abx"
            await submit(pilot, "/vim")
            await wait_for(pilot, lambda: any(n.startswith("Vim keys on") for n in notes(app)))
            assert tomllib.loads(user_config_file().read_text()) == {"ui": {"vim_mode": True}}
            await wait_for(pilot, lambda: _shown_mode(app) == "INSERT")
            await pilot.press(*"abc", "escape", "x")
            assert app.prompt.text == "ab"
            await submit(pilot, "/vim maybe")
            await wait_for(pilot, lambda: any("/vim: unknown choice 'maybe'" in n for n in notes(app)))
            await submit(pilot, "/vim")
            await wait_for(pilot, lambda: any(n.startswith("Vim keys off") for n in notes(app)))
            await wait_for(pilot, lambda: _shown_mode(app) == "")
            assert tomllib.loads(user_config_file().read_text()) == {"ui": {"vim_mode": False}}
            await pilot.press(*"abc", "escape", "x")
            assert app.prompt.text == "abcx"
            await submit(pilot, "/vim on")
            await wait_for(pilot, lambda: _shown_mode(app) == "INSERT")
            assert tomllib.loads(user_config_file().read_text()) == {"ui": {"vim_mode": True}}


async def test_esc_and_a_key_typed_within_the_escape_delay_arrive_as_alt_and_act_as_both(make_app: MakeApp) -> None:
    """A terminal sends Esc and a key typed within its escape delay as one Alt+key (`\\x1bw`): in insert mode that
    is Esc, then the key's normal-mode command, as a shell's vi mode reads it; the prompt's own Alt keys stay."""
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server, **VIM)
        async with app.run_test(size=SIZE) as pilot:
            prompt = app.prompt
            await wait_for(pilot, lambda: _shown_mode(app) == "INSERT")
            await pilot.press(*"one two three")
            await pilot.press("alt+d")  # Esc d: an operator waiting for its motion
            assert _shown_mode(app) == "NORMAL" and prompt.text == "one two three"
            await pilot.press("b")
            assert prompt.text == "one two e" and _shown_mode(app) == "NORMAL"
            await pilot.press("A", *" four", "alt+backspace")  # the prompt's own key: deletes a word, stays
            assert prompt.text == "one two e " and _shown_mode(app) == "INSERT"
