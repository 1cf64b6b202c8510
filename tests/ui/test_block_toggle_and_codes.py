"""SubagentBlock's Collapsible-style state and messages, and what failed tool calls and Task calls show:
the SPEC error code of a failed call and a Task call's short result (router on synthetic events, Pilot)."""

from __future__ import annotations

from agentcli.events import (
    SubagentBlockFinishedEvent,
    SubagentBlockUpdatedEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
)
from agentcli.ui.widgets.subagent_block import SubagentBlock
from agentcli.ui.widgets.tool_call import ToolCallView
from tests.ui.test_router import RouterApp, added, delta, settle, task_started, wrap


def finished(call_id: str, name: str, output: str, *, code: str | None = None, short: str | None = None,
             is_error: bool = True) -> ToolCallFinishedEvent:
    return ToolCallFinishedEvent(session_id="s", tool_call_id=call_id, name=name, is_error=is_error, output=output,
                                 duration_ms=1200, code=code, short_result=short)


def started(call_id: str, name: str, summary: str) -> ToolCallStartedEvent:
    return ToolCallStartedEvent(session_id="s", tool_call_id=call_id, name=name, args={}, summary=summary)


def line(app: RouterApp, call_id: str) -> str:
    (view,) = [v for v in app.query(ToolCallView) if v.item.tool_call_id == call_id]
    return str(view.render())


async def test_a_failed_call_names_its_error_code() -> None:
    app = RouterApp()
    async with app.run_test(size=(160, 30)) as pilot:
        r = app.router
        r(task_started("c1"))  # a Task call no subagent came of: it stays a line
        r(finished("c1", "Task", "Subagent task timed out after 300000ms\ndetails", code="TIMEOUT"))
        r(started("c2", "Read", "nope.py"))
        r(finished("c2", "Read", "File not found: nope.py", code="NOT_FOUND"))
        r(started("c3", "Read", "yes.py"))
        r(finished("c3", "Read", "fine", code="NOT_FOUND", is_error=False))  # a code on a success is not shown
        r(started("c4", "Bash", "make"))
        r(finished("c4", "Bash", "exit 2"))  # a failure without a code: as before
        await settle(pilot, r)
        assert line(app, "c1") == "✗ Task [TIMEOUT]  work  1.2s  Subagent task timed out after 300000ms"
        assert line(app, "c2") == "✗ Read [NOT_FOUND]  nope.py  1.2s  File not found: nope.py"
        assert line(app, "c3") == "✓ Read  yes.py  1.2s"
        assert line(app, "c4") == "✗ Bash  make  1.2s  exit 2"
        # Expanded, the output replaces the one-line reason; the code stays.
        (view,) = [v for v in app.query(ToolCallView) if v.item.tool_call_id == "c1"]
        view.focus()
        await pilot.press("enter")
        assert str(view.render()).splitlines()[:3] == [
            "✗ Task [TIMEOUT]  work  1.2s", "Subagent task timed out after 300000ms", "details"]


async def test_a_task_line_shows_its_short_result_and_the_reason() -> None:
    app = RouterApp()
    async with app.run_test(size=(160, 30)) as pilot:
        r = app.router
        r(task_started("c1"))
        r(finished("c1", "Task", "Circular delegation prevented: explore → explore", code="CIRCULAR",
                   short="Task delegation failed"))
        r(task_started("c2"))
        r(finished("c2", "Task", "a long report\nin lines", short="[bold]Task completed[/bold] by explore",
                   is_error=False))
        await settle(pilot, r)
        assert line(app, "c1") == ("✗ Task [CIRCULAR]  work  1.2s  "
                                   "Task delegation failed · Circular delegation prevented: explore → explore")
        assert line(app, "c2") == "✓ Task  work  1.2s  [bold]Task completed[/bold] by explore"  # never markup


async def test_a_block_takes_its_task_calls_short_result_and_code() -> None:
    app = RouterApp()
    async with app.run_test(size=(160, 30)) as pilot:
        r = app.router
        r(task_started("c1"))
        r(added("A", "c1"))
        r(wrap(SubagentBlockUpdatedEvent(session_id="s", task_id="A", status="running", elapsed_ms=10)))
        r(SubagentBlockFinishedEvent(session_id="s", task_id="A", status="timed_out",
                                     short_result="Task failed: timed out", elapsed_ms=3000))
        r(finished("c1", "Task", "Subagent task timed out after 3000ms", code="TIMEOUT",
                   short="Task failed: timed out after 3s"))
        await settle(pilot, r)
        assert not app.query(ToolCallView)  # the block stands for the Task call
        header = str(app.query_one(SubagentBlock).header.render())
        assert "⏱ explore  job A  — Task failed: timed out after 3s [TIMEOUT]" in header
        # Without a short result in the event, the block keeps its own; a completed block shows no code.
        r(task_started("c2"))
        r(added("B", "c2"))
        r(SubagentBlockFinishedEvent(session_id="s", task_id="B", status="completed",
                                     short_result="Task completed by explore"))
        r(finished("c2", "Task", "report", is_error=False))
        await settle(pilot, r)
        view = r.views.block_view(r.blocks["B"])
        assert view is not None and "Task completed by explore  ·" in str(view.header.render())
        assert "[" not in str(view.header.render())


async def test_collapsed_is_reactive_and_each_change_posts_a_message() -> None:
    app = RouterApp()
    async with app.run_test(size=(160, 30)) as pilot:
        r = app.router
        r(task_started("c1"))
        r(added("A", "c1"))
        r(wrap(delta("first words", "explore#1"), "A"))
        await settle(pilot, r)
        view = r.views.block_view(r.blocks["A"])
        # A running block starts compact: its header (and latest activity) only, no body mounted.
        assert view is not None and view.collapsed and list(view.children) == [view.header]
        await pilot.click(view.header)  # a click expands: the body is built from the model
        await pilot.pause()
        assert not view.collapsed and not r.blocks["A"].collapsed and len(view.children) == 2
        assert "▼" in str(view.header.render()) and not view.has_class("-collapsed")
        view.header.focus()
        await pilot.press("enter")  # Enter collapses again: only the header stays mounted
        await pilot.pause()
        assert view.collapsed and view.has_class("-collapsed") and "▶" in str(view.header.render())
        assert list(view.children) == [view.header]
        await pilot.press("ctrl+o")  # Claude Code's key expands it fully too
        await pilot.pause()
        assert not view.collapsed and len(view.children) == 2
        view.collapsed = False  # no change: no message
        r(SubagentBlockFinishedEvent(session_id="s", task_id="A", status="completed", short_result="done"))
        await pilot.pause()
        assert view.collapsed
        assert app.toggles == [("expanded", "A"), ("collapsed", "A"), ("expanded", "A"), ("collapsed", "A")]


def test_every_task_status_has_a_look() -> None:
    from agentcli.status import TASK_STATUSES
    from agentcli.ui.widgets.subagent_block import STATUS_LOOK

    assert set(STATUS_LOOK) == set(TASK_STATUSES)
