"""The live overview of every agent (issue 12): compact blocks, twenty agents on one screen, an agent's own
screen, TodoWrite checklists, the activity line, Bash's live output, live and cancelled token counts, /tasks."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.figures import compact_tokens
from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step, ToolCall
from agentcli.ui.app import AgentApp
from agentcli.ui.model import BlockItem, NoteItem, TextItem, TodoListItem, ToolItem
from agentcli.ui.widgets.agent_screen import AgentScreen
from agentcli.ui.widgets.message_list import AssistantText
from agentcli.ui.widgets.subagent_block import SPINNER
from agentcli.ui.widgets.todo_list import TodoChecklist
from agentcli.ui.widgets.tool_call import ToolCallView
from tests.ui.conftest import MAIN, MakeApp, block_view, idle, screen_text, shown, sub, submit, task, wait_for

WIDE = (140, 45)
AREAS = [f"Scan area {n:02d}" for n in range(1, 21)]


def _blocks(app: AgentApp) -> dict[str, BlockItem]:
    return {block.description: block for block in app.router.blocks.values()}


def _screenshot(app: AgentApp, name: str) -> None:
    """Keep an SVG of the screen when SCREENSHOTS_DIR names a folder (for the issue's notes)."""
    folder = os.environ.get("SCREENSHOTS_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{name}.svg").write_text(app.export_screenshot(), encoding="utf-8")


async def test_twenty_parallel_subagents_fit_one_140x45_screen_with_every_status(make_app: MakeApp) -> None:
    steps = [Step(match=Match(system_contains=MAIN, turn=0),
                  reply=Reply(text="Delegating.", tool_calls=[task(a, f"look at {a}") for a in AREAS]))]
    for n, area in enumerate(AREAS):
        steps += [
            Step(match=Match(system_contains=sub(area), turn=0),
                 reply=Reply(tool_calls=[ToolCall(name="Grep", input={"pattern": f"TODO{n}"})])),
            Step(match=Match(system_contains=sub(area), turn=1),
                 reply=Reply(text=f"## Area {n + 1}\n\nNo **TODO** left in area {n + 1}."), latency_ms=2500),
        ]
    steps.append(Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="All twenty reported.")))
    with FakeLLMServer(Script(steps=steps)) as server:
        app = make_app(server, AGENTCLI_TASK_TOOL__MAX_CONCURRENT="20")
        async with app.run_test(size=WIDE) as pilot:
            await submit(pilot, "scan all twenty areas")
            await wait_for(pilot, lambda: len(_blocks(app)) == 20 and all(
                b.status == "running" and b.tool_calls == 1 for b in _blocks(app).values()), 30)
            await wait_for(pilot, lambda: app.router.dense and app.router.settled)
            await pilot.pause()
            text = screen_text(app)
            _screenshot(app, "twenty-running")
            lines = text.splitlines()
            for n, area in enumerate(AREAS):  # every agent on screen, on one line with its whole status
                (line,) = [ln for ln in lines if f"  {area}  " in ln]
                assert "explore#" in line and f"  {area}  · 1 tool · " in line and " tok · " in line, line
                assert line.index(" tok · ") < line.index(f'Grep "TODO{n}"'), line  # figures first, then activity
                assert any(frame in line for frame in SPINNER), line  # running: its spinner turns
            assert "20 subagents running" in text  # the activity line over the prompt
            await idle(pilot, 60)
            text = screen_text(app)
            _screenshot(app, "twenty-finished")
            for n, area in enumerate(AREAS):  # finished: description and first line of the result, not "done"
                (line,) = [ln for ln in lines if f"  {area}  " in ln] and [
                    ln for ln in text.splitlines() if f"  {area}  " in ln]
                assert f"{area}  — Area {n + 1}  · light · 1 tool · " in line and "✓" in line, line
            assert "All twenty reported." in text
    server.assert_done()


