"""The worker's side of one remote task (`RemoteAgent`, one of the subagents a `host.RemoteWorker` actor runs): it
checks the snapshot out into a folder of its own, runs the subagent's `AgentLoop` there under the Bash sandbox (where
the worker has one) and under a copy of the parent's permission policy (its questions for the person go to the
parent in the stream and come back through `answer`, its mode follows the parent's), streams its events back in
batches, and at the end hands back what it changed."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli import redact
from agentcli.events import Event, ToolCallStartedEvent, UsageEvent
from agentcli.subagents.remote import snapshot
from agentcli.subagents.remote.job import (
    Asked,
    Finished,
    HookCall,
    McpCall,
    PolicyRules,
    Question,
    RemoteError,
    RemoteJob,
    ToolHere,
    Unread,
)
from agentcli.tools import ToolError, ToolResult

if TYPE_CHECKING:
    from agentcli.agent import RunOutcome
    from agentcli.events import EventSink
    from agentcli.hooks import HookVerdict
    from agentcli.tools import Answer, Approval, PermissionPolicy, PermissionRequest, Tool, ToolArgs, ToolContext

log = logging.getLogger(__name__)


class RemoteAgent:
    """One remote subagent: `prepare` checks its snapshot out and builds its loop, each `run` streams lists of events
    then the turn's `RunOutcome`, `finish` hands back what it changed and cleans up."""

    def __init__(self) -> None:
        self.loop: Any = None
        self.job: RemoteJob | None = None
        self.stopped: tuple[str, str] | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._repo: tuple[Any, Path, Path] | None = None
        self._queue: asyncio.Queue[Event | Asked] = asyncio.Queue()
        self._close: Any = None
        self._policy: PermissionPolicy | None = None
        self._waiting: dict[int, asyncio.Future[Any]] = {}  # asked of the parent, not yet answered
        self.calls = 0  # the subagent's own tool calls
        self.asked = 0  # questions and calls sent to the parent
        self._letters: list[str] = []  # sent to the subagent, forwarded by the parent, not read yet

    async def prepare(self, job: RemoteJob, key: str) -> None:
        """Check the snapshot out into a folder of this worker's and build the subagent's loop there, talking to its
        model with `key` (masked in whatever this process logs or says)."""
        if not key:
            raise RemoteError("the task came without its model key")
        redact.register_secret(key)
        self.job = job
        self._folder = tempfile.TemporaryDirectory(prefix="agentcli-remote-")
        self._repo = repo = await asyncio.to_thread(snapshot.checkout, job.bundle, Path(self._folder.name))
        self.loop, self._policy, self._close = _build(job, repo[1], self, key)

    async def _to_parent(self, make: Callable[[int], Asked]) -> Any:
        """Send the parent a question or a call (numbered) with the events; its reply comes back through `answer`."""
        self.asked += 1
        number = self.asked
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        self._queue.put_nowait(make(number))
        try:
            return await future
        finally:
            self._waiting.pop(number, None)

    async def ask_parent(self, request: PermissionRequest) -> Approval | Answer:
        """The approver of the worker's policy: the parent's approver answers."""
        reply: Approval | Answer = await self._to_parent(lambda number: Question(number, request))
        return reply

    async def call(self, server: str, tool: str, arguments: dict[str, Any], agent: str) -> tuple[str, bool]:
        """The `McpCaller` of the parent's MCP tools here: the parent calls its server."""
        reply = await self._to_parent(lambda number: McpCall(number, server, tool, arguments, agent))
        if isinstance(reply, str):
            raise ToolError(reply)
        text, is_error = reply
        return str(text), bool(is_error)

    async def run_here(self, name: str, arguments: dict[str, Any], tool_call_id: str) -> ToolResult:
        """Run one of the task's tools that live at the parent (its messaging tools) there."""
        reply = await self._to_parent(lambda number: ToolHere(number, name, arguments, tool_call_id))
        if isinstance(reply, str):
            raise ToolError(reply)
        result: ToolResult = reply
        return result

    async def deliver(self, letters: list[str]) -> None:
        """Letters sent to the subagent (by its parent, a sibling, the person): read at its next turn boundary."""
        self._letters.extend(letters)

    def read_letters(self) -> list[str]:
        found, self._letters = self._letters, []
        return found

    def has(self, event: str) -> bool:
        """`Hooks`: whether the person has hooks for `event` (they run at the parent)."""
        return self.job is not None and event in self.job.hook_events

    async def fire(self, event: str, data: Mapping[str, Any], *, session_id: str, agent: str, emit: EventSink,
                   target: str | None = None, tool_call_id: str | None = None) -> HookVerdict:
        """`Hooks`: the parent's engine fires them (and reports their runs); its verdict."""
        verdict: HookVerdict = await self._to_parent(lambda number: HookCall(
            number, event, dict(data), session_id, agent, target, tool_call_id))
        return verdict

    async def answer(self, number: int, reply: Any, rules: PolicyRules) -> None:
        """The parent's reply to question or call `number` (none waits for it any more: ignored), and its
        permission rules by then."""
        await self.follow(rules)
        future = self._waiting.get(number)
        if future is not None and not future.done():
            future.set_result(reply)

    async def follow(self, rules: PolicyRules) -> None:
        """The parent's mode or rules changed (Shift+Tab, a program's `set_permission_mode` or added rules)."""
        if self._policy is not None:
            rules.apply(self._policy)

    def guarded(self, event: Event) -> None:
        """Queue `event` for the parent; stop the loop at once when the task's budgets are spent (the parent's
        supervisor checks the same, a round trip later)."""
        self._queue.put_nowait(event)
        job, loop = self.job, self.loop
        if job is None or loop is None or event.session_id != job.session.id:
            return
        budgets = job.budgets
        if isinstance(event, ToolCallStartedEvent):
            self.calls += 1
            if self.calls > budgets.max_tool_calls:
                loop.stop("budget_exceeded", f"tool call limit reached ({budgets.max_tool_calls} calls)")
        elif isinstance(event, UsageEvent) and (reason := budgets.exceeded(loop.session.ledger.total)):
            loop.stop("budget_exceeded", reason)

    async def run(self, message: str) -> AsyncIterator[list[Event | Asked | Unread] | RunOutcome]:
        """One turn of the loop: its events and questions in batches as they come, then its outcome."""
        queue = self._queue
        run = asyncio.create_task(self.loop.run(message))
        if self.stopped is not None:
            self.loop.stop(*self.stopped)
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, run}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    break
                batch: list[Event | Asked | Unread] = [getter.result()]
                while not queue.empty():
                    batch.append(queue.get_nowait())
                yield batch
            rest: list[Event | Asked | Unread] = [queue.get_nowait() for _ in range(queue.qsize())]
            if self._letters:  # forwarded too late for this turn: the parent keeps them for the next
                rest.append(Unread(self.read_letters()))
            if rest:
                yield rest
            yield run.result()
        finally:
            run.cancel()

    def stop(self, status: str, reason: str) -> bool:
        """End the running turn as the parent's supervisor asked (a cancel, a budget, a timeout)."""
        if self.stopped is None:
            self.stopped = (status, reason)
        return bool(self.loop is not None and self.loop.stop(status, reason))

    async def finish(self) -> Finished:
        """What the task changed (none, with the problem, when it cannot be read); the folder is removed."""
        try:
            if self._close is not None:
                await self._close()
            if self._repo is None or self.job is None:
                return Finished([], "the task never started")
            shadow, work, index = self._repo
            found = await asyncio.to_thread(snapshot.changes, shadow, work, index, self.job.snapshot)
            return Finished(found)
        except Exception as exc:
            log.warning("remote task: changes not collected", exc_info=True)
            return Finished([], f"{type(exc).__name__}: {exc}"[:300])
        finally:
            if self._folder is not None:
                self._folder.cleanup()


