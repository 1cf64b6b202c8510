"""The person steers a running subagent from the TUI: Ctrl+T on its block or `/msg ID text` (issue 23, item 3)."""

from __future__ import annotations

import json

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.app import AgentApp
from agentcli.ui.model import BlockItem, NoteItem
from tests.ui.conftest import MAIN, SIZE, MakeApp, block_view, idle, shown, sub, submit, task, wait_for


def _script() -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task("Survey the code", "survey")])),
        # Held until the person's message is queued, so it must reach the subagent's next request.
        Step(match=Match(system_contains=sub("Survey the code"), turn=0), hold="first",
             reply=Reply(tool_calls=[ToolCall(name="LS", input={"path": "."})])),
        Step(match=Match(system_contains=sub("Survey the code"), turn=1, last_user_contains="Skip the tests folder"),
             reply=Reply(text="Surveyed, tests skipped.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done.")),
    ])


async def test_ctrl_t_on_a_running_block_sends_it_the_persons_message(make_app: MakeApp) -> None:
    with FakeLLMServer(_script()) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "survey")
            await wait_for(pilot, lambda: len(app.router.blocks) == 1 and shown(app, _only(app)) is not None
                           and _only(app).status == "running")
            block = _only(app)
            block_view(app, block).header.focus()
            await pilot.pause()
            await pilot.press("ctrl+t")
            await pilot.pause()
            assert app.prompt.text == f"/msg {block.task_id} " and app.prompt.has_focus
            await pilot.press(*"Skip the tests folder", "enter")
            await wait_for(pilot, lambda: any(isinstance(e, NoteItem) and e.text == "you: Skip the tests folder"
                                              for e in block.items))
            server.release("first")
            await idle(pilot)
            assert block.status == "completed"
    server.assert_done()
    steered = next(r for r in server.requests if "Skip the tests folder" in json.dumps(r.body))
    letter = json.dumps(steered.body["messages"][-1])
    assert "[message from the person]" in letter and "data to weigh" not in letter


async def test_msg_to_a_finished_or_unknown_task_says_why(make_app: MakeApp) -> None:
    script = Script(steps=[Step(match=Match(system_contains=MAIN), reply=Reply(text="Nothing to delegate."))])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "/msg tsk_nothing hello")
            await pilot.pause()
            notes = [e.text for e in app.router.main.items if isinstance(e, NoteItem)]
            assert any(n.startswith("/msg: No task 'tsk_nothing'") for n in notes), notes
            await submit(pilot, "/msg")
            await pilot.pause()
            notes = [e.text for e in app.router.main.items if isinstance(e, NoteItem)]
            assert any(n.startswith("/msg: usage: /msg TASK_ID text") for n in notes), notes


def _only(app: AgentApp) -> BlockItem:
    (block,) = app.router.blocks.values()
    return block
