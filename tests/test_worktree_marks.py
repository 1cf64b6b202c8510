"""The `[worktree]` mark of an approval asked by an agent in its task's git worktree: the TUI's question and the
title an ACP editor shows (paths are the workspace's: the worktree mirrors it)."""

from __future__ import annotations

from pathlib import Path

from agentcli.acp_agent.approver import AcpApprover
from agentcli.acp_agent.updates import EventMapper
from agentcli.tools.permissions.approvals import PermissionRequest
from agentcli.ui.widgets.approval import request_line


def _request(tool: str, summary: str, worktree: bool) -> PermissionRequest:
    return PermissionRequest("general#1", tool, summary, summary, tool_input={"file_path": summary},
                             tool_call_id="call_1", session_id="ses_sub", worktree=worktree)


def test_the_tui_question_marks_a_worktree_agents_call() -> None:
    assert request_line(_request("Edit", "src/app.py", True)) == "[general#1] wants to run: Edit [worktree] src/app.py"
    assert request_line(_request("Bash", "make test", True)) == "[general#1] wants to run: [worktree] make test"
    assert request_line(_request("Edit", "src/app.py", False)) == "[general#1] wants to run: Edit src/app.py"


def test_an_editor_sees_the_mark_in_the_title_and_the_meta(tmp_path: Path) -> None:
    approver = AcpApprover(ask=None, outbox=None, mapper=EventMapper(None, tmp_path), workspace=tmp_path)  # type: ignore[arg-type]
    marked = approver.tool_call(_request("Edit", "src/app.py", True))
    assert marked.title is not None and marked.title.startswith("[worktree] ")
    assert (marked.field_meta or {})["agentcli"]["worktree"] is True
    plain = approver.tool_call(_request("Edit", "src/app.py", False))
    assert plain.title is not None and "[worktree]" not in plain.title and not (plain.field_meta or {})
