"""Approvals in the TUI: a modal names the subagent asking, and its answer reaches the tool."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Static

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.tools.permissions.approvals import PermissionRequest
from agentcli.ui.widgets.approval import Approvals, ApprovalScreen, request_line, waiting_text
from tests.ui.conftest import MAIN, SIZE, MakeApp, idle, sub, submit, task, wait_for

COMMAND = "echo approved-output > out.txt && cat out.txt"


def _script(answer: str) -> Script:
    seen = "approved-output" if answer != "n" else "the person declined this Bash call"
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Run the build", "run the command", "general")])),
        Step(match=Match(system_contains=sub("Run the build"), turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": COMMAND})])),
        Step(match=Match(system_contains=sub("Run the build"), turn=1, last_user_contains=seen),
             reply=Reply(text=f"saw: {answer}")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="finished")),
    ])


@pytest.mark.parametrize("answer", ["n", "y", "a"])
async def test_the_modal_names_the_subagent_and_its_answer_reaches_the_tool(
    answer: str, make_app: MakeApp, workspace: Path
) -> None:
    with FakeLLMServer(_script(answer)) as server:
        app = make_app(server, mode="ask")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "build it")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            screen = app.screen
            assert isinstance(screen, ApprovalScreen)
            question = str(screen.query_one("#approval-question").render())
            assert question == f"[general#1] wants to run: {COMMAND}"
            assert app.status_bar.shown is not None
            await wait_for(pilot, lambda: app.status_bar.shown is not None
                           and app.status_bar.shown.state == "waiting for your approval")
            await pilot.press(answer)
            await idle(pilot)
            assert not isinstance(app.screen, ApprovalScreen)
            (bash,) = [r for r in server.requests if "Run the build" in str(r.body.get("system"))][1:]
            if answer == "n":
                assert "Permission denied: the person declined" in str(bash.body["messages"])
                assert not (workspace / "out.txt").exists()
            else:
                assert (workspace / "out.txt").read_text().strip() == "approved-output"
            remembered = app.conversation.permissions._remembered("Bash", COMMAND)  # "allow always" was kept
            assert remembered == (answer == "a")
    server.assert_done()


async def test_buttons_answer_and_deny_has_the_focus(make_app: MakeApp, workspace: Path) -> None:
    with FakeLLMServer(_script("y")) as server:
        app = make_app(server, mode="ask")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "build it")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await pilot.pause()
            assert app.focused is not None and app.focused.id == "deny"
            await pilot.click("#allow_once")
            await idle(pilot)
            assert (workspace / "out.txt").exists()
    server.assert_done()


async def test_parallel_requests_are_shown_one_at_a_time(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            requests = [PermissionRequest(f"general#{i}", "Bash", f"echo {i}", f"echo {i}") for i in (1, 2)]
            # Straight to the app's approver, bypassing the policy's own queue: the app queues too.
            answers = [asyncio.ensure_future(app.approve(r)) for r in requests]
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            assert len(app.screen_stack) == 2
            first = app.screen
            assert isinstance(first, ApprovalScreen) and first.request.agent == "general#1"
            await pilot.press("y")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen is not first)
            assert len(app.screen_stack) == 2
            await pilot.press("escape")
            assert await asyncio.gather(*answers) == ["allow_once", "deny"]


async def test_without_an_app_the_approver_denies() -> None:
    request = PermissionRequest("main", "Edit", "src/x.py", "src/x.py")
    assert await Approvals()(request) == "deny"
    assert request_line(request) == "[main] wants to run: Edit src/x.py"


async def test_stopping_the_turn_closes_an_open_modal(make_app: MakeApp, workspace: Path) -> None:
    script = _script("n")
    script.steps = script.steps[:2]  # the subagent never gets an answer: the turn is stopped
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "build it")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            app.action_stop_turn()
            await idle(pilot)
            assert not isinstance(app.screen, ApprovalScreen)
            assert not (workspace / "out.txt").exists()
            block = next(iter(app.router.blocks.values()))
            assert block.status == "cancelled"
    server.assert_done()


async def test_the_dialog_says_how_many_requests_wait_behind_it(make_app: MakeApp, workspace: Path) -> None:
    from agentcli.tools.base import FileLocks, ToolContext
    from agentcli.tools.shell.bash import BashTool

    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            policy = app.conversation.permissions
            bash = BashTool()
            asks = []
            for i in (1, 2, 3):  # three parallel subagents ask through the shared policy
                ctx = ToolContext(workspace=workspace, agent=f"general#{i}", session_id="s", permissions=policy,
                                  file_locks=FileLocks())
                args = bash.parse({"command": f"echo {i} > out{i}.txt"})
                asks.append(asyncio.ensure_future(policy.check(bash, args, ctx)))
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            line = app.screen.query_one("#approval-waiting", Static)
            await wait_for(pilot, lambda: str(line.render()) == "2 more requests waiting" and line.display)
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen)
                           and str(app.screen.query_one("#approval-waiting", Static).render())
                           == "1 more request waiting")
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen)
                           and not app.screen.query_one("#approval-waiting", Static).display)
            await pilot.press("n")
            decisions = await asyncio.gather(*asks)
            assert [d.allowed for d in decisions] == [False, False, False]


@pytest.mark.parametrize(("built", "before_mount"), [(2, 0), (0, 2), (1, 1), (0, 0)])
async def test_a_count_given_before_the_dialog_is_mounted_is_the_one_it_shows(built: int, before_mount: int) -> None:
    # The app's frame timer re-counts the open dialog every frame, so it can call set_waiting between the push and
    # the mount; that count must not be taken as already shown (the line then kept its text and stayed visible).
    app: App[None] = App()
    async with app.run_test(size=SIZE) as pilot:
        screen = ApprovalScreen(PermissionRequest("general#3", "Bash", "echo 3", "echo 3"), waiting=built)
        screen.set_waiting(before_mount)
        await app.push_screen(screen)
        await pilot.pause()
        line = screen.query_one("#approval-waiting", Static)
        assert (str(line.render()), line.display) == (waiting_text(before_mount), before_mount > 0)
