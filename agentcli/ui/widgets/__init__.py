"""The TUI's widgets: conversation view, subagent blocks, tool calls, approvals, status bar, prompt, the rewind's
steps.

Its modules are its face; other packages import their names from `agentcli.ui`.
"""

__all__ = [
    "activity",
    "agent_screen",
    "approval",
    "changes_screen",
    "diff_view",
    "full_diff",
    "message_list",
    "prompt_extras",
    "prompt_input",
    "rewind_screen",
    "session_picker",
    "status_bar",
    "subagent_block",
    "todo_list",
    "tool_call",
    "trust",
]
