"""The prompt's conveniences in the running TUI: @path attachments and completion, /command completion,
!commands, the queue, persisted history with Ctrl+R, notifications, /copy and /export."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.app import AgentApp
from agentcli.ui.model import NoteItem, ToolItem
from agentcli.ui.prompt_history import history_file
from agentcli.ui.widgets.approval import ApprovalScreen
from agentcli.ui.widgets.message_list import NoteLine
from tests.ui.conftest import MAIN, SIZE, MakeApp, idle, notes, screen_text, sub, submit, task, wait_for


def _notes_of(app: AgentApp, kind: str) -> list[str]:
    return [e.text for e in app.router.main.items if isinstance(e, NoteItem) and e.kind == kind]


def _sent(server: FakeLLMServer, index: int) -> str:
    return str(server.requests[index].body["messages"])


async def _type(pilot: Pilot[Any], text: str) -> None:
    """Type `text` key by key, as a person does (completion follows typed keys only)."""
    keys = {" ": "space", "@": "at", "/": "slash", ".": "full_stop", "!": "exclamation_mark", '"': "quotation_mark"}
    await pilot.press(*[keys.get(ch, ch) for ch in text])


async def test_an_at_mention_completes_and_attaches_the_file(make_app: MakeApp, workspace: Path) -> None:
    step = Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="def login(user)"),
                reply=Reply(text="It checks for admin."))
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await _type(pilot, "explain @src/au")
            listing = app.prompt.completions
            await wait_for(pilot, lambda: listing.shown, what="the path index to be built and the list shown")
            assert [c.label for c in listing.candidates] == ["src/auth.py"]
            assert "src/auth.py" in screen_text(app)
            await pilot.press(*["backspace"] * 4)  # back to `@s`: folders complete, and the list goes on inside
            await wait_for(pilot, lambda: [c.label for c in listing.candidates][:1] == ["src/"])
            await pilot.press("tab")
            assert app.prompt.text == "explain @src/"
            await wait_for(pilot, lambda: [c.label for c in listing.candidates] == ["src/auth.py", "src/config.py"])
            await pilot.press("tab")
            assert app.prompt.text == "explain @src/auth.py " and not listing.shown
            await pilot.press("enter")
            await idle(pilot)
            assert notes(app)[-2:] == ["explain @src/auth.py", "📎 src/auth.py (2 lines)"]
            assert app.query(NoteLine).filter(".-attachment").last().item.text == "📎 src/auth.py (2 lines)"
            sent = server.requests[0].body["messages"][-1]["content"]
            assert sent[0]["text"] == "explain @src/auth.py"  # the prompt as typed, then the framed file
            assert sent[1]["text"].startswith('<attached_file path="src/auth.py">\n     1\tdef login(user):')
    server.assert_done()


async def test_a_mention_obeys_reads_deny_rules_and_confinement(make_app: MakeApp, workspace: Path) -> None:
    (workspace / ".env").write_text("SECRET_TOKEN=hunter2-very-secret\n")
    (workspace.parent / "outside.txt").write_text("not in the workspace\n")
    step = Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="ok"))
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server, AGENTCLI_PERMISSIONS__DENY='["Read(.env)"]')
        async with app.run_test(size=SIZE) as pilot:
            await _type(pilot, "@.e")
            await wait_for(pilot, lambda: app.prompt.paths is not None and not app.prompt.paths.stale)
            assert ".env" not in app.prompt.paths.entries  # type: ignore[union-attr]
            app.prompt.load_text("")
            await submit(pilot, "look at @.env and @../outside.txt and @property")
            await idle(pilot)
            (lines,) = _notes_of(app, "attachment")
            assert lines.splitlines() == [
                "📎 .env not attached: a [permissions] deny rule blocks reading it",
                "📎 ../outside.txt not attached: Path ../outside.txt is outside the workspace "
                f"({workspace.resolve()}); file tools only work inside it",
            ]
            assert "hunter2" not in _sent(server, 0) and "not in the workspace" not in _sent(server, 0)
    server.assert_done()


async def test_slash_commands_complete(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await _type(pilot, "/co")
            listing = app.prompt.completions
            assert [c.label for c in listing.candidates] == ["/cost", "/compact", "/copy"]
            await pilot.press("down", "down")
            assert listing.selected is not None and listing.selected.label == "/copy"
            await pilot.press("escape")  # closes the list; it stays closed while the text is the same
            assert not listing.shown and app.prompt.text == "/co"
            await pilot.press("s")
            assert [c.label for c in listing.candidates] == ["/cost"]
            await pilot.press("enter")  # Enter takes an incomplete word's completion
            assert app.prompt.text == "/cost "
            await pilot.press("enter")  # and sends a complete one
            await pilot.pause()
            assert notes(app)[-1].startswith("Tokens:")
            await _type(pilot, "see @nothing-matches")
            await pilot.press("tab")  # in a word being completed Tab never moves focus away, list or not
            await _type(pilot, "x")
            assert app.focused is app.prompt and app.prompt.text == "see @nothing-matchesx"


COMMAND = "printf 'hello-from-bash\\n\\033[31mred\\n'; echo key=${ANTHROPIC_API_KEY:-none}; pwd"


async def test_a_bang_command_runs_through_bash_and_rides_with_the_next_prompt(
    make_app: MakeApp, workspace: Path
) -> None:
    step = Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="what did it print?"),
                reply=Reply(text="It printed a greeting."))
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server, ANTHROPIC_API_KEY="sk-ant-ui-test")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, f"!{COMMAND}")
            await wait_for(pilot, lambda: bool(_notes_of(app, "shell")))
            (output,) = _notes_of(app, "shell")
            assert output.splitlines() == ["hello-from-bash", "␛[31mred", "key=none", str(workspace.resolve()),
                                           "(exit 0; added to the context of your next prompt)"]
            assert "\x1b" not in screen_text(app)
            await submit(pilot, "!exit 3")
            await wait_for(pilot, lambda: len(_notes_of(app, "shell")) == 2)
            assert _notes_of(app, "shell")[1] == "(no output)\n(exit 3; added to the context of your next prompt)"
            assert not server.requests  # nothing went to the model
            await submit(pilot, "what did it print?")
            await idle(pilot)
            sent = server.requests[0].body["messages"][-1]["content"]
            assert [b["text"].split("\n")[0] for b in sent[:3]] == [
                "what did it print?",
                f'<person_command command="{COMMAND}" status="exit 0">',
                '<person_command command="exit 3" status="exit 3">',
            ]
            assert "hello-from-bash" in sent[1]["text"]
    server.assert_done()


GATE_COMMAND = "while [ ! -f gate ]; do sleep 0.02; done; echo through"


async def test_a_prompt_typed_during_a_turn_is_queued_editable_and_sent_when_it_ends(
    make_app: MakeApp, workspace: Path
) -> None:
    steps = [
        Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="first"),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": GATE_COMMAND})])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_is_tool_result=True), reply=Reply(text="done 1")),
        Step(match=Match(system_contains=MAIN, turn=2, last_user_contains="second, edited"),
             reply=Reply(text="done 2")),
    ]
    with FakeLLMServer(Script(steps=steps)) as server:
        app = make_app(server, mode="auto")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "first")
            await wait_for(pilot, lambda: any(isinstance(e, ToolItem) for e in app.router.main.items))
            await submit(pilot, "second")
            assert app.prompt.queued == ["second"] and app.prompt.text == ""
            await pilot.pause()
            assert "⏸ queued: second" in screen_text(app)
            await pilot.press("up")  # an empty prompt takes the queued one back
            assert app.prompt.text == "second" and app.prompt.queued == []
            await pilot.press("end", "comma", "space", "e", "d", "i", "t", "e", "d", "enter")
            assert app.prompt.queued == ["second, edited"]
            (workspace / "gate").write_text("")
            await wait_for(pilot, lambda: len(server.requests) == 3, what="the queued prompt to be sent")
            await idle(pilot)
            assert notes(app)[-1] == "second, edited" and not app.prompt.queued
            assert "⏸ queued" not in screen_text(app)
    server.assert_done()


async def test_history_persists_per_workspace_and_ctrl_r_searches_it(make_app: MakeApp, workspace: Path) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        first = make_app(server)
        async with first.run_test(size=SIZE) as pilot:
            for line in ("/help", "/cost", "/tasks"):
                await submit(pilot, line)
        path = history_file(workspace)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        second = make_app(server)
        async with second.run_test(size=SIZE) as pilot:
            prompt = second.prompt
            await pilot.press("up")
            assert prompt.text == "/tasks"  # from the earlier session
            prompt.load_text("draft")
            await pilot.pause()
            assert "History search" in screen_text(second)  # the footer offers it while the prompt has focus
            await pilot.press("ctrl+r", "h", "e")
            assert prompt.searching and prompt.text == "/help" and "history search: 'he'" in str(prompt.border_title)
            await pilot.press("ctrl+r")  # no older match: it stays, and says so
            assert prompt.text == "/help" and "no match" in str(prompt.border_title)
            await pilot.press("escape")  # gives back the draft
            assert not prompt.searching and prompt.text == "draft"
            await pilot.press("ctrl+r", "c", "o")
            assert prompt.text == "/cost"
            await pilot.press("enter")  # takes the match; does not send it
            assert not prompt.searching and prompt.text == "/cost" and notes(second)[-1] != "Tokens:"
            assert prompt.border_title is None


async def test_an_approval_and_a_long_turn_ring_the_bell(make_app: MakeApp) -> None:
    steps = [
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": "true"})])),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ]
    with FakeLLMServer(Script(steps=steps)) as server:
        app = make_app(server, mode="ask", AGENTCLI_UI__NOTIFY_AFTER_SECONDS="0")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "run it")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            assert app.notifier.sent == ["\x07"]
            await pilot.press("y")
            await idle(pilot)
            assert app.notifier.sent == ["\x07", "\x07"]  # the turn took at least notify_after_seconds = 0
    server.assert_done()


async def test_notifications_can_be_off(make_app: MakeApp) -> None:
    step = Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="done"))
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server, AGENTCLI_UI__NOTIFY="off", AGENTCLI_UI__NOTIFY_AFTER_SECONDS="0")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "go")
            await idle(pilot)
            assert app.notifier.sent == []
    server.assert_done()


CODE_ANSWER = "Use this:\n\n```python\nprint('copied')\n```\n"


async def test_copy_the_last_answer_and_its_code_block(make_app: MakeApp) -> None:
    step = Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text=CODE_ANSWER))
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "/copy")
            assert notes(app)[-1] == "/copy: there is no last answer yet"
            await submit(pilot, "show me")
            await idle(pilot)
            await submit(pilot, "/copy")
            await pilot.pause()
            assert app.clipboard == CODE_ANSWER.strip()
            assert notes(app)[-1].startswith("Copied the last answer (5 lines)")
            await submit(pilot, "/copy code")
            await pilot.pause()
            assert app.clipboard == "print('copied')"
            await submit(pilot, "/copy all")
            await pilot.pause()
            assert app.clipboard.startswith("# agentcli transcript") and "## You\n\nshow me" in app.clipboard
    server.assert_done()


async def test_export_writes_the_transcript_with_subagent_blocks_summarised(make_app: MakeApp, workspace: Path) -> None:
    steps = [
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Find auth code", "find where login is checked")])),
        Step(match=Match(system_contains=sub("Find auth code")), reply=Reply(text="Login is checked in src/auth.py.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="The explorer found it.")),
    ]
    with FakeLLMServer(Script(steps=steps)) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "where is login checked?")
            await idle(pilot)
            await submit(pilot, "/export out/transcript.md")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("Exported"))
            assert notes(app)[-1].startswith("Exported the transcript to out/transcript.md")
            text = (workspace / "out" / "transcript.md").read_text()
            assert "## You\n\nwhere is login checked?" in text
            assert "**Subagent explore#1** (explore, " in text and ": Find auth code · completed · " in text
            assert "> Login is checked in src/auth.py." in text and "The explorer found it." in text
            await submit(pilot, "/export out/transcript.md")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("/export"))
            assert notes(app)[-1] == "/export: out/transcript.md exists; /export out/transcript.md --force replaces it"
            await submit(pilot, "/export ../escape.md")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("/export: Path"))
            assert not (workspace.parent / "escape.md").exists()
    server.assert_done()


async def test_a_resumed_transcript_shows_the_prompt_and_its_attachment_lines_not_the_files(
    make_app: MakeApp, tmp_path: Path
) -> None:
    from agentcli.store.db import Store

    steps = [
        Step(match=Match(last_user_contains="def login(user)"), reply=Reply(text="Read it.")),
        Step(match=Match(last_user_contains="something else"), reply=Reply(text="Other.")),
    ]
    with FakeLLMServer(Script(steps=steps)) as server:
        app = make_app(server, store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "read @src/auth.py")
            await idle(pilot)
            first = app.conversation.session.id
            await submit(pilot, "/new")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("Started a new session."))
            await submit(pilot, "something else")
            await idle(pilot)
            await submit(pilot, f"/resume {first}")
            await wait_for(pilot, lambda: any(n.startswith("Resumed session") for n in notes(app)))
            await idle(pilot)
            assert notes(app)[:2] == ["read @src/auth.py", "📎 src/auth.py (attached)"]
            assert "def login" not in " ".join(notes(app))
    server.assert_done()


async def test_esc_stops_a_running_bang_command(make_app: MakeApp, workspace: Path) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "!touch started; sleep 60; touch finished")
            await wait_for(pilot, lambda: (workspace / "started").exists())
            await pilot.press("escape")
            await wait_for(pilot, lambda: notes(app)[-1] == "! touch started; sleep 60; touch finished: stopped.")
            assert not any(w.group == "shell" and not w.is_finished for w in app.workers)
            assert not (workspace / "finished").exists() and not _notes_of(app, "shell")
