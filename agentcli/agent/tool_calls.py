"""One turn's tool calls: parse, hooks, permission, run under a deadline, report; concurrency-safe calls together."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agentcli.agent.edit_diagnostics import DIAGNOSTICS_KEY, touch_read, watch_edit
from agentcli.agent.session import Session
from agentcli.diffs import FileDiff
from agentcli.events import Event, EventSink, ToolCallFinishedEvent, ToolCallStartedEvent, ToolOutputEvent
from agentcli.hooks import Hooks, HookVerdict
from agentcli.llm import ToolResultBlock, ToolUseBlock
from agentcli.status import PERMISSION_DENIED, RunStatus
from agentcli.text import defang_tags
from agentcli.tools import Tool, ToolContext, ToolError, ToolResult

log = logging.getLogger(__name__)

CANCELLED_RESULT = "Cancelled: the run was stopped before this tool call finished."
OUTPUT_TAIL_CHARS = 600  # the most of a running tool's output one ToolOutputEvent carries
OUTPUT_EVERY_SECONDS = 0.25  # at most this often


class ToolHost(Protocol):
    """What the tool calls need of the loop that runs them."""

    session: Session
    tools: dict[str, Tool[Any]]
    unavailable: dict[str, str]
    context: ToolContext
    hooks: Hooks | None
    emit: EventSink
    stopped: tuple[RunStatus, str] | None

    def stop(self, status: RunStatus, reason: str) -> bool:
        """End the running turn with `status`."""
        ...

    def tool_spent(self, spend: dict[str, Any]) -> None:
        """A tool made a model request of its own (`ToolResult.metadata["spend"]`): count it as this agent's."""
        ...


def report(sink: EventSink, event: Event) -> None:
    """Hand `event` to `sink`; a broken consumer must not break the agent."""
    try:
        sink(event)
    except Exception:
        log.exception("event consumer failed on %s", event.kind)


async def fire_hook(host: ToolHost, event: str, data: dict[str, Any], target: str | None = None,
                    call_id: str | None = None) -> HookVerdict:
    """Run the person's `event` hooks for `host`'s agent; `continue: false` ends the run at its next checkpoint."""
    assert host.hooks is not None
    session = host.session
    verdict = await host.hooks.fire(event, data, session_id=session.id, agent=session.agent,
                                    emit=lambda e: report(host.emit, e), target=target, tool_call_id=call_id)
    if verdict.stop:
        host.stop("cancelled", f"stopped by a {event} hook: {verdict.stop_reason or verdict.reason}")
    return verdict


