"""`/rewind`, `/undo`, `/redo` and Esc Esc in the TUI (Textual pilot, real Conversation, fake server, real checkpoints
in a shadow git repository under the test's $XDG_DATA_HOME, real SQLite): the prompt picker, the mode, the preview
with each file's diff, the person's own changes kept unless `o`, the files back byte for byte, the transcript
drawn again and the rewound prompt back in the input."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList, Static

from agentcli.store.db import Store
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.app import AgentApp
from agentcli.ui.model import NoteItem, TextItem
from agentcli.ui.widgets.full_diff import DiffLines, FullDiffScreen
from agentcli.ui.widgets.rewind_screen import ModePicker, RewindPicker, RewindPreviewScreen
from agentcli.ui.widgets.status_bar import REWIND_ARMED
from tests.ui.conftest import SIZE, MakeApp, idle, notes, submit, wait_for

CONFIG = b"def load_config():\n    return {'debug': True}\n"
AUTH = b"def login(user):\n    return user == 'admin'\n"


def _edit(path: str, old: str, new: str) -> ToolCall:
    return ToolCall(name="Edit", input={"file_path": path, "old_string": old, "new_string": new})


def _job(prompt: str, calls: list[ToolCall], answer: str) -> list[Step]:
    """One prompt: the model makes `calls`, then says `answer`."""
    return [
        Step(match=Match(last_user_contains=prompt, last_user_is_tool_result=False), reply=Reply(tool_calls=calls)),
        Step(match=Match(last_user_is_tool_result=True, any_message_contains=prompt), reply=Reply(text=answer)),
    ]


def _two_jobs() -> Script:
    return Script(steps=[
        *_job("first job", [ToolCall(name="Write", input={"file_path": "notes/todo.txt", "content": "agent wrote\n"}),
                            _edit("src/config.py", "True", "False")], "First done."),
        *_job("second job", [_edit("src/auth.py", "'admin'", "'root'")], "Second done."),
    ])


def _user_notes(app: AgentApp) -> list[str]:
    return [e.text for e in app.router.main.items if isinstance(e, NoteItem) and e.kind == "user"]


def _answers(app: AgentApp) -> list[str]:
    return [e.text for e in app.router.main.items if isinstance(e, TextItem)]


def _labels(screen: object, selector: str) -> list[str]:
    options = screen.query_one(selector, OptionList)  # type: ignore[attr-defined]
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def _run_two_jobs(pilot: object, app: AgentApp, workspace: Path) -> None:
    await submit(pilot, "first job")  # type: ignore[arg-type]
    await idle(pilot)  # type: ignore[arg-type]
    await submit(pilot, "second job")  # type: ignore[arg-type]
    await idle(pilot)  # type: ignore[arg-type]
    assert (workspace / "src" / "auth.py").read_bytes() == AUTH.replace(b"'admin'", b"'root'")
    assert _answers(app) == ["First done.", "Second done."]


async def test_rewind_picks_a_prompt_a_mode_previews_each_file_and_its_diff_then_puts_everything_back(
    make_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    with FakeLLMServer(_two_jobs()) as server:
        app = make_app(server, mode="accept_edits", store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await _run_two_jobs(pilot, app, workspace)

            await submit(pilot, "/rewind")
            await wait_for(pilot, lambda: isinstance(app.screen, RewindPicker), what="the prompt picker")
            picker = app.screen
            labels = _labels(picker, "#rewind-points")
            assert len(labels) == 2
            assert labels[0].startswith("#1 ") and "first job" in labels[0] and labels[0].endswith("2 files changed")
            assert "second job" in labels[1] and labels[1].endswith("1 file changed")
            assert picker.query_one(OptionList).highlighted == 1  # the newest, at the bottom
            await pilot.press("up", "enter")

            await wait_for(pilot, lambda: isinstance(app.screen, ModePicker), what="the mode question")
            assert _labels(app.screen, "#rewind-mode") == ["code and conversation", "conversation only", "code only"]
            await pilot.press("enter")

            await wait_for(pilot, lambda: isinstance(app.screen, RewindPreviewScreen), what="the preview")
            preview = app.screen
            assert isinstance(preview, RewindPreviewScreen)
            assert sorted(_labels(preview, "#rewind-files")) == [
                "D notes/todo.txt  removed", "M src/auth.py  put back as it was", "M src/config.py  put back as it was"]
            assert not preview.query("#rewind-person")  # nothing of the person's in the way
            files = preview.query_one("#rewind-files", OptionList)
            files.highlighted = next(i for i, f in enumerate(preview.preview.files) if f.path == "src/config.py")
            await pilot.press("d")
            await wait_for(pilot, lambda: isinstance(app.screen, FullDiffScreen), what="the file's diff")
            lines = app.screen.query_one(DiffLines)
            shown = [lines.text_of(i) for i in range(len(lines.lines))]
            assert any(line.endswith("- " + "    return {'debug': False}") for line in shown), shown
            assert any(line.endswith("+ " + "    return {'debug': True}") for line in shown), shown
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is preview, what="back to the preview")
            assert (workspace / "src" / "auth.py").read_bytes() != AUTH  # nothing changed before the answer

            await pilot.press("enter")
            await wait_for(pilot, lambda: any(n.startswith("rewound") for n in notes(app)), what="the rewind")
            await idle(pilot)
            assert (workspace / "src" / "config.py").read_bytes() == CONFIG
            assert (workspace / "src" / "auth.py").read_bytes() == AUTH
            assert not (workspace / "notes" / "todo.txt").exists()
            assert app.prompt.text == "first job" and app.focused is app.prompt  # back to edit
            assert _user_notes(app) == [] and _answers(app) == []  # the transcript as the conversation now is
            assert app.conversation.session.messages == []
            assert notes(app)[-1] == ("rewound (code and conversation) to “first job”: 3 files changed, "
                                      "8 messages taken back")
    server.assert_done()


async def test_a_file_the_person_changed_since_is_kept_unless_o(
    make_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    with FakeLLMServer(_two_jobs()) as server:
        app = make_app(server, mode="accept_edits", store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await _run_two_jobs(pilot, app, workspace)
            mine = b"# the person's own line\n" + AUTH.replace(b"'admin'", b"'root'")
            (workspace / "src" / "auth.py").write_bytes(mine)  # between turns: the person's change

            for key, auth in (("enter", mine), ("o", AUTH)):  # Enter keeps it; after /redo, `o` overwrites it
                await submit(pilot, "/rewind")
                await wait_for(pilot, lambda: isinstance(app.screen, RewindPicker))
                await pilot.press("enter")  # the newest prompt: "second job"
                await wait_for(pilot, lambda: isinstance(app.screen, ModePicker))
                await pilot.press("down", "down", "enter")  # code only
                await wait_for(pilot, lambda: isinstance(app.screen, RewindPreviewScreen))
                preview = app.screen
                assert _labels(preview, "#rewind-files") == [
                    "M src/auth.py  put back as it was  ✎ changed by you since: kept unless you press o"]
                said = str(preview.query_one("#rewind-person", Static).render())
                assert said == ("1 of them was changed by you since that prompt: Enter keeps it as it is, "
                                "o overwrites it too.")
                count = len(notes(app))
                await pilot.press(key)
                await wait_for(pilot, lambda n=count: len(notes(app)) > n and notes(app)[-1].startswith("rewound"))
                assert (workspace / "src" / "auth.py").read_bytes() == auth
                assert app.prompt.text == ""  # code only: the conversation (and the input) stay
                if key == "enter":
                    assert notes(app)[-1] == (
                        "rewound (code only) to “second job”: 0 files changed, 1 file left as it is\n"
                        "  src/auth.py: kept (changed outside an agent's turn since the checkpoint)")
                    await submit(pilot, "/redo")
                    await wait_for(pilot, lambda: notes(app)[-1].startswith("redone"))
                    assert (workspace / "src" / "auth.py").read_bytes() == mine
            assert _answers(app) == ["First done.", "Second done."]
    server.assert_done()


async def test_undo_takes_back_the_last_prompt_and_redo_brings_the_agents_change_back(
    make_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    with FakeLLMServer(_two_jobs()) as server:
        app = make_app(server, mode="accept_edits", store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await _run_two_jobs(pilot, app, workspace)
            changed = (workspace / "src" / "auth.py").read_bytes()

            await submit(pilot, "/undo")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("rewound"), what="the undo")
            await idle(pilot)
            assert notes(app)[-1] == ("rewound (code and conversation) to “second job”: 1 file changed, "
                                      "4 messages taken back")
            assert (workspace / "src" / "auth.py").read_bytes() == AUTH
            assert _user_notes(app) == ["first job"] and _answers(app) == ["First done."]
            assert app.prompt.text == "second job"

            await submit(pilot, "/undo")  # again: the prompt before it (the one undone is no longer there)
            await wait_for(pilot, lambda: "“first job”" in notes(app)[-1], what="the second undo")
            await idle(pilot)
            assert (workspace / "src" / "config.py").read_bytes() == CONFIG
            assert not (workspace / "notes" / "todo.txt").exists()
            assert _user_notes(app) == [] and app.prompt.text == "first job"

            await submit(pilot, "/redo")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("redone"), what="the redo")
            await submit(pilot, "/redo")
            await wait_for(pilot, lambda: notes(app)[-1] == "redone: 1 file changed, 4 messages put back",
                           what="the second redo")
            await idle(pilot)
            assert (workspace / "src" / "auth.py").read_bytes() == changed
            assert (workspace / "notes" / "todo.txt").read_bytes() == b"agent wrote\n"
            assert _user_notes(app) == ["first job", "second job"]
            assert _answers(app) == ["First done.", "Second done."]

            await submit(pilot, "/redo")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("/redo:"))
            assert notes(app)[-1] == "/redo: nothing to redo: no rewind since the last prompt"
    server.assert_done()


async def test_esc_esc_in_the_empty_prompt_opens_the_picker_while_nothing_runs(
    make_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    script = Script(steps=_job("first job", [_edit("src/config.py", "True", "False")], "First done."))
    with FakeLLMServer(script) as server:
        app = make_app(server, mode="accept_edits", store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "/rewind")
            await wait_for(pilot, lambda: bool(notes(app)) and notes(app)[-1].startswith("Nothing to rewind"))
            await submit(pilot, "first job")
            await idle(pilot)

            await pilot.press("escape")
            await pilot.pause()
            status = app.status_bar.shown
            assert app.rewind_armed and status is not None and status.state == REWIND_ARMED
            await pilot.press("x", "escape")  # another key between: the first Esc is taken back
            await pilot.pause()
            assert app.screen is app.screen_stack[0] and not app.rewind_armed and app.prompt.text == "x"
            app.prompt.load_text("")
            await pilot.press("escape", "escape")
            await wait_for(pilot, lambda: isinstance(app.screen, RewindPicker), what="the picker")
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is app.screen_stack[0])
            assert (workspace / "src" / "config.py").read_bytes() == CONFIG.replace(b"True", b"False")
    server.assert_done()


async def test_rewind_undo_and_redo_wait_for_the_turn_to_end(make_app: MakeApp, tmp_path: Path) -> None:
    script = Script(steps=[Step(match=Match(last_user_contains="slow job"), reply=Reply(text="Slow done."),
                                hold="slow")])
    with FakeLLMServer(script) as server:
        app = make_app(server, store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "slow job")
            await wait_for(pilot, lambda: len(server.requests) == 1, what="the request")
            for command in ("rewind", "undo", "redo"):
                await submit(pilot, f"/{command}")
                await wait_for(pilot, lambda c=command: notes(app)[-1].startswith(f"/{c}:"))
                assert notes(app)[-1] == f"/{command}: a turn is running; press Esc to stop it first"
            assert app.screen is app.screen_stack[0]
            server.release("slow")
            await idle(pilot)
            assert _answers(app) == ["Slow done."]
    server.assert_done()