async def test_an_agents_own_screen_shows_its_transcript_live_and_esc_comes_back(make_app: MakeApp) -> None:
    description = "Read the config"
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task(description, "read it")])),
        Step(match=Match(system_contains=sub(description), turn=0),
             reply=Reply(text="Reading it now.",
                         tool_calls=[ToolCall(name="Read", input={"file_path": "src/config.py"})])),
        Step(match=Match(system_contains=sub(description), turn=1),
             reply=Reply(text="# Findings\n\n- `load_config` returns **debug**\n" + "more words " * 60, chunk_size=6),
             latency_ms=800, chunk_delay_ms=40),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=WIDE) as pilot:
            await submit(pilot, "read the config")
            await wait_for(pilot, lambda: _blocks(app) and shown(app, _blocks(app)[description]) is not None)
            block = _blocks(app)[description]
            await wait_for(pilot, lambda: block.tool_calls == 1)
            view = block_view(app, block)
            view.header.focus()
            await pilot.press("ctrl+e")
            await wait_for(pilot, lambda: isinstance(app.screen, AgentScreen))
            screen = app.screen
            assert isinstance(screen, AgentScreen) and screen.block is block
            assert view.collapsed and list(view.children) == [view.header]  # in the conversation: compact
            await wait_for(pilot, lambda: any(isinstance(v, ToolCallView) for v in screen.body.children))
            assert "▸ read it" in screen_text(app) and "Read the config" in screen_text(app)
            # Live: the answer streams into this screen as it comes.
            await wait_for(pilot, lambda: block.current_text is not None and "more words" in block.current_text.text)
            await wait_for(pilot, lambda: "more words" in screen_text(app))
            await wait_for(pilot, lambda: block.status == "completed", 30)
            await wait_for(pilot, lambda: app.router.settled)
            await pilot.pause()
            # The finished answer is Markdown here, never its raw source.
            answers = [v for v in screen.body.children if isinstance(v, AssistantText)]
            assert answers and "# Findings" not in screen_text(app) and "Findings" in screen_text(app)
            assert "**debug**" not in screen_text(app)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, AgentScreen))
            assert app.router.views.detail is None and shown(app, block.items[0]) is None
            await idle(pilot)
            assert "Read the config  — Findings" in screen_text(app)
    server.assert_done()


def _todos(*pairs: tuple[str, str]) -> ToolCall:
    return ToolCall(name="TodoWrite", input={"todos": [{"content": c, "status": s} for c, s in pairs]})


