"""The person's SubagentStart / SubagentStop hooks of one task: what they are given, and what they tell the model."""

from __future__ import annotations

from typing import Any

from agentcli.hooks import HookEngine
from agentcli.subagents.tasks import TaskHandle
from agentcli.text import defang_tags


async def task_hook(hooks: HookEngine | None, handle: TaskHandle, event: str) -> str:
    """Run the SubagentStart / SubagentStop hooks of a task (SubagentStop gets its finished record); what they tell
    the model, framed, to append to the child's first message (start) or the parent's result (stop)."""
    if hooks is None or not hooks.has(event):
        return ""
    record, parent = handle.record, handle.parent
    data: dict[str, Any] = {"agent_id": record.task_id, "agent_type": record.subagent_type,
                            "task_id": record.task_id, "description": record.description}
    if event == "SubagentStop":
        data |= {"stop_hook_active": False, "status": record.status, "result": record.result or "",
                 "error": record.error, "task": record.model_dump(mode="json")}
    verdict = await hooks.fire(event, data, session_id=parent.session.id, agent=parent.session.agent,
                               emit=parent.emit, target=record.subagent_type)
    said = [f"A {event} hook says: {verdict.reason}"] if verdict.blocked and event == "SubagentStop" else []
    said += verdict.context
    return "".join(f"\n\n<system-notice>{defang_tags(text)}</system-notice>" for text in said)
