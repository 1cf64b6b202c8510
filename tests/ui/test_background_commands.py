"""Background commands in the TUI: the status bar counts them, /bg (Ctrl+G) lists them, follows one's output, stops
one, and Ctrl+B moves a running Bash command there."""

from __future__ import annotations

import os

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.widgets.background_screen import BackgroundListScreen, BackgroundOutputScreen, safe_output
from agentcli.ui.widgets.status_bar import Status, fit
from tests.ui.conftest import MAIN, SIZE, MakeApp, idle, notes, screen_text, submit, wait_for

TICKER = "for i in 1 2 3; do echo tick $i; sleep 0.2; done; printf 'last \\033[31mred\\n'; sleep 300"


def _starts_a_ticker() -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": TICKER, "run_in_background": True})])),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="started it")),
    ])


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_bar_counts_background_commands_and_shows_nothing_without() -> None:
    assert "bg" not in fit(Status(model="m"), 200).plain
    assert "⚙ 2 bg" in fit(Status(model="m", background=2), 200).plain
    assert "⚙2" in fit(Status(model="m", background=2, running=3, queued=1, mode="accept_edits"), 30).plain


def test_output_is_made_terminal_safe() -> None:
    shown = safe_output("a\x1b[31mred\r\nb\rc")
    assert "\x1b" not in shown and "\r" not in shown and shown.endswith("b\nc")


async def test_bg_lists_follows_and_stops_a_background_command(make_app: MakeApp) -> None:
    with FakeLLMServer(_starts_a_ticker()) as server:
        app = make_app(server, mode="auto")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "start the ticker")
            await idle(pilot)
            shells = app.conversation.runner.kit.shells
            [job] = shells.running()
            await wait_for(pilot, lambda: app.status_bar.shown is not None and app.status_bar.shown.background == 1)
            assert "⚙ 1 bg" in screen_text(app)

            await wait_for(pilot, lambda: "last" in job.last_lines(1))
            await submit(pilot, "/bg")
            await wait_for(pilot, lambda: isinstance(app.screen, BackgroundListScreen))
            listing = app.screen
            assert isinstance(listing, BackgroundListScreen)
            await wait_for(pilot, lambda: "last ␛[31mred" in screen_text(app))  # its last line, the escape visible
            text = screen_text(app)
            assert job.id in text and "running" in text and "tick $i" in text and "\x1b" not in text

            await pilot.press("enter")  # follow its output
            await wait_for(pilot, lambda: isinstance(app.screen, BackgroundOutputScreen))
            follow = app.screen
            assert isinstance(follow, BackgroundOutputScreen)
            await wait_for(pilot, lambda: "tick 3" in follow.output and "last" in follow.output)
            assert follow.output.startswith("tick 1\ntick 2\ntick 3\nlast ␛[31mred")
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is listing)

            await pilot.press("x")  # stop the highlighted command
            await wait_for(pilot, lambda: job.status == "stopped")
            assert not _alive(job.pgid)
            await wait_for(pilot, lambda: app.status_bar.shown is not None and app.status_bar.shown.background == 0)
            await wait_for(pilot, lambda: "stopped" in screen_text(app))
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is app.screen_stack[0])
            assert any(f"Background command {job.id} (for i in 1 2 3" in note and "stopped after" in note
                       for note in notes(app))  # the transcript says it ended
            assert job.read_to == 0  # following the output left the agent's TaskOutput position alone


async def test_ctrl_g_opens_the_list_and_says_when_there_is_none(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+g")
            await wait_for(pilot, lambda: any("No background commands" in note for note in notes(app)))
            assert not isinstance(app.screen, BackgroundListScreen)


async def test_ctrl_b_moves_the_running_bash_command_to_the_background(make_app: MakeApp) -> None:
    moved = "moved this command to the background"
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": "echo before; sleep 300"})])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains=moved), reply=Reply(text="it runs on")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, mode="auto")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+b")
            await wait_for(pilot, lambda: any("No Bash command is running" in note for note in notes(app)))
            await submit(pilot, "start the server")
            shells = app.conversation.runner.kit.shells
            await wait_for(pilot, lambda: bool(shells.foreground()) and "before" in screen_text(app))
            await pilot.press("ctrl+b")
            await idle(pilot)  # the turn ends: the agent was told and answered
            assert "it runs on" in screen_text(app)
            assert any("Moving 1 running Bash command(s) to the background" in note for note in notes(app))
            [job] = shells.running()
            assert job.command == "echo before; sleep 300" and _alive(job.pgid)
            await wait_for(pilot, lambda: app.status_bar.shown is not None and app.status_bar.shown.background == 1)
            await shells.stop(job)
            assert not _alive(job.pgid)
