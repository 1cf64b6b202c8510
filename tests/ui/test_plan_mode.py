"""Plan mode: in read-only mode the main agent is asked for a plan (and can change nothing); /go carries it out
in accept-edits mode, with no approval asked for the edit; /go without a plan says why and does nothing."""

from __future__ import annotations

from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.plan import GO_PROMPT, PLAN_MODE_NOTE, PLAN_READY_NOTE
from agentcli.ui.widgets.approval import ApprovalScreen
from tests.ui.conftest import MAIN, MakeApp, idle, notes, submit, wait_for

PLAN = "1. In src/config.py, turn debug off.\n2. Run the tests."


async def test_a_plan_made_in_plan_mode_is_carried_out_by_go(make_app: MakeApp, workspace: Path) -> None:
    edit = ToolCall(name="Edit", input={"file_path": str(workspace / "src" / "config.py"),
                                         "old_string": "'debug': True", "new_string": "'debug': False"})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text=PLAN)),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(tool_calls=[edit])),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="Done: debug is off.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, mode="readonly")
        async with app.run_test(size=(120, 40)) as pilot:
            await submit(pilot, "/go")
            await wait_for(pilot, lambda: any(n.startswith("/go: no plan") for n in notes(app)))
            assert not server.requests and app.conversation.permissions.mode == "readonly"

            await submit(pilot, "turn debug off in the config")
            await idle(pilot)
            assert app.plan_ready and notes(app)[-1] == PLAN_READY_NOTE
            assert PLAN_MODE_NOTE in str(server.requests[0].body["messages"][-1])

            await submit(pilot, "/go")
            await wait_for(pilot, lambda: len(server.requests) == 3)
            await idle(pilot)
            assert not isinstance(app.screen, ApprovalScreen)  # accept-edits: the edit went through unasked
            assert app.conversation.permissions.mode == "accept_edits" and not app.plan_ready
            go = server.requests[1].body["messages"]
            assert GO_PROMPT in str(go[-1]) and PLAN_MODE_NOTE not in str(go[-1])
    assert "'debug': False" in (workspace / "src" / "config.py").read_text()
    server.assert_done()