class ToolCalls:
    """Runs the tool calls of one agent's turns against its host loop's tools, context and hooks."""

    def __init__(self, host: ToolHost) -> None:
        self.host = host

    def _event(self, event: Event) -> None:
        report(self.host.emit, event)

    async def run(self, calls: list[ToolUseBlock], results: list[ToolResultBlock | None]) -> None:
        """Run one turn's calls into `results` (by index): consecutive concurrency-safe calls together, others
        alone. Calls left without a result (a stop, a cancel) are the caller's to answer."""

        async def one(index: int) -> None:
            results[index] = await self._run_one(calls[index])

        await asyncio.sleep(0)  # cancellation checkpoint: a stop during the answer runs no tool
        if self.host.stopped is not None:
            return  # `stop` asked from inside: every call gets the cancelled result
        for group in self._groups(calls):
            if self.host.stopped is not None:
                break  # stopped from inside by an earlier call (a tool-call limit): the rest never start
            if len(group) == 1:
                await one(group[0])
            else:
                async with asyncio.TaskGroup() as tg:
                    for index in group:
                        tg.create_task(one(index))

    def _groups(self, calls: list[ToolUseBlock]) -> list[list[int]]:
        groups: list[list[int]] = []
        previous_safe = False
        for index, call in enumerate(calls):
            safe = self._safe(call)
            if safe and previous_safe:
                groups[-1].append(index)
            else:
                groups.append([index])
            previous_safe = safe
        return groups

    def _safe(self, call: ToolUseBlock) -> bool:
        tool = self.host.tools.get(call.name)
        return tool is not None and tool.concurrency_safe and call.input_error is None

    async def _run_one(self, call: ToolUseBlock) -> ToolResultBlock:
        host = self.host
        session = host.session
        tool = host.tools.get(call.name)
        timing = _Timing(time.perf_counter())
        args: Any = None
        summary = _raw_summary(call.input)
        error: str | None = None
        if tool is None:
            error = host.unavailable.get(call.name) or (
                f"Unknown tool '{call.name}'. Available tools: {', '.join(host.tools)}."
            )
        elif call.input_error is not None:
            error = f"Invalid arguments for {call.name}: {call.input_error}"
        else:
            try:
                args = tool.parse(call.input)
                summary = tool.summary(args)
            except ToolError as exc:
                error = str(exc)
        self._event(
            ToolCallStartedEvent(
                session_id=session.id,
                agent=session.agent,
                tool_call_id=call.id,
                name=call.name,
                args=call.input,
                summary=summary,
            )
        )
        result = ToolResult(error, is_error=True) if error is not None else None
        if result is None and host.stopped is not None:
            result = ToolResult(CANCELLED_RESULT, is_error=True)  # its own start went over a limit: it never runs
        try:
            if result is None:
                assert tool is not None
                result = await self._execute(tool, args, call, timing)
                if isinstance(spend := result.metadata.get("spend"), dict):
                    host.tool_spent(spend)
        except asyncio.CancelledError:
            self._finished(call, ToolResult(CANCELLED_RESULT, is_error=True), timing)
            raise
        self._finished(call, result, timing)
        return ToolResultBlock(tool_use_id=call.id, content=result.content, is_error=result.is_error,
                               images=result.images)

    async def _execute(self, tool: Tool[Any], args: Any, call: ToolUseBlock, timing: _Timing) -> ToolResult:
        host = self.host
        tail = OutputTail(lambda text, total: self._event(ToolOutputEvent(
            session_id=host.session.id, agent=host.session.agent, tool_call_id=call.id, name=tool.name,
            tail=text, total_bytes=total)))
        ctx = dataclasses.replace(host.context, tool_call_id=call.id, output=tail.feed)
        try:
            if host.hooks is not None and (refused := await self._tool_hook("PreToolUse", call)) is not None:
                return refused
            result = await self._execute_in(tool, args, ctx, timing)
            if host.hooks is not None and not result.is_error:
                response = {"content": result.content, "is_error": False, "files_modified": result.files_modified}
                if (feedback := await self._tool_hook("PostToolUse", call, response)) is not None:
                    result = dataclasses.replace(result, content=f"{result.content}\n\n{feedback.content}")
            return result
        finally:
            tail.close()

    async def _tool_hook(self, event: str, call: ToolUseBlock, response: dict[str, Any] | None = None
                         ) -> ToolResult | None:
        """PreToolUse: the refusal the model reads when a hook blocks the call (it never runs); PostToolUse: what
        a hook that blocks says about the finished call (added to its result). None: nothing to say."""
        data: dict[str, Any] = {"tool_name": call.name, "tool_input": call.input, "tool_use_id": call.id}
        if response is not None:
            data["tool_response"] = response
        verdict = await fire_hook(self.host, event, data, call.name, call.id)
        notes = [defang_tags(c) for c in verdict.context]
        if verdict.blocked or verdict.stop:
            said = defang_tags(verdict.reason if verdict.blocked else verdict.stop_reason or verdict.reason)
            head = f"Blocked by a {event} hook: {said}" if event == "PreToolUse" else f"A {event} hook says: {said}"
            code = {"code": PERMISSION_DENIED} if event == "PreToolUse" else {}  # a refusal, like the policy's
            return ToolResult("\n".join([head, *notes]), is_error=True, metadata=code)
        if notes and event == "PostToolUse":
            return ToolResult("\n".join(f"[{event} hook] {n}" for n in notes))
        return None

    async def _execute_in(self, tool: Tool[Any], args: Any, ctx: ToolContext, timing: _Timing) -> ToolResult:
        asked = time.perf_counter()
        try:
            decision = await ctx.permissions.check(tool, args, ctx)
        finally:
            timing.waited += time.perf_counter() - asked  # the person's time, not the tool's
        if not decision.allowed:  # the code tells a refusal from a failure (stream-json's permission_denials)
            return ToolResult(decision.reason, is_error=True, metadata={"code": PERMISSION_DENIED})
        if (changed := decision.updated_input) is not None:  # the approver changed the arguments
            try:
                args = tool.parse(changed)
            except ToolError as exc:
                return ToolResult(f"The approved arguments are invalid: {exc}", is_error=True)
        watch = await watch_edit(tool, args, ctx)  # an edit: what its language server knows before it
        result = await self._run_tool(tool, args, ctx)
        if watch is not None:
            return await watch.finish(result, ctx)  # the diagnostics it introduced, appended
        touch_read(tool, args, ctx, result)
        return result

    async def _run_tool(self, tool: Tool[Any], args: Any, ctx: ToolContext) -> ToolResult:
        """The call itself, under its deadline (which starts after approval); a failure is a result."""
        deadline = None if tool.own_time_limit else ctx.tool_timeout_seconds
        try:
            async with asyncio.timeout(deadline) as timer:
                return await tool.run(args, ctx)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        except Exception as exc:  # a tool bug must not end the run: the model reads it and goes on
            if isinstance(exc, TimeoutError) and timer.expired():
                return ToolResult(f"{tool.name} timed out after {ctx.tool_timeout_seconds:g}s", is_error=True)
            log.exception("tool %s failed", tool.name)
            return ToolResult(f"{tool.name} failed: {type(exc).__name__}: {exc}", is_error=True)

    def _finished(self, call: ToolUseBlock, result: ToolResult, timing: _Timing) -> None:
        elapsed = time.perf_counter() - timing.start
        self._event(
            ToolCallFinishedEvent(
                session_id=self.host.session.id,
                agent=self.host.session.agent,
                tool_call_id=call.id,
                name=call.name,
                is_error=result.is_error,
                output=result.content,
                duration_ms=(elapsed - timing.waited) * 1000,
                approval_ms=timing.waited * 1000,
                files_modified=result.files_modified,
                code=_text(result.metadata.get("code")),
                short_result=_text(result.metadata.get("short_result")),
                diff=_diff(result),
                todos=_todos(result.metadata.get("todos")),
                tool_use_result=search if isinstance(search := result.metadata.get("search"), dict) else None,
                diagnostics=_diagnostics(result),
            )
        )