def _build(job: RemoteJob, work: Path, agent: RemoteAgent, key: str) -> tuple[Any, PermissionPolicy, Any]:
    """The subagent's loop in `work`, its permission policy, and what closes its sandbox and background commands
    after; the parent asks the person, calls its MCP servers and fires the person's hooks for it (through
    `agent`)."""
    from agentcli.agent import AgentLoop
    from agentcli.llm import ProviderPool, cost_usd
    from agentcli.mcp import tool_class
    from agentcli.subagents.agent_kit import AgentKit
    from agentcli.subagents.definitions.skill_tool import SkillTool
    from agentcli.subagents.messaging.tools import ListAgentsTool, SendMessageTool
    from agentcli.subagents.toolbox import Toolbox
    from agentcli.tools import AskUserQuestionTool, FileLocks, PermissionPolicy, defer_rule, session_sandbox

    model = dataclasses.replace(job.model, api_key=key)
    session = dataclasses.replace(job.session, workspace=work, model=model)
    settings = job.settings
    pool = ProviderPool.from_settings(settings)
    sandbox = session_sandbox(settings, work)
    permissions = PermissionPolicy(job.rules.mode, approver=agent.ask_parent if job.asks else None,  # type: ignore[arg-type]
                                   non_interactive=job.non_interactive)
    job.rules.apply(permissions)
    permissions.bash_unsandboxed = sandbox.unsandboxed_reason()
    kit = AgentKit(settings, work, permissions, FileLocks(), pool, lambda _session: [], sandbox)
    tools = Toolbox.builtin().build(name for name in job.tool_names if name not in job.here)
    tools += [tool_class(t.server, t.name, t.description, t.schema, t.read_only, agent)() for t in job.mcp]
    tools += [_here(cls, agent, job.here[cls.name])()
              for cls in (SendMessageTool, ListAgentsTool, SkillTool, AskUserQuestionTool) if cls.name in job.here]
    context = kit.tool_context(session, write_paths=job.write_paths)
    loop = AgentLoop(session, pool.get(model), tools, context, agent.guarded, max_turns=job.max_turns, price=cost_usd,
                     compactor=kit.compactor(session, context), lean_below=settings.context.lean_below_tokens,
                     hooks=agent if job.hook_events else None, defer=defer_rule(settings.tools.defer),
                     inbox=agent.read_letters)

    async def close() -> None:
        await kit.shells.aclose()  # its background commands end with the task
        await kit.lsp.aclose()
        sandbox.close()

    return loop, permissions, close


def _here(cls: type[Tool[Any]], agent: RemoteAgent, description: str) -> type[Tool[Any]]:
    """A stand-in for the tool class `cls` (its name, schema, traits; the parent's tool's `description`): its calls
    run at the parent."""

    async def run(self: Tool[Any], args: ToolArgs, ctx: ToolContext) -> ToolResult:
        return await agent.run_here(cls.name, args.model_dump(mode="json", exclude_unset=True), ctx.tool_call_id)

    return type(cls.__name__, (cls,), {"__init__": lambda self: None, "run": run,
                                       "description": lambda self: description})
