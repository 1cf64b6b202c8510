"""Run one child AgentLoop under its limits: wall-clock and idle timeouts, budgets, cancellation, output schema."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import TYPE_CHECKING, Any

from agentcli.agent.loop import AgentLoop, RunOutcome
from agentcli.status import TASK_STATUS_OF_RUN, TaskStatus
from agentcli.tools.base import Tool

if TYPE_CHECKING:
    from agentcli.subagents.runner import SubagentRunner, TaskHandle



async def run_child(
    runner: SubagentRunner, handle: TaskHandle, tools: list[Tool[Any]]
) -> tuple[TaskStatus, str, str | None]:
    """Run the subagent to an end; returns (status, result text, error)."""
    settings = runner.settings
    session = handle.session
    context = runner.tool_context(
        session, write_paths=handle.write_paths, write_scopes=handle.write_scopes, progress=handle.touch
    )
    loop = AgentLoop(
        session,
        runner.pool.get(handle.model),
        tools,
        context,
        runner._relay(handle),
        max_turns=handle.agent_type.max_turns or settings.agent.max_turns,
        price=runner.price,
        notices=runner.notices_for(session.id),
        unavailable=runner.withheld(session.depth),
    )
    handle.loop = loop
    status, result, error = await _run_once(runner, handle, loop, handle.user_message)
    schema = handle.output_schema
    if status == "completed" and schema is not None:
        try:
            problem = await asyncio.to_thread(schema_problem, result, schema)
            if problem is not None:  # one repair turn
                repair = (
                    f"Your answer does not satisfy the required JSON schema: {problem}. "
                    "Reply again with only the corrected JSON document."
                )
                status, result, error = await _run_once(runner, handle, loop, repair)
                if status == "completed":
                    problem = await asyncio.to_thread(schema_problem, result, schema)
                    if problem is not None:
                        return "failed", result, f"output_schema not satisfied after one repair turn: {problem}"
        except Exception as exc:  # never leave the task running: any failure to check ends it as failed
            return "failed", result, f"output_schema could not be checked: {_one_line(exc)[:300]}"
    return status, result, error


def _one_line(text: object) -> str:
    return " ".join(str(text).split()) or type(text).__name__


async def _run_once(
    runner: SubagentRunner, handle: TaskHandle, loop: AgentLoop, message: str
) -> tuple[TaskStatus, str, str | None]:
    if handle.stop is not None:  # stopped before it could start
        return handle.stop[0], loop.last_text(), handle.stop[1]
    task = asyncio.create_task(loop.run(message), name=f"subagent-{handle.record.task_id}")
    handle.loop_task = task
    watchdog = asyncio.create_task(_watch(runner, handle, task))
    try:
        outcome: RunOutcome = await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if (current is not None and current.cancelling()) or handle.stop is None:
            raise  # the caller itself was cancelled: propagate down and up
        status, reason = handle.stop
        return status, loop.last_text(), reason
    finally:
        watchdog.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watchdog
    return TASK_STATUS_OF_RUN[outcome.status], outcome.marked_result(), outcome.error


async def _watch(runner: SubagentRunner, handle: TaskHandle, task: asyncio.Task[RunOutcome]) -> None:
    """Stop the child at its wall-clock deadline, or when its model stream makes no progress for too long.

    Idle time counts only while no tool call is in flight: tools have their own timeouts, and a
    tool may be waiting for the person to approve it.
    """
    idle = float(runner.settings.task_tool.idle_timeout_seconds)
    wall_deadline = handle.started + handle.timeout
    while not task.done():
        now = time.monotonic()
        if now >= wall_deadline:
            runner.stop(handle, "timed_out", f"Subagent task timed out after {round(handle.timeout * 1000)}ms")
            return
        idle_deadline = handle.last_progress + idle if handle.in_flight_tools == 0 else now + idle
        if now >= idle_deadline:
            elapsed = round((now - handle.started) * 1000)
            runner.stop(
                handle,
                "timed_out",
                f"Subagent task timed out after {elapsed}ms (no model output or tool progress for "
                f"{idle:g}s, task_tool.idle_timeout_seconds)",
            )
            return
        await asyncio.sleep(max(0.005, min(wall_deadline, idle_deadline) - now))


def schema_problem(text: str, schema: dict[str, Any]) -> str | None:
    """Why `text` is not a JSON document satisfying `schema`, or None when it is.

    Raises when the check itself fails (a pattern out of time, a schema that turned out unusable).
    """
    from agentcli.subagents.schema import compile_schema, errors

    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        document = json.loads(body)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at line {exc.lineno})"
    found = errors(compile_schema(schema), document)  # SchemaCheckError when a pattern runs out of time
    if not found:
        return None
    first = found[0]
    where = "/".join(str(p) for p in first.path) or "(root)"
    return f"{where}: {first.message}" + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