@dataclass(slots=True)
class _Timing:
    """When a tool call started, and how long of that it waited for the person's approval."""

    start: float
    waited: float = 0.0


class OutputTail:
    """Keeps the end of a running tool's output and reports it at most every `OUTPUT_EVERY_SECONDS`."""

    def __init__(self, report: Callable[[str, int], None]) -> None:
        self.report = report
        self.buffer = bytearray()
        self.total = 0
        self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None

    def feed(self, data: bytes) -> None:
        """Output arrived: keep its end; report now, or soon when a report went out moments ago."""
        self.total += len(data)
        self.buffer += data
        if len(self.buffer) > OUTPUT_TAIL_CHARS * 4:
            del self.buffer[: len(self.buffer) - OUTPUT_TAIL_CHARS * 4]
        wait = self.last + OUTPUT_EVERY_SECONDS - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        """Report the output's end now."""
        self.timer = None
        self.last = time.monotonic()
        text = self.buffer.decode("utf-8", errors="replace")[-OUTPUT_TAIL_CHARS:]
        self.report(text, self.total)

    def close(self) -> None:
        """The tool finished: no report after this."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def _todos(value: object) -> list[dict[str, str]] | None:
    """A TodoWrite result's list, as plain strings, or None."""
    if not isinstance(value, list):
        return None
    return [{k: str(v) for k, v in entry.items()} for entry in value if isinstance(entry, dict)]


def _text(value: object) -> str | None:
    """A metadata entry that must be text (an error code, a short result), or None."""
    return value if isinstance(value, str) else None


def _diff(result: ToolResult) -> FileDiff | None:
    """The diff a successful write reports in its metadata, or None."""
    diff = result.metadata.get("diff")
    return diff if isinstance(diff, FileDiff) and not result.is_error else None


def _diagnostics(result: ToolResult) -> list[dict[str, Any]]:
    """The findings a successful edit introduced (`edit_diagnostics`), or none."""
    found = result.metadata.get(DIAGNOSTICS_KEY)
    return [d for d in found if isinstance(d, dict)] if isinstance(found, list) and not result.is_error else []


def _raw_summary(raw: dict[str, Any]) -> str:
    text = json.dumps(raw, ensure_ascii=False)
    return text if len(text) <= 120 else text[:119] + "…"
