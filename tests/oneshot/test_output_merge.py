"""What a one-shot run's text output says of an isolated task's merge back (stderr, with the other progress)."""

from __future__ import annotations

import io

from agentcli.events import SubagentEvent, SubagentMergedEvent
from agentcli.oneshot.text_printer import TextPrinter


def test_the_merge_back_is_one_line_on_stderr_nested_or_not() -> None:
    out, err = io.StringIO(), io.StringIO()
    printer = TextPrinter(out, err)
    printer(SubagentMergedEvent(session_id="s", task_id="A", merge="merged", files_merged=["app.py", "b.py"]))
    conflict = SubagentMergedEvent(session_id="s2", task_id="B", merge="conflict", branch="agentcli/B\x1b[2J",
                                   files_conflicted=["app.py"], look="git diff 0123 agentcli/B")
    printer(SubagentEvent(session_id="s", task_id="P", parent_tool_call_id="c", subagent_type="general",
                          event=conflict))
    printer(SubagentMergedEvent(session_id="s", task_id="C", merge="no_changes"))
    assert out.getvalue() == ""
    lines = err.getvalue().splitlines()
    assert lines[0] == "    ⎇ merged into the workspace: app.py, b.py"
    assert lines[1].startswith("      ⎇ conflict in app.py: changes kept on agentcli/B")
    assert lines[1].endswith("(git diff 0123 agentcli/B)") and "\x1b" not in lines[1]
    assert len(lines) == 2  # nothing changed: nothing to say
