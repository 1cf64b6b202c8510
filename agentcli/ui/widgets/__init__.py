"""The TUI's widgets: conversation view, subagent blocks, tool calls, approvals, status bar, prompt."""

from __future__ import annotations

from agentcli.ui.widgets.approval import Approvals, ApprovalScreen
from agentcli.ui.widgets.message_list import AssistantText, MessageList, NoteLine
from agentcli.ui.widgets.prompt_input import PromptInput
from agentcli.ui.widgets.status_bar import Status, StatusBar
from agentcli.ui.widgets.subagent_block import BlockHeader, SubagentBlock
from agentcli.ui.widgets.tool_call import ToolCallView

__all__ = [
    "ApprovalScreen",
    "Approvals",
    "AssistantText",
    "BlockHeader",
    "MessageList",
    "NoteLine",
    "PromptInput",
    "Status",
    "StatusBar",
    "SubagentBlock",
    "ToolCallView",
]
