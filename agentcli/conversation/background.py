"""Background commands as events: each start and end of a `Bash(run_in_background=true)` command becomes an event
on the conversation's bus, as its agent's, so every front end (the TUI's list, stream-json's task lines, ACP) sees
it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.events import BackgroundFinishedEvent, BackgroundStartedEvent, Event

if TYPE_CHECKING:
    from agentcli.tools import BackgroundCommand


def background_event(job: BackgroundCommand) -> Event:
    """The event of a command that started (it runs) or ended."""
    head = {"session_id": job.owner, "agent": job.agent, "task_id": job.id, "command": job.command,
            "tool_call_id": job.tool_call_id, "description": job.description, "output_file": str(job.path)}
    if job.status == "running":
        return BackgroundStartedEvent(**head)
    return BackgroundFinishedEvent(
        **head, status="stopped" if job.status == "stopped" else "exited", exit_code=job.exit_code,
        last_lines=job.last_lines(), elapsed_seconds=round((job.ended or job.started) - job.started, 3))
