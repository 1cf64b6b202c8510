"""An edit's new errors and warnings (its language server's, `ToolCallFinishedEvent.diagnostics`) under its tool
line in the TUI: red and yellow, capped, shown collapsed and above the diff when expanded; server text is never
markup and never moves the cursor."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.pilot import Pilot

from agentcli.diffs import diff_text
from agentcli.events import ToolCallFinishedEvent, ToolCallStartedEvent
from agentcli.ui.model import ToolItem
from agentcli.ui.widgets.tool_call import MAX_DIAGNOSTIC_LINES, ToolCallView
from tests.ui.test_router import RouterApp, settle


def _found(n: int, severity: str = "error", **extra: Any) -> dict[str, Any]:
    return {"path": "src/app.py", "line": n, "column": 5, "severity": severity, "message": f"problem {n}",
            "source": "basedpyright", "code": "reportX", **extra}


async def _edit(app: RouterApp, pilot: Pilot[None], call_id: str, diagnostics: list[dict[str, Any]]
                ) -> ToolCallView:
    """An Edit's line, started and finished with `diagnostics`, as mounted."""
    r = app.router
    r(ToolCallStartedEvent(session_id="s", tool_call_id=call_id, name="Edit", args={}, summary="src/app.py"))
    r(ToolCallFinishedEvent(session_id="s", tool_call_id=call_id, name="Edit", is_error=False, output="Applied",
                            duration_ms=12, diff=diff_text("src/app.py", "x = 1\n", "x = 'a'\n"),
                            diagnostics=diagnostics))
    item = r.main.items[-1]
    assert isinstance(item, ToolItem)
    await settle(pilot, r)
    view = r.views.tool_view(item)
    assert isinstance(view, ToolCallView)
    return view


def _rendered(view: ToolCallView) -> Content:
    rendered = view.render()
    assert isinstance(rendered, Content)
    return rendered


async def test_an_edits_new_errors_and_warnings_show_under_its_line() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        view = await _edit(app, pilot, "e1", [_found(2), _found(1, "warning", code="", source="")])
        lines = str(view.render()).splitlines()
        assert lines[0].startswith("✓ Edit  src/app.py  +1 \u22121")
        assert lines[1:] == ["  error src/app.py:2:5 problem 2 [basedpyright reportX]",
                             "  warning src/app.py:1:5 problem 1"]
        styles = {str(span.style) for span in _rendered(view).spans}
        assert {"$text-error", "$text-warning", "bold $text-error", "bold $text-warning"} <= styles
        view.focus()
        await pilot.press("enter")  # expanded: the findings stay under the line, the diff below them
        expanded = str(view.render()).splitlines()
        assert expanded == [*lines, "    @@ -1 +1 @@", "1   - x = 1", "  1 + x = 'a'"]
        await pilot.press("enter")
        assert str(view.render()).splitlines() == lines


async def test_many_findings_are_capped_and_a_clean_edit_has_none() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        many = await _edit(app, pilot, "e1", [_found(n) for n in range(1, 9)])
        clean = await _edit(app, pilot, "e2", [])
        lines = str(many.render()).splitlines()
        assert len(lines) == 1 + MAX_DIAGNOSTIC_LINES + 1
        assert lines[-1] == f"  … and {8 - MAX_DIAGNOSTIC_LINES} more"
        assert str(clean.render()).splitlines() == [str(clean.render())]  # one line, as before


async def test_server_text_is_shown_as_text() -> None:
    app = RouterApp()
    async with app.run_test() as pilot:
        view = await _edit(app, pilot, "e1", [_found(3, message="[bold]x[/bold] \x1b[2J\nsecond  line"),
                                              _found(4, severity="\x1b[31mfatal")])
        (_, shown, odd) = str(view.render()).splitlines()
        assert "[bold]x[/bold]" in shown and "\x1b" not in shown and "second line" in shown
        assert "\x1b" not in odd and odd.endswith("src/app.py:4:5 problem 4 [basedpyright reportX]")
