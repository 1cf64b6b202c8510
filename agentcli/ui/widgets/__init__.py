"""The TUI's widgets: conversation view, subagent blocks, tool calls, approvals, status bar, prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.ui.widgets.activity import TurnActivity
    from agentcli.ui.widgets.agent_screen import AgentScreen
    from agentcli.ui.widgets.approval import Approvals, ApprovalScreen
    from agentcli.ui.widgets.message_list import (
        AssistantText,
        MessageList,
        NoteLine,
        StreamText,
        TextView,
        ThinkingView,
        warm_up,
    )
    from agentcli.ui.widgets.prompt_input import PromptInput
    from agentcli.ui.widgets.session_picker import SessionPicker, session_label
    from agentcli.ui.widgets.status_bar import APPROVAL, LOADING, QUIT_ARMED, READY, WORKING, Status, StatusBar
    from agentcli.ui.widgets.subagent_block import SPINNER_HZ, SubagentBlock
    from agentcli.ui.widgets.todo_list import TodoChecklist
    from agentcli.ui.widgets.tool_call import ToolCallView
    from agentcli.ui.widgets.trust import ask_trust

__all__ = [
    "APPROVAL",
    "LOADING",
    "QUIT_ARMED",
    "READY",
    "SPINNER_HZ",
    "WORKING",
    "AgentScreen",
    "ApprovalScreen",
    "Approvals",
    "AssistantText",
    "MessageList",
    "NoteLine",
    "PromptInput",
    "SessionPicker",
    "Status",
    "StatusBar",
    "StreamText",
    "SubagentBlock",
    "TextView",
    "ThinkingView",
    "TodoChecklist",
    "ToolCallView",
    "TurnActivity",
    "ask_trust",
    "session_label",
    "warm_up",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.ui.widgets.activity": ["TurnActivity"],
    "agentcli.ui.widgets.agent_screen": ["AgentScreen"],
    "agentcli.ui.widgets.approval": ["ApprovalScreen", "Approvals"],
    "agentcli.ui.widgets.message_list": [
        "AssistantText",
        "MessageList",
        "NoteLine",
        "StreamText",
        "TextView",
        "ThinkingView",
        "warm_up",
    ],
    "agentcli.ui.widgets.prompt_input": ["PromptInput"],
    "agentcli.ui.widgets.session_picker": ["SessionPicker", "session_label"],
    "agentcli.ui.widgets.status_bar": ["APPROVAL", "LOADING", "QUIT_ARMED", "READY", "Status", "StatusBar", "WORKING"],
    "agentcli.ui.widgets.subagent_block": ["SPINNER_HZ", "SubagentBlock"],
    "agentcli.ui.widgets.todo_list": ["TodoChecklist"],
    "agentcli.ui.widgets.tool_call": ["ToolCallView"],
    "agentcli.ui.widgets.trust": ["ask_trust"],
})