async def test_todowrite_is_one_live_checklist_per_turn_and_inside_a_block(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_todos(("Plan the work", "in_progress"), ("Delegate the check", "pending"))])),
        Step(match=Match(system_contains=MAIN, turn=1),
             reply=Reply(tool_calls=[_todos(("Plan the work", "completed"), ("Delegate the check", "in_progress")),
                                     task("Check the auth", "check it")])),
        Step(match=Match(system_contains=sub("Check the auth"), turn=0),
             reply=Reply(tool_calls=[_todos(("Open auth.py", "in_progress"))])),
        Step(match=Match(system_contains=sub("Check the auth"), turn=1),
             reply=Reply(tool_calls=[_todos(("Open auth.py", "completed"))])),
        Step(match=Match(system_contains=sub("Check the auth"), turn=2), reply=Reply(text="auth is fine")),
        Step(match=Match(system_contains=MAIN, turn=2),
             reply=Reply(text="Checked.", tool_calls=[_todos(("Plan the work", "completed"),
                                                             ("Delegate the check", "completed"))])),
        Step(match=Match(system_contains=MAIN, turn=3), reply=Reply(text="All done.")),
        Step(match=Match(system_contains=MAIN, last_user_contains="and again"), reply=Reply(text="Again.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=WIDE) as pilot:
            await submit(pilot, "plan and check")
            await idle(pilot)
            main = app.router.main
            (checklist,) = [e for e in main.items if isinstance(e, TodoListItem)]  # one list, updated in place
            assert checklist.todos == [("Plan the work", "completed"), ("Delegate the check", "completed")]
            assert not [e for e in main.items if isinstance(e, ToolItem) and e.name == "TodoWrite"]
            view = app.router.views.todo_view(checklist)
            assert isinstance(view, TodoChecklist) and "Todos 2/2" in str(view.render())
            text = screen_text(app)
            assert "☒Plan the work" in text and "☒Delegate the check" in text  # (style runs lose their gap)
            assert "☒ Plan the work" in str(view.render())
            # The turn that owns it: right after the prompt, before the block and the answer.
            kinds = [type(e).__name__ for e in main.items[main.items.index(checklist) - 1:]]
            assert kinds[:3] == ["NoteItem", "TodoListItem", "BlockItem"]
            # The subagent's list lives in its block.
            block = _blocks(app)["Check the auth"]
            (inner,) = [e for e in block.items if isinstance(e, TodoListItem)]
            assert inner.todos == [("Open auth.py", "completed")]
            block_view(app, block).collapsed = False
            await pilot.pause()
            assert "☒Open auth.py" in screen_text(app)
            # A new turn gets its own checklist.
            assert main.todo is None or main.todo is checklist
            await submit(pilot, "and again")
            assert main.todo is None
            await idle(pilot)
    server.assert_done()


async def test_tokens_count_while_streaming_and_a_cancelled_subagents_spend_is_kept(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Write a long essay", "write"), task("Quick look around", "look")])),
        Step(match=Match(system_contains=sub("Write a long essay")),
             reply=Reply(text="word " * 400, chunk_size=20), chunk_delay_ms=30,
             fault=Fault(kind="stall", after_events=40, seconds=60)),
        Step(match=Match(system_contains=sub("Quick look around")), reply=Reply(text="looked"), latency_ms=300),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="went on")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=WIDE) as pilot:
            await submit(pilot, "write and look")
            await wait_for(pilot, lambda: "Write a long essay" in _blocks(app))
            essay = _blocks(app)["Write a long essay"]
            await wait_for(pilot, lambda: essay.estimated_tokens >= 20)  # counted while it streams
            await wait_for(pilot, lambda: shown(app, essay) is not None)
            view = block_view(app, essay)  # the next tick re-renders its header with the estimate
            await wait_for(pilot, lambda: "~" in str(view.header.render()))
            header = str(view.header.render())
            assert essay.input_tokens == 0 and " tok · " in header.split("~", 1)[1], header  # `~95 tok`
            # /tasks shows how long a running task has run so far, not 0.0s.
            await wait_for(pilot, lambda: essay.elapsed_seconds() > 0.2)
            await submit(pilot, "/tasks")
            listing = [n.text for n in app.router.main.items if isinstance(n, NoteItem)][-1]
            (row,) = [ln for ln in listing.splitlines() if "Write a long essay" in ln]
            assert "running" in row and " so far" in row and "0.0s so far" not in row, row
            block_view(app, essay).action_cancel_subagent()
            await wait_for(pilot, lambda: essay.status == "cancelled")
            await idle(pilot)
            # Its unfinished request is counted (estimated) in its block and in the session's totals.
            streamed = sum(len(e.text) for e in essay.items if isinstance(e, TextItem))
            assert streamed >= 80 and essay.output_tokens == -(-streamed // 4)
            assert essay.input_tokens > 0 and not essay.streamed
            (record,) = [r for r in app.conversation.runner.records() if r.description == "Write a long essay"]
            assert (record.input_tokens, record.output_tokens) == (essay.input_tokens, essay.output_tokens)
            delegated = app.conversation.session.ledger.delegated
            assert delegated.usage.output_tokens >= essay.output_tokens and delegated.requests == 2
            header = str(view.header.render())  # counted now: no estimate mark
            assert f" {compact_tokens(essay.tokens)} tok" in header and "~" not in header, header
    server.assert_done()


async def test_the_main_turn_shows_its_activity_and_bash_its_output_as_it_runs(make_app: MakeApp) -> None:
    command = "echo first-line; echo second-line; sleep 1.5; echo third-line"
    long_prompt = "Please look into this. " * 60
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": command})])),
        Step(match=Match(system_contains=MAIN, turn=1),
             reply=Reply(tool_calls=[task("Look into it", long_prompt)], args_chunk_size=10), chunk_delay_ms=15),
        Step(match=Match(system_contains=sub("Look into it")), reply=Reply(text="looked into it")),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, mode="auto")
        async with app.run_test(size=WIDE) as pilot:
            await submit(pilot, "run it")
            await wait_for(pilot, lambda: any(isinstance(e, ToolItem) and "second-line" in e.tail
                                              for e in app.router.main.items))
            (bash,) = [e for e in app.router.main.items if isinstance(e, ToolItem)]
            assert bash.status == "running"
            tool_view = app.router.views.tool_view(bash)
            assert tool_view is not None
            await wait_for(pilot, lambda: "│ second-line" in str(tool_view.render()))
            line = str(tool_view.render())
            assert "│ first-line" in line and "│ second-line" in line and "s\n" in line  # elapsed, then the tail
            assert app.activity.has_class("-running") and "Bash" in str(app.activity.render())
            # While the model writes the Task call's arguments, the activity line says so.
            await wait_for(pilot, lambda: "writing a Task call" in str(app.activity.render()))
            assert any(frame in str(app.activity.render()) for frame in SPINNER)
            await idle(pilot)
            assert not app.activity.has_class("-running")
            assert bash.status == "ok" and not bash.tail and "third-line" in bash.output
    server.assert_done()
