"""`/new` and `/resume` in the TUI (Textual pilot, real Conversation, fake server): the picker, the restored
transcript with its finished subagent block collapsed (its record and transcript inside), model, usage totals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import OptionList

from agentcli.store.db import Store
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.app import AgentApp
from agentcli.ui.model import BlockItem, TextItem, ToolItem, result_line
from agentcli.ui.widgets.session_picker import SessionPicker
from tests.ui.conftest import MAIN, SIZE, MakeApp, block_view, idle, notes, shown, sub, submit, task, wait_for


async def test_new_then_resume_from_the_picker_restores_the_history_the_model_and_the_spend(
    make_app: MakeApp, tmp_path: Path
) -> None:
    script = Script(steps=[
        Step(match=Match(last_user_contains="remember the codeword PELICAN"), reply=Reply(text="Noted: PELICAN.")),
        Step(match=Match(last_user_contains="an unrelated job"), reply=Reply(text="Unrelated, done.")),
        Step(match=Match(last_user_contains="what was the codeword", any_message_contains="PELICAN"),
             reply=Reply(text="It was PELICAN.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "remember the codeword PELICAN")
            await idle(pilot)
            first = app.conversation.session
            spent = first.ledger.total
            await submit(pilot, "/model light")
            await wait_for(pilot, lambda: app.conversation.model.display == "light")

            await submit(pilot, "/new")
            await wait_for(pilot, lambda: bool(notes(app)) and notes(app)[-1].startswith("Started a new session."))
            assert notes(app) == [f"Started a new session. /resume {first.id} goes back to the last one."]
            assert app.conversation.session.id != first.id
            assert app.conversation.session.ledger.total.requests == 0
            await submit(pilot, "an unrelated job")
            await idle(pilot)
            second = app.conversation.session.id

            await submit(pilot, "/resume")
            await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), what="the session picker")
            picker: Any = app.screen
            assert [sid for sid, _ in picker.choices] == [first.id]  # the current session is not offered
            label = picker.choices[0][1]
            assert "remember the codeword PELICAN" in label and first.id in label
            options = picker.query_one(OptionList)
            options.highlighted = 0
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.conversation.session.id == first.id, what="the resume")
            await wait_for(pilot, lambda: any(n.startswith("Resumed session") for n in notes(app)))
            await idle(pilot)

            session = app.conversation.session
            assert session.next_seq == 2 and len(session.messages) == 2
            assert session.ledger.total == spent  # the stored spend, not zero
            assert app.conversation.model.display == "main"  # its own model, not the one /model chose later
            assert notes(app)[0] == "remember the codeword PELICAN"
            texts = [e for e in app.router.main.items if isinstance(e, TextItem)]
            assert [t.text for t in texts] == ["Noted: PELICAN."] and shown(app, texts[0]) is not None
            assert "an unrelated job" not in " ".join(notes(app))

            await submit(pilot, "what was the codeword?")
            await idle(pilot)
            assert app.conversation.session.id == first.id
            assert app.conversation.session.ledger.total.requests == 2

            await submit(pilot, f"/resume {first.id}")
            await wait_for(pilot, lambda: notes(app)[-1].startswith("/resume:"))
            assert notes(app)[-1] == f"/resume: session {first.id} is the current session"
            await submit(pilot, f"/resume {second}")
            await wait_for(pilot, lambda: app.conversation.session.id == second)
    server.assert_done()


async def test_resume_by_id_shows_the_finished_subagent_block_collapsed_with_its_record(
    make_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(text="Delegating.", tool_calls=[task("Find config loader", "Where is load_config?")])),
        Step(match=Match(system_contains=sub("Find config loader"), turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "src/config.py"})])),
        Step(match=Match(system_contains=sub("Find config loader"), turn=1), reply=Reply(text="src/config.py:1")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="It is in src/config.py.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "where is the config loaded?")
            await idle(pilot)
            first = app.conversation.session.id
            spent = app.conversation.session.ledger
            (live,) = app.router.blocks.values()
            await submit(pilot, "/new")
            await wait_for(pilot, lambda: app.conversation.session.id != first)
            await submit(pilot, "/tasks")
            assert notes(app)[-1] == "No tasks in this session yet."

            await submit(pilot, f"/resume {first[:10]}")
            await wait_for(pilot, lambda: any(n.startswith("Resumed session") for n in notes(app)))
            await idle(pilot)
            assert app.conversation.session.ledger.own == spent.own
            assert app.conversation.session.ledger.delegated == spent.delegated

            (block,) = [e for e in app.router.main.items if isinstance(e, BlockItem)]
            assert block is not live and app.router.blocks == {block.task_id: block}
            assert (block.task_id, block.status, block.collapsed) == (live.task_id, "completed", True)
            assert block.short_result == "Task completed by explore"
            assert block.agent == "explore#1" and block.model == "light"
            assert block.tool_calls == 1 and block.input_tokens == live.input_tokens > 0
            view = block_view(app, block)
            assert view.collapsed and not view.accepts_entries
            header = str(view.header_content())
            assert block.result and "Find config loader" in header and result_line(block.result) in header
            (read,) = [e for e in block.items if isinstance(e, ToolItem)]
            assert read.name == "Read" and read.status == "ok" and "load_config" in read.output
            assert shown(app, read) is None  # collapsed: its transcript stays in the model

            view.collapsed = False  # expanded: the subagent's transcript is built from the model
            await pilot.pause()
            await wait_for(pilot, lambda: shown(app, read) is not None, what="the block's body")
            await submit(pilot, "/tasks")
            assert live.task_id in notes(app)[-1] and "completed" in notes(app)[-1]
    server.assert_done()


async def test_the_app_opens_the_picker_first_for_a_bare_resume_and_esc_keeps_the_new_session(
    make_app: MakeApp, workspace: Path, tmp_path: Path
) -> None:
    script = Script(steps=[Step(match=Match(last_user_contains="a stored job"), reply=Reply(text="stored."))])
    with FakeLLMServer(script) as server:
        first = make_app(server, store=Store.open(tmp_path / "agentcli.db"))
        async with first.run_test(size=SIZE) as pilot:
            await submit(pilot, "a stored job")
            await idle(pilot)
        await first.conversation.store.flush()  # as when that agentcli quit: its batched rows are committed
        stored = first.conversation.session.id
        later = make_app(server, store=Store.open(tmp_path / "agentcli.db")).conversation
        app = AgentApp(later, pick_session=True)  # `agentcli --resume` without an ID
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), what="the session picker")
            picker: Any = app.screen
            assert [sid for sid, _ in picker.choices] == [stored]
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, SessionPicker))
            assert later.session.id != stored and later.session.next_seq == 0
            await submit(pilot, "/resume")
            await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), what="the session picker")
            await pilot.press("enter")  # the first (highlighted) session
            await wait_for(pilot, lambda: later.session.id == stored, what="the resume")
            await wait_for(pilot, lambda: "a stored job" in notes(app))
    server.assert_done()


async def test_a_background_task_the_sessions_end_cut_off_shows_cancelled_after_resume(
    make_app: MakeApp, tmp_path: Path
) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Slow survey", "survey slowly", run_in_background=True)])),
        Step(match=Match(system_contains=sub("Slow survey")), reply=Reply(text="never seen"), latency_ms=60_000,
             optional=True),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Started it.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "survey in the background")
            await idle(pilot)
            await wait_for(pilot, lambda: len(server.requests) == 3, what="the subagent's request")
            first = app.conversation.session.id
            (live,) = app.router.blocks.values()
            assert live.status == "running"
            await submit(pilot, "/new")  # ends the session: its background task is cancelled
            await wait_for(pilot, lambda: app.conversation.session.id != first)
            await submit(pilot, f"/resume {first}")
            await wait_for(pilot, lambda: any(n.startswith("Resumed session") for n in notes(app)))
            await idle(pilot)
            (block,) = app.router.blocks.values()
            assert (block.task_id, block.status, block.collapsed) == (live.task_id, "cancelled", True)
            assert block.error == "the session ended"
            assert app.router.counts() == (0, 0)
            said = next(n for n in notes(app) if n.startswith("Resumed session"))
            assert f"Task {live.task_id} (explore: Slow survey) was cancelled when the session ended" in said
            await submit(pilot, "/tasks")
            assert live.task_id in notes(app)[-1] and "cancelled" in notes(app)[-1]
