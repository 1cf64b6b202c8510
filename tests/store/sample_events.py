"""A realistic event stream: a main session delegating to explore, which delegates to summary."""

from __future__ import annotations

from typing import Any

from agentcli.events import (
    Event,
    MessageAddedEvent,
    RunFinishedEvent,
    SessionStartedEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentBlockUpdatedEvent,
    SubagentEvent,
    TextDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    UsageEvent,
)
from agentcli.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock

MAIN, CHILD, GRAND = "ses_main01", "ses_child01", "ses_grand01"
PROMPT = "Find the auth code and summarize it\nThen tell me what to fix."


def _assistant(text: str, *calls: ToolUseBlock) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text), *calls] if text else list(calls))


def _results(*pairs: tuple[str, str]) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=i, content=c) for i, c in pairs])


def _child(event: Event) -> SubagentEvent:
    return SubagentEvent(
        session_id=MAIN, task_id="tsk_1", parent_tool_call_id="tc_task", subagent_type="explore", event=event
    )


def _grand(event: Event) -> SubagentEvent:
    inner = SubagentEvent(
        session_id=CHILD,
        agent="explore#1",
        task_id="tsk_2",
        parent_tool_call_id="tc_inner",
        subagent_type="summary",
        event=event,
    )
    return _child(inner)


def sample_events() -> list[Event]:
    """The whole run, in emission order."""
    task_args: dict[str, Any] = {"description": "Find auth code", "prompt": "Find login", "subagent_type": "explore"}
    task_call = ToolUseBlock(id="tc_task", name="Task", input=task_args)
    grep_call = ToolUseBlock(id="tc_grep", name="Grep", input={"pattern": "def login"})
    inner_call = ToolUseBlock(id="tc_inner", name="Task", input={"description": "Summarize auth"})
    c, g = {"session_id": CHILD, "agent": "explore#1"}, {"session_id": GRAND, "agent": "summary#1"}
    return [
        SessionStartedEvent(session_id=MAIN, model="main", workspace="/ws"),
        MessageAddedEvent(session_id=MAIN, seq=0, message=Message.user(PROMPT)),
        TextDeltaEvent(session_id=MAIN, text="I'll delegate."),
        UsageEvent(
            session_id=MAIN,
            provider="anthropic",
            model="claude-sonnet-4-5",
            input_tokens=100,
            output_tokens=20,
            cache_read_tokens=10,
            cost_usd=0.001,
        ),
        MessageAddedEvent(session_id=MAIN, seq=1, message=_assistant("I'll delegate.", task_call)),
        ToolCallStartedEvent(
            session_id=MAIN, tool_call_id="tc_task", name="Task", args=task_args, summary="explore: Find auth code"
        ),
        SubagentBlockAddedEvent(
            session_id=MAIN,
            task_id="tsk_1",
            parent_tool_call_id="tc_task",
            subagent_type="explore",
            description="Find auth code",
            model="light",
            depth=1,
        ),
        _child(
            SessionStartedEvent(
                **c,
                model="anthropic:claude-haiku-4-5",
                workspace="/ws",
                depth=1,
                parent_session_id=MAIN,
                task_id="tsk_1",
            )
        ),
        _child(MessageAddedEvent(**c, seq=0, message=Message.user("Find login"))),
        _child(TextDeltaEvent(**c, text="Searching")),
        _child(
            UsageEvent(
                **c, provider="anthropic", model="claude-haiku-4-5", input_tokens=50, output_tokens=5, cost_usd=0.0001
            )
        ),
        _child(MessageAddedEvent(**c, seq=1, message=_assistant("Searching", grep_call, inner_call))),
        _child(
            ToolCallStartedEvent(
                **c, tool_call_id="tc_grep", name="Grep", args={"pattern": "def login"}, summary="Grep 'def login'"
            )
        ),
        _child(
            ToolCallFinishedEvent(
                **c,
                tool_call_id="tc_grep",
                name="Grep",
                is_error=False,
                output="auth.py:3: def login():\n" + "x\n" * 20,
                duration_ms=3.0,
            )
        ),
        _child(ToolCallStartedEvent(**c, tool_call_id="tc_inner", name="Task", args={}, summary="summary")),
        SubagentBlockUpdatedEvent(session_id=MAIN, task_id="tsk_1", status="running", tool_calls=1),
        # depth 2: wrapped twice; its start carries no task_id, the wrapper's is used
        _grand(SessionStartedEvent(**g, model="light", workspace="/ws", depth=2, parent_session_id=CHILD)),
        _grand(MessageAddedEvent(**g, seq=0, message=Message.user("Summarize auth"))),
        _grand(
            UsageEvent(
                **g, provider="anthropic", model="claude-haiku-4-5", input_tokens=30, output_tokens=3, cost_usd=0.00005
            )
        ),
        _grand(MessageAddedEvent(**g, seq=1, message=_assistant("login() checks the password."))),
        _grand(RunFinishedEvent(**g, status="completed", result="login() checks the password.", turns=1)),
        _child(
            ToolCallFinishedEvent(
                **c,
                tool_call_id="tc_inner",
                name="Task",
                is_error=False,
                output="Subagent (summary, light) completed.",
                duration_ms=9.0,
            )
        ),
        _child(MessageAddedEvent(**c, seq=2, message=_results(("tc_grep", "auth.py:3"), ("tc_inner", "done")))),
        _child(
            UsageEvent(
                **c, provider="anthropic", model="claude-haiku-4-5", input_tokens=60, output_tokens=8, cost_usd=0.0002
            )
        ),
        _child(MessageAddedEvent(**c, seq=3, message=_assistant("login is in auth.py:3"))),
        _child(RunFinishedEvent(**c, status="completed", result="login is in auth.py:3", turns=2)),
        SubagentBlockFinishedEvent(
            session_id=MAIN, task_id="tsk_1", status="completed", short_result="Task completed by explore"
        ),
        ToolCallFinishedEvent(
            session_id=MAIN,
            tool_call_id="tc_task",
            name="Task",
            is_error=False,
            output="Subagent (explore, light) completed.\n\nlogin is in auth.py:3",
            duration_ms=40.0,
        ),
        MessageAddedEvent(session_id=MAIN, seq=2, message=_results(("tc_task", "login is in auth.py:3"))),
        UsageEvent(
            session_id=MAIN,
            provider="anthropic",
            model="claude-sonnet-4-5",
            input_tokens=200,
            output_tokens=30,
            cost_usd=0.002,
        ),
        MessageAddedEvent(session_id=MAIN, seq=3, message=_assistant("The login code is in auth.py.")),
        RunFinishedEvent(session_id=MAIN, status="completed", result="The login code is in auth.py.", turns=2),
    ]
