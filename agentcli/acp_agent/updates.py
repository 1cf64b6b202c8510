"""agentcli's events as ACP `session/update` notifications, in order.

`Outbox` sends them one after the other from a task of its own (the event bus calls its subscribers
synchronously; the connection writes asynchronously). `EventMapper` is the bus subscriber: text and thinking
deltas become message and thought chunks, tool calls `tool_call` then `tool_call_update` (kind, title,
locations, the diff of an edit, Bash's output, the result), the main agent's TodoWrite list the `plan`, its
requests' context use and the session's cost `usage_update`. A subagent's events arrive as updates tied to the
Task call that started it: `_meta` names that call (`agentcli.parentToolCallId`, and Zed's Claude adapter's
`claudeCode.parentToolUseId`), the task and the agent, so an editor can nest them under it. A background Bash
command (`Bash(run_in_background=true)`) is a tool call of its own beside the Bash call that started it (which ends
at once): `in_progress` while it runs, then `completed` (exit code 0, or stopped) or `failed` with its last lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.helpers import update_agent_message_text, update_agent_thought_text, update_plan
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    Cost,
    CurrentModeUpdate,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from agentcli.acp_agent import tool_info
from agentcli.events import (
    BackgroundFinishedEvent,
    BackgroundStartedEvent,
    Event,
    NoticeEvent,
    SubagentEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    ToolOutputEvent,
    UsageEvent,
    unwrap,
)
from agentcli.text import terminal_safe

log = logging.getLogger(__name__)
Update = (AgentMessageChunk | AgentThoughtChunk | UserMessageChunk | ToolCallStart | ToolCallProgress
          | AgentPlanUpdate | AvailableCommandsUpdate | CurrentModeUpdate | UsageUpdate)
Send = Callable[[Update], Awaitable[None]]


class Outbox:
    """The session's updates, sent in the order they were put."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.queue: asyncio.Queue[Update] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    def put(self, update: Update) -> None:
        """Queue one update (from synchronous code: the event bus)."""
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._run(), name="acp-outbox")
        self.queue.put_nowait(update)

    async def flush(self) -> None:
        """Wait until every update put so far is sent."""
        if self.task is not None:
            await self.queue.join()

    async def _run(self) -> None:
        while True:
            update = await self.queue.get()
            try:
                await self.send(update)
            except Exception as exc:  # the client went away: nothing else to tell it
                log.warning("session/update not sent: %s", exc)
            finally:
                self.queue.task_done()

    async def aclose(self) -> None:
        """Send what is queued, then stop."""
        if self.task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.flush(), timeout=5)
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


@dataclass(frozen=True, slots=True)
class Subagent:
    """Which Task call a subagent's session runs under."""

    parent_tool_call_id: str
    task_id: str
    subagent_type: str
    agent: str


def subagent_meta(sub: Subagent) -> dict[str, Any]:
    """The `_meta` tying an update (or a permission request) to the Task call that started its subagent."""
    return {
        "agentcli": {"parentToolCallId": sub.parent_tool_call_id, "taskId": sub.task_id,
                     "subagentType": sub.subagent_type, "agent": sub.agent},
        "claudeCode": {"parentToolUseId": sub.parent_tool_call_id},
    }


