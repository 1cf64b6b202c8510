"""Diffs in the TUI: the approval of an edit shows what will change (numbered, coloured, scrollable), a finished
edit's line shows `+N −M` and expands to the diff of what it wrote; a file's text is never read as markup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.content import Content
from textual.widgets import Static

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.app import AgentApp
from agentcli.ui.model import BlockItem, ToolItem
from agentcli.ui.widgets.approval import ApprovalScreen
from agentcli.ui.widgets.tool_call import ToolCallView
from tests.ui.conftest import MAIN, SIZE, MakeApp, block_view, idle, screen_text, sub, submit, task, wait_for

NUMBERED = "".join(f"value_{n} = {n}\n" for n in range(1, 41))


def _edit_script(call: ToolCall, after: str = "") -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[call])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains=after), reply=Reply(text="done")),
    ])


def _static(screen: Any, selector: str) -> Content:
    rendered = screen.query_one(selector, Static).render()
    assert isinstance(rendered, Content)
    return rendered


def _tool_items(app: AgentApp) -> list[ToolItem]:
    return [entry for entry in app.router.main.items if isinstance(entry, ToolItem)]


async def _approval(pilot: Any, app: AgentApp) -> ApprovalScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval dialog")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, ApprovalScreen)
    return screen


async def test_an_edit_is_approved_over_its_diff_and_its_line_expands_to_it(
    make_app: MakeApp, workspace: Path
) -> None:
    (workspace / "src" / "values.py").write_text(NUMBERED)
    edit = ToolCall(name="Edit", input={"file_path": "src/values.py", "old_string": "value_20 = 20\n",
                                        "new_string": "value_20 = 'twenty'\n"})
    with FakeLLMServer(_edit_script(edit, "Applied 1 edit")) as server:
        app = make_app(server, mode="ask")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "change value 20")
            screen = await _approval(pilot, app)
            assert _static(screen, "#approval-diff-title").plain == "src/values.py  +1 \u22121"
            lines = _static(screen, "#approval-diff-lines").plain.splitlines()
            assert lines == [
                "      @@ -17,7 +17,7 @@",
                "17 17   value_17 = 17",
                "18 18   value_18 = 18",
                "19 19   value_19 = 19",
                "20    - value_20 = 20",
                "   20 + value_20 = 'twenty'",
                "21 21   value_21 = 21",
                "22 22   value_22 = 22",
                "23 23   value_23 = 23",
            ]
            text = screen_text(app).replace(" ", "")  # (the screenshot's text drops spaces between style runs)
            assert "20-value_20=20┃" in text and "20+value_20='twenty'┃" in text  # on the screen
            styles = {str(span.style) for span in _static(screen, "#approval-diff-lines").spans}
            assert {"on $error-muted", "on $success-muted", "dim"} <= styles  # red, green, dim headers
            assert (workspace / "src" / "values.py").read_text() == NUMBERED  # nothing written before the answer
            await pilot.press("y")
            await idle(pilot)

            (item,) = _tool_items(app)
            assert item.status == "ok" and item.diff is not None
            view = app.router.views.tool_view(item)
            assert isinstance(view, ToolCallView)
            header = str(view.render())
            assert header.startswith("✓ Edit  src/values.py  +1 \u22121")
            view.focus()
            await pilot.press("enter")
            expanded = str(view.render()).splitlines()
            assert expanded[0] == header
            assert expanded[1:] == lines  # the diff of what was written: the same as the one approved
            await pilot.press("enter")
            assert str(view.render()) == header
    server.assert_done()


async def test_a_call_that_will_fail_shows_why_instead_of_a_diff(make_app: MakeApp, workspace: Path) -> None:
    edit = ToolCall(name="Edit", input={"file_path": "src/config.py", "old_string": "not in the file",
                                        "new_string": "x"})
    with FakeLLMServer(_edit_script(edit, "declined")) as server:
        app = make_app(server, mode="ask")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "edit it")
            screen = await _approval(pilot, app)
            note = _static(screen, "#approval-preview-note").plain
            assert note.startswith("No diff to show: old_string not found in src/config.py")
            assert not screen.query("#approval-diff")
            await pilot.press("n")
            await idle(pilot)
    server.assert_done()


async def test_a_new_file_diff_scrolls_and_the_keys_still_answer(make_app: MakeApp, workspace: Path) -> None:
    content = "".join(f"line {n}\n" for n in range(1, 301))
    write = ToolCall(name="Write", input={"file_path": "notes/long.txt", "content": content})
    with FakeLLMServer(_edit_script(write, "Created notes/long.txt")) as server:
        app = make_app(server, mode="ask")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "write it")
            screen = await _approval(pilot, app)
            title = _static(screen, "#approval-diff-title").plain
            assert title == "notes/long.txt  +300 \u22120  new file  PageUp/PageDown scroll"
            lines = _static(screen, "#approval-diff-lines").plain.splitlines()
            assert lines[:2] == ["        @@ -0,0 +1,300 @@", "      1 + line 1"]
            assert lines[-1] == "    300 + line 300"
            scroll = screen.query_one("#approval-diff")
            assert scroll.max_scroll_y > 0  # longer than the dialog: it scrolls
            assert app.focused is not None and app.focused.id == "deny"
            await pilot.press("pagedown")
            await wait_for(pilot, lambda: scroll.scroll_y > 0, what="the diff to scroll down")
            await pilot.press("y")  # the answer keys still work
            await idle(pilot)
            assert (workspace / "notes" / "long.txt").read_text() == content
            (item,) = _tool_items(app)
            view = app.router.views.tool_view(item)
            assert view is not None
            assert str(view.render()).startswith("✓ Write  notes/long.txt (300 lines)  +300 \u22120")
            view.focus()
            await pilot.press("enter")
            shown = str(view.render()).splitlines()
            assert shown[-1] == "… 101 more lines"  # the transcript shows 200 lines (with the hunk header)
    server.assert_done()


async def test_file_text_with_markup_and_escapes_shows_literally(make_app: MakeApp, workspace: Path) -> None:
    hostile = "title = '[bold red]ALERT[/bold red] [link=http://x]y[/link] $accent'\nesc = '\x1b[31mred\x1b]0;t\x07'\n"
    (workspace / "src" / "hostile.py").write_text(hostile)
    edit = ToolCall(name="Edit", input={"file_path": "src/hostile.py", "old_string": "ALERT", "new_string": "[/]"})
    with FakeLLMServer(_edit_script(edit, "Applied 1 edit")) as server:
        app = make_app(server, mode="ask")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "edit it")
            screen = await _approval(pilot, app)
            diff = _static(screen, "#approval-diff-lines")
            assert "1   - title = '[bold red]ALERT[/bold red] [link=http://x]y[/link] $accent'" in diff.plain
            assert "  1 + title = '[bold red][/][/bold red] [link=http://x]y[/link] $accent'" in diff.plain
            assert "esc = '␛[31mred␛]0;t␇'" in diff.plain  # escape sequences made visible
            assert "\x1b" not in diff.plain and "\x07" not in diff.plain
            assert not any("red" in str(span.style) or "link" in str(span.style) for span in diff.spans)
            assert "[boldred]ALERT[/boldred]" in screen_text(app).replace(" ", "")
            await pilot.press("y")
            await idle(pilot)
            (item,) = _tool_items(app)
            view = app.router.views.tool_view(item)
            assert view is not None
            view.focus()
            await pilot.press("enter")
            rendered = view.render()
            assert isinstance(rendered, Content)
            assert "[bold red][/][/bold red] [link=http://x]y[/link]" in rendered.plain
            assert not any("red" in str(span.style) or "link" in str(span.style) for span in rendered.spans)
    server.assert_done()


async def test_a_subagents_edit_shows_its_counts_in_the_block(make_app: MakeApp, workspace: Path) -> None:
    edit = ToolCall(name="Edit", input={"file_path": "src/auth.py", "old_string": "'admin'",
                                        "new_string": "'root'"})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Fix the login", "use root", "general")])),
        Step(match=Match(system_contains=sub("Fix the login"), turn=0), reply=Reply(tool_calls=[edit])),
        Step(match=Match(system_contains=sub("Fix the login"), turn=1), reply=Reply(text="fixed")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, mode="auto")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "fix login")
            await idle(pilot)
            (block,) = [entry for entry in app.router.main.items if isinstance(entry, BlockItem)]
            assert block.collapsed  # finished: folded to its header; expanding rebuilds its lines from the model
            block_view(app, block).collapsed = False
            await wait_for(pilot, lambda: [v for v in app.query(ToolCallView) if v.item.name == "Edit"])
            (view,) = [v for v in app.query(ToolCallView) if v.item.name == "Edit"]
            assert str(view.render()).startswith("✓ Edit  src/auth.py  +1 \u22121")
    server.assert_done()
