"""An isolated task in the TUI (real Conversation, real git, the scripted fake, Pilot): its approvals carry the
`[worktree]` mark, its block says how the merge back ended, and Ctrl+D on the block shows the diff."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentcli.events import SubagentBlockAddedEvent, SubagentBlockFinishedEvent, SubagentMergedEvent
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.ui.widgets.approval import ApprovalScreen
from agentcli.ui.widgets.changes_screen import ChangesScreen
from tests.ui.conftest import MAIN, SIZE, MakeApp, block_view, idle, sub, submit, task, wait_for
from tests.ui.test_router import RouterApp, settle, task_started

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


async def test_an_isolated_writer_is_marked_in_its_approval_and_its_merge_and_diff_are_one_key_away(
    make_app: MakeApp, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")  # agentcli's fallback author commits the task's work
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-qm", "start")
    edit = ToolCall(name="Edit", input={"file_path": "src/config.py", "old_string": "True", "new_string": "False"})
    steps = [
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Turn debug off", "Set debug to False.", "general", isolation="worktree")])),
        Step(match=Match(system_contains=sub("Turn debug off"), turn=0), reply=Reply(tool_calls=[edit])),
        Step(match=Match(system_contains=sub("Turn debug off"), turn=1), reply=Reply(text="Debug is off.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done.")),
    ]
    with FakeLLMServer(Script(steps=steps)) as server:
        app = make_app(server, mode="ask")
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "turn debug off")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            question = str(app.screen.query_one("#approval-question").render())
            assert question == "[general#1] wants to run: Edit [worktree] src/config.py"
            await pilot.press("y")
            await idle(pilot)
            assert (workspace / "src/config.py").read_text() == "def load_config():\n    return {'debug': False}\n"
            (block,) = app.router.blocks.values()
            assert block.merge is not None and block.merge.outcome == "merged"
            view = block_view(app, block)
            assert "merged 1 file" in view.header_content().plain
            view.header.focus()
            await pilot.press("ctrl+d")
            await wait_for(pilot, lambda: isinstance(app.screen, ChangesScreen))
            outcome = str(app.screen.query_one("#changes-outcome").render())
            assert outcome == "Merged into the workspace (uncommitted): src/config.py"
            shown = "\n".join(str(w.render()) for w in app.screen.query(".changes-file"))
            assert "src/config.py  +1 −1" in shown
            assert "return {'debug': False}" in shown and "return {'debug': True}" in shown
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, ChangesScreen))
    server.assert_done()


async def test_a_conflict_names_its_files_and_branch_and_a_plain_block_offers_no_diff() -> None:
    app = RouterApp()
    async with app.run_test(size=(160, 30)) as pilot:
        r = app.router
        for call, task_id in (("c1", "A"), ("c2", "B")):
            r(task_started(call))
            r(SubagentBlockAddedEvent(session_id="s", task_id=task_id, parent_tool_call_id=call,
                                      subagent_type="general", description=f"work {task_id}", model="main", depth=1))
            r(SubagentBlockFinishedEvent(session_id="s", task_id=task_id, status="completed",
                                         short_result="Task completed by general"))
        r(SubagentMergedEvent(session_id="s", task_id="A", merge="conflict", branch="agentcli/tsk_a\x1b[2J",
                              files_conflicted=["app.py"], look="git diff 0123abcd agentcli/tsk_a"))
        await settle(pilot, r)
        conflicted, plain = r.blocks["A"], r.blocks["B"]
        header = block_view(app, conflicted).header_content().plain
        assert "conflict in app.py: kept on agentcli/tsk_a" in header and "\x1b" not in header
        view = block_view(app, conflicted)
        assert view.check_action("show_changes", ()) is True
        assert block_view(app, plain).check_action("show_changes", ()) is False
        view.header.focus()
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ChangesScreen))
        lines = str(app.screen.query_one("#changes-outcome").render()).splitlines()
        assert lines[0] == "Conflict: nothing was applied. In conflict: app.py"
        assert lines[1].startswith("Branch agentcli/tsk_a") and lines[1].endswith(": git diff 0123abcd agentcli/tsk_a")