class EventMapper:
    """The event bus subscriber of one ACP session (see the module's docstring)."""

    def __init__(self, outbox: Outbox, workspace: Path, *, cost_usd: float = 0.0) -> None:
        self.outbox = outbox
        self.workspace = workspace
        self.cost_usd = cost_usd  # the session's so far
        self.subagents: dict[str, Subagent] = {}  # a subagent's session id -> its Task call
        self.turn_usage: dict[str, int] = {}

    def begin_turn(self) -> None:
        """A prompt starts: its token counts start from zero."""
        self.turn_usage = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "thought": 0}

    def __call__(self, event: Event) -> None:
        wrappers, inner = unwrap(event)
        sub = self._subagent(wrappers, inner)
        meta = subagent_meta(sub) if sub is not None else None
        put = self.outbox.put
        if isinstance(inner, TextDeltaEvent):
            chunk = update_agent_message_text(inner.text)
            put(chunk.model_copy(update={"field_meta": meta}) if meta else chunk)
        elif isinstance(inner, ThinkingDeltaEvent):
            thought = update_agent_thought_text(inner.text)
            put(thought.model_copy(update={"field_meta": meta}) if meta else thought)
        elif isinstance(inner, ToolCallStartedEvent):
            put(self._started(inner, sub, meta))
        elif isinstance(inner, ToolOutputEvent):
            put(ToolCallProgress(session_update="tool_call_update", tool_call_id=inner.tool_call_id,
                                 status="in_progress", content=tool_info.output_content(inner.name, inner.tail),
                                 field_meta=meta))
        elif isinstance(inner, ToolCallFinishedEvent):
            put(self._finished(inner, meta))
            if inner.todos is not None and sub is None:
                put(update_plan(tool_info.plan_entries(inner.todos)))
        elif isinstance(inner, (BackgroundStartedEvent, BackgroundFinishedEvent)):
            put(self._background(inner))
        elif isinstance(inner, UsageEvent):
            self._usage(inner, main=sub is None)
        elif isinstance(inner, NoticeEvent) and sub is None:
            sys.stderr.write(f"agentcli: {inner.level}: {terminal_safe(inner.message)}\n")

    def _subagent(self, wrappers: tuple[SubagentEvent, ...], inner: Event) -> Subagent | None:
        if not wrappers:
            return None
        known = self.subagents.get(inner.session_id)
        if known is None:
            wrapper = wrappers[-1]  # the innermost: the Task call of the agent right above this one
            known = Subagent(wrapper.parent_tool_call_id, wrapper.task_id, wrapper.subagent_type, inner.agent)
            self.subagents[inner.session_id] = known
        return known

    def _started(self, event: ToolCallStartedEvent, sub: Subagent | None, meta: dict[str, Any] | None
                 ) -> ToolCallStart:
        name, args = event.name, event.args
        content: list[tool_info.Content] = list(tool_info.input_diff(name, args, self.workspace))
        return ToolCallStart(
            session_update="tool_call", tool_call_id=event.tool_call_id,
            title=tool_info.title_of(name, args, event.summary, sub.agent if sub else "main"),
            kind=tool_info.kind_of(name), status="in_progress", content=content or None,
            locations=tool_info.locations_of(name, args, self.workspace) or None, raw_input=args,
            field_meta=meta,
        )

    def _finished(self, event: ToolCallFinishedEvent, meta: dict[str, Any] | None) -> ToolCallProgress:
        content: list[tool_info.Content]
        if event.diff is not None and not event.is_error:
            content = tool_info.file_diff(event.diff, self.workspace)
        else:
            output = event.output
            if event.name == "Task" and event.short_result and not event.is_error:
                output = f"{event.short_result}\n\n{output}"
            content = tool_info.output_content(event.name, output)
        raw: dict[str, Any] = {"output": event.output[: tool_info.MAX_OUTPUT_CHARS]}
        if event.code:
            raw["code"] = event.code
        return ToolCallProgress(
            session_update="tool_call_update", tool_call_id=event.tool_call_id,
            status="failed" if event.is_error else "completed", content=content, raw_output=raw, field_meta=meta,
        )

    def _background(self, event: BackgroundStartedEvent | BackgroundFinishedEvent) -> ToolCallStart | ToolCallProgress:
        """A background command's own tool call: started when it starts, updated when it ends. Its events are never
        relayed (they name their agent's session), so a subagent's is tied to its Task call through that session."""
        sub = self.subagents.get(event.session_id)
        meta: dict[str, Any] = subagent_meta(sub) if sub is not None else {"agentcli": {}}
        meta["agentcli"] = {**meta["agentcli"], "backgroundTaskId": event.task_id, "bashToolCallId": event.tool_call_id,
                            "outputFile": event.output_file}
        call_id = tool_info.background_call_id(event.task_id, event.tool_call_id)
        if isinstance(event, BackgroundStartedEvent):
            return ToolCallStart(
                session_update="tool_call", tool_call_id=call_id, kind="execute", status="in_progress",
                title=tool_info.background_title(event.task_id, event.description or event.command,
                                                 sub.agent if sub else "main"),
                content=tool_info.output_content("Bash", f"$ {event.command}"),
                raw_input={"command": event.command, "task_id": event.task_id}, field_meta=meta)
        failed = event.status == "exited" and event.exit_code != 0
        summary = (f"{event.task_id} was stopped" if event.status == "stopped"
                   else f"{event.task_id} exited with code {event.exit_code}")
        return ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id, status="failed" if failed else "completed",
            content=[tool_info.text(summary), *tool_info.output_content("Bash", event.last_lines)],
            raw_output={"status": event.status, "exit_code": event.exit_code, "last_lines": event.last_lines,
                        "elapsed_seconds": event.elapsed_seconds},
            field_meta=meta)

    def _usage(self, event: UsageEvent, *, main: bool) -> None:
        self.cost_usd += event.cost_usd or 0.0
        counts = self.turn_usage
        if counts:
            counts["input"] += event.input_tokens
            counts["output"] += event.output_tokens
            counts["cache_read"] += event.cache_read_tokens
            counts["cache_write"] += event.cache_write_tokens
            counts["thought"] += event.reasoning_tokens
        if main and not event.estimated and event.context_window > 0:
            self.outbox.put(UsageUpdate(session_update="usage_update", used=event.context_tokens,
                                        size=event.context_window,
                                        cost=Cost(amount=round(self.cost_usd, 6), currency="USD")))
