"""The status bar degrades by priority: state, subagent count and permission mode stay at 60 and 40 columns."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.widgets.approval import ApprovalScreen
from agentcli.ui.widgets.status_bar import APPROVAL, READY, WORKING, Status, fit
from tests.ui.conftest import MAIN, MakeApp, sub, submit, task, wait_for

BUSY = Status(model="claude-sonnet-5-5", input_tokens=123_456, output_tokens=7890, cost_usd=1.234, running=3,
              queued=2, state=APPROVAL, context=(90_000, 200_000), mode="accept_edits")


def test_everything_shows_when_there_is_room() -> None:
    line = fit(BUSY, 400).plain
    for part in ("accept edits (shift+tab)", "model claude-sonnet-5-5", "123.5k in / 7.9k out", "$1.23",
                 "context 45% of 200.0k", "3 subagents running, 2 queued", "waiting for your approval"):
        assert part in line


def test_the_context_says_where_its_window_came_from() -> None:
    served = Status(model="main", context=(4096, 8192), window_source="server: llama.cpp /props")
    assert "context 50% of 8.2k (server)" in fit(served, 400).plain
    assert "(server)" not in fit(served, 40).plain  # the first thing a narrower bar lets go of


@pytest.mark.parametrize(
    ("width", "expected"),
    [
        (118, "⏵ accept edits · claude-sonnet-5-5 · 131.3k tok · $1.23 · ctx 45% · 3 running, 2 queued · "
              "waiting for your approval"),
        (58, "⏵ accept edits · ●3 ◌2 · waiting for your approval"),  # 60 columns less the bar's padding
        (38, "⏵ accept edits · ●3 ◌2 · approval"),  # 40 columns
    ],
)
def test_narrow_bars_keep_state_subagents_and_mode(width: int, expected: str) -> None:
    line = fit(BUSY, width)
    assert line.plain == expected and line.cell_length <= width


@pytest.mark.parametrize("width", [58, 38])
def test_every_state_and_mode_fits_at_60_and_40_columns(width: int) -> None:
    for mode in ("ask", "accept_edits", "readonly", "auto"):
        for state in (READY, WORKING, APPROVAL):
            status = Status(model="claude-sonnet-5-5", input_tokens=9_999_999, output_tokens=999_999, cost_usd=123.45,
                            running=12, queued=4, state=state, context=(190_000, 200_000), mode=mode)
            line = fit(status, width)
            assert line.cell_length <= width, line.plain
            assert "12" in line.plain and "4" in line.plain, line.plain


def _approval_under_a_running_subagent() -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Run the build", "run", "general")])),
        Step(match=Match(system_contains=sub("Run the build"), turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": "make"})])),
        Step(match=Match(system_contains=sub("Run the build"), turn=1), reply=Reply(text="not built")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="finished")),
    ])


async def test_at_60_and_40_columns_the_bar_shows_the_approval_the_subagent_and_the_mode(make_app: MakeApp) -> None:
    with FakeLLMServer(_approval_under_a_running_subagent()) as server:
        app = make_app(server, mode="accept_edits")
        async with app.run_test(size=(60, 30)) as pilot:
            await submit(pilot, "build it")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen)
                           and app.status_bar.shown is not None and app.status_bar.shown.state == APPROVAL)
            await pilot.pause()
            line = str(app.status_bar.render())
            assert "waiting for your approval" in line and "accept edits" in line, line
            assert "1 running" in line or "1 subagent running" in line, line
            await pilot.resize_terminal(40, 30)
            await wait_for(pilot, lambda: app.status_bar.content_size.width == 38)
            await pilot.pause()
            line = str(app.status_bar.render())
            assert "approval" in line and "accept edits" in line and "●1" in line, line
            await pilot.press("n")
    server.assert_done()


def test_the_vim_mode_comes_first_and_stays_on_a_narrow_bar() -> None:
    assert fit(replace(BUSY, vim="NORMAL"), 400).plain.startswith("-- NORMAL --  ·  ⏵ accept edits")
    assert fit(replace(BUSY, vim="INSERT"), 58).plain == "-- INSERT -- · ⏵ accept edits · ●3 ◌2 · approval waiting"
    assert fit(replace(BUSY, vim="INSERT"), 38).plain == "INSERT · edits · ●3 ◌2 · approval"
    assert "INSERT" not in fit(BUSY, 400).plain and fit(BUSY, 400).plain.startswith("⏵")  # vim keys off: nothing
