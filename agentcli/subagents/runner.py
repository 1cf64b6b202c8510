"""SubagentRunner: builds isolated child sessions for Task calls and runs them under limits.

One runner serves a whole delegation tree (the main agent and every subagent below it). It owns
what siblings must not share mutably: the concurrency queue, write leases, and the task table.
Each child gets a fresh history, its type's prompt and tools, its own ToolContext, and relays
every event to its parent wrapped in `SubagentEvent`.

Delegation never widens what an agent may do. A subagent's write confinement is inherited and
intersected down the tree: a child writes only where its own `write_paths` AND every ancestor's
allow (`ToolContext.write_scopes`), gets no Bash below a confined ancestor, and below a read-only
type gets read-only tools only (an empty scope: no write matches).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any

from agentcli.agent.loop import AgentLoop, RunOutcome
from agentcli.agent.session import Session, new_id
from agentcli.events import (
    Event,
    EventSink,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentBlockUpdatedEvent,
    SubagentEvent,
)
from agentcli.llm.base import Message, Usage
from agentcli.llm.models import ResolvedModel, resolve_model, with_effort
from agentcli.status import DELEGATION_FAILED, FINISHED_TASK_STATUSES, TASK_ERROR_CODES, TaskStatus, short_result
from agentcli.store.records import TaskRecord, ToolCount
from agentcli.subagents import results
from agentcli.subagents.limits import (
    ConcurrencyLimiter,
    LimitReachedError,
    Slot,
    WriteLeases,
    cycle_error,
    depth_error,
    normalize_prompt,
)
from agentcli.text import defang_tags
from agentcli.tools.base import FileLocks, Tool, ToolContext, ToolResult
from agentcli.tools.registry import ALL_TOOLS, build_tools
from agentcli.tools.shell_env import session_bash_env

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.llm.models import ProviderPool
    from agentcli.store.db import Store
    from agentcli.subagents.registry import AgentRegistry, AgentType
    from agentcli.subagents.task_tool import TaskArgs
    from agentcli.tools.permissions import PermissionPolicy

log = logging.getLogger(__name__)
TASK_TOOL_NAMES = ("Task", "TaskOutput", "TaskCancel")
WRITE_TOOLS = ("Write", "Edit", "MultiEdit")
PriceFn = Callable[[str, str, Usage], float | None]


@dataclass(slots=True)
class ParentLink:
    """The agent that makes Task calls: its session, its event sink, and its own task (None for main)."""

    session: Session
    emit: EventSink
    task_id: str | None = None


@dataclass(slots=True)
class TaskHandle:
    """A Task call in flight (or finished) in this process."""

    record: TaskRecord
    agent_type: AgentType
    model: ResolvedModel
    session: Session
    parent: ParentLink
    user_message: str
    timeout: float
    slot: Slot
    write_paths: list[str] | None = None
    write_scopes: tuple[tuple[str, ...], ...] = ()  # the ancestors' confinement (see the module docstring)
    output_schema: dict[str, Any] | None = None
    background: bool = False
    started: float = 0.0
    last_progress: float = 0.0
    in_flight_tools: int = 0
    loop: AgentLoop | None = None
    loop_task: asyncio.Task[RunOutcome] | None = None
    stop: tuple[TaskStatus, str] | None = None  # (status, reason) when a limit or a person stopped it
    cancel_requested: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    tool_counts: Counter[str] = field(default_factory=Counter)
    files: dict[str, None] = field(default_factory=dict)

    def touch(self) -> None:
        """Something happened: the subagent is not idle."""
        self.last_progress = time.monotonic()


def _error(message: str, code: str) -> ToolResult:
    return ToolResult(message, is_error=True, metadata={"code": code, "short_result": DELEGATION_FAILED})


def _now() -> datetime:
    return datetime.now(UTC)


class SubagentRunner:
    """Runs Task calls for one session tree."""

    def __init__(
        self,
        *,
        settings: Settings,
        registry: AgentRegistry,
        pool: ProviderPool,
        workspace: Path,
        permissions: PermissionPolicy,
        store: Store | None = None,
        file_locks: FileLocks | None = None,
        price: PriceFn | None = None,
        instructions: str = "",
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.pool = pool
        self.workspace = workspace
        self.permissions = permissions
        self.store = store
        self.file_locks = file_locks or FileLocks()
        self.price = price
        self.instructions = instructions  # project AGENTS.md / CLAUDE.md, read once
        self.bash_env = session_bash_env(settings)  # no provider keys; computed once per session tree
        cfg = settings.task_tool
        self.limiter = ConcurrencyLimiter(cfg.max_concurrent, cfg.on_limit)
        self.leases = WriteLeases()
        self.handles: dict[str, TaskHandle] = {}
        self._numbers: dict[str, itertools.count[int]] = {}
        self._background: set[asyncio.Task[ToolResult]] = set()
        self._notices: dict[str, list[str]] = {}

    # --- tools for agents -----------------------------------------------------------------------

    def tools_for(self, parent: ParentLink, names: list[str] | None = None) -> list[Tool[Any]]:
        """Fresh tool instances for one agent; the Task tools only while its depth allows delegation."""
        from agentcli.subagents.task_tool import TaskCancelTool, TaskOutputTool, TaskTool

        wanted = list(ALL_TOOLS) if names is None else [n for n in names if n in ALL_TOOLS]
        tools: list[Tool[Any]] = list(build_tools(wanted))
        if self.can_delegate(parent.session.depth) and (names is None or "Task" in names):
            tools += [TaskTool(self, parent), TaskOutputTool(self), TaskCancelTool(self)]
        return tools

    def tool_context(
        self,
        session: Session,
        *,
        write_paths: list[str] | None = None,
        write_scopes: tuple[tuple[str, ...], ...] = (),
        progress: Callable[[], None] | None = None,
    ) -> ToolContext:
        """The ToolContext of one agent of this tree (shared permissions and file locks, its own todos)."""
        agent = self.settings.agent
        return ToolContext(
            workspace=self.workspace,
            agent=session.agent,
            session_id=session.id,
            permissions=self.permissions,
            file_locks=self.file_locks,
            bash_timeout_seconds=agent.bash_timeout_seconds,
            bash_output_limit_bytes=agent.bash_output_limit_bytes,
            tool_timeout_seconds=agent.tool_timeout_seconds,
            write_paths=write_paths,
            write_scopes=write_scopes,
            progress=progress or (lambda: None),
            bash_env=self.bash_env,
        )

    def withheld(self, depth: int) -> dict[str, str]:
        """Why an agent past the depth limit gets no Task tools (said to a model that calls one anyway)."""
        if self.can_delegate(depth) or not self.settings.task_tool.enabled:
            return {}
        message = depth_error(depth, self.settings.task_tool.max_depth) or ""
        return dict.fromkeys(TASK_TOOL_NAMES, message)

    def can_delegate(self, depth: int) -> bool:
        """Whether an agent at `depth` is offered the Task tool."""
        cfg = self.settings.task_tool
        return cfg.enabled and depth < cfg.max_depth

    def task_tool_description(self, parent: ParentLink) -> str:
        """The Task tool's description: the bundled text plus the available types."""
        from agentcli.prompts import load_prompt

        lines = [load_prompt("tools/task.md").strip(), "", "Available agent types:"]
        scopes = self.confinement(parent)
        for agent in self.registry.types.values():
            if agent.name in parent.session.chain[1:]:
                continue  # delegating to an ancestor's type would be refused as circular
            if agent.read_only or () in scopes:
                access = "read-only"
            elif scopes:
                access = "can edit inside your write_paths, no commands"
            else:
                access = "can edit and run commands"
            model = agent.model or "inherit"
            lines.append(defang_tags(f"- {agent.name} ({model}, {access}): {agent.description.strip()}"))
        return "\n".join(lines)

    def notices_for(self, session_id: str) -> Callable[[], list[str]]:
        """The notices hook of an AgentLoop: finished background tasks, told once."""
        return lambda: self._notices.pop(session_id, [])

    # --- Task -----------------------------------------------------------------------------------

    async def run_task(self, args: TaskArgs, parent: ParentLink, tool_call_id: str) -> ToolResult:
        """Validate, resolve and run one Task call; every failure becomes a tool error, never an exception."""
        if not self.registry.types:
            return _error("No subagents available for delegation", "NOT_FOUND")
        previous: TaskRecord | None = None
        if args.resume:
            previous = self._finished_record(args.resume)
            if previous is None:
                return _error(f"Invalid parameters: resume: no finished task '{args.resume}'", "INVALID_PARAM")
            agent_type = self.registry.get(previous.subagent_type)
        else:
            agent_type = self.registry.resolve(args.subagent_type, self.settings.task_tool.type_fallback)
        if agent_type is None:
            wanted = previous.subagent_type if previous else args.subagent_type
            available = ", ".join(self.registry.names())
            return _error(f"Subagent '{wanted}' not found. Available: {available}", "NOT_FOUND")
        session = parent.session
        problem = depth_error(session.depth, self.settings.task_tool.max_depth) or cycle_error(
            session.chain, session.lineage, agent_type.name, args.prompt
        )
        if problem:
            return _error(problem, "CIRCULAR")
        try:
            # A Task call's effort overrides the agent file's, which overrides the model's own thinking setting.
            model = with_effort(self._child_model(args.model, agent_type, parent, previous),
                                args.effort or agent_type.effort)
        except Exception as exc:  # a model that does not resolve: a missing key, an unknown provider
            return _error(f"Failed to initialize subagent: {exc}", "INTERNAL_ERROR")
        scopes = self.confinement(parent)
        names = self._child_tool_names(agent_type, session.depth + 1, args.write_paths, scopes)
        if isinstance(names, ToolResult):
            return names
        handle = self._new_handle(args, parent, tool_call_id, agent_type, model, previous, scopes)
        if args.write_paths:
            conflicts = self.leases.acquire(handle.record.task_id, args.write_paths, ignore=self._ancestors(parent))
            if conflicts:
                return _error(f"Cannot acquire file locks. Conflicts: {'; '.join(conflicts)}", "CONFLICT")
        # A parent that waits on its (foreground) child gives its slot back meanwhile, before the child
        # asks for one: nested delegation never deadlocks, and never fails for want of the parent's slot.
        parent_slot = None
        if not args.run_in_background and parent.task_id in self.handles:
            parent_slot = self.handles[parent.task_id].slot
            self.limiter.suspend(parent_slot)
        try:
            if self.limiter.on_limit == "error" and not self.limiter.try_acquire(handle.slot):
                self.leases.release(handle.record.task_id)
                return _error("Maximum concurrent tasks limit reached", "LIMIT")
            self.handles[handle.record.task_id] = handle
            self._save(handle)
            self._emit_parent(
                handle,
                SubagentBlockAddedEvent(
                    session_id=session.id,
                    agent=session.agent,
                    task_id=handle.record.task_id,
                    parent_tool_call_id=tool_call_id,
                    subagent_type=agent_type.name,
                    description=handle.record.description,
                    model=model.display,
                    depth=handle.session.depth,
                ),
            )
            log.info(
                "subagent %s created: type %s, model %s, depth %d",
                handle.record.task_id, agent_type.name, model.display, handle.session.depth,
            )
            child_tools = self.tools_for(ParentLink(handle.session, self._relay(handle), handle.record.task_id), names)
            if args.run_in_background:
                handle.background = True
                job = asyncio.create_task(self._execute(handle, child_tools), name=f"task-{handle.record.task_id}")
                self._background.add(job)
                job.add_done_callback(self._background.discard)
                return ToolResult(
                    f"Started background task {handle.record.task_id} "
                    f"{defang_tags(f'({agent_type.name}, {model.display}): {handle.record.description}')}. "
                    "You will be told when it finishes; "
                    f'TaskOutput(task_id="{handle.record.task_id}") returns its status and result, '
                    "TaskCancel stops it.",
                    metadata={"task_id": handle.record.task_id, "background": True},
                )
            return await self._execute(handle, child_tools)
        finally:
            if parent_slot is not None:
                await self.limiter.resume(parent_slot)

    def confinement(self, parent: ParentLink) -> tuple[tuple[str, ...], ...]:
        """The write scopes every child of `parent` inherits: the parent's own and its ancestors'.

        The main agent passes none. A confined subagent passes its scopes plus its own write_paths;
        a read-only type passes an empty scope (no write can match it).
        """
        handle = self.handles.get(parent.task_id) if parent.task_id else None
        if handle is None:
            return ()
        scopes = handle.write_scopes
        if handle.write_paths is not None:
            scopes = (*scopes, tuple(handle.write_paths))
        if handle.agent_type.read_only and () not in scopes:
            scopes = (*scopes, ())
        return scopes

    def _ancestors(self, parent: ParentLink) -> set[str]:
        """The task ids of `parent` and the subagents above it (their write leases contain the child's)."""
        found: set[str] = set()
        task_id = parent.task_id
        while task_id is not None and task_id not in found and task_id in self.handles:
            found.add(task_id)
            task_id = self.handles[task_id].parent.task_id
        return found

    def _finished_record(self, task_id: str) -> TaskRecord | None:
        handle = self.handles.get(task_id)
        record = handle.record if handle else (self.store.get_task(task_id) if self.store else None)
        if record is None or record.status not in FINISHED_TASK_STATUSES or not record.child_session_id:
            return None
        return record

    def _child_model(
        self, requested: str | None, agent_type: AgentType, parent: ParentLink, previous: TaskRecord | None
    ) -> ResolvedModel:
        if previous is not None and previous.model_used:
            requested = requested or previous.model_used
        spec = (requested or agent_type.model or "inherit").strip()
        if spec == "inherit":
            return parent.session.model
        models = self.settings.models
        if spec in ("main", "light") or spec in models.aliases or ":" in spec:
            return resolve_model(spec, self.settings)
        return resolve_model(f"{models.main.provider}:{spec}", self.settings)  # a bare model id

    def _child_tool_names(
        self,
        agent_type: AgentType,
        depth: int,
        write_paths: list[str] | None,
        scopes: tuple[tuple[str, ...], ...] = (),
    ) -> list[str] | ToolResult:
        available = list(ALL_TOOLS) + (list(TASK_TOOL_NAMES) if self.can_delegate(depth) else [])
        allowed = agent_type.allowed_tools(available)
        denied = set(self.settings.task_tool.deny_tools)
        names = [n for n in allowed if n not in denied]
        if () in scopes:  # below a read-only type: read-only tools only
            if write_paths is not None:
                return _error(
                    "Subagent lacks permission for required tools: Write, Edit (it would run below a read-only "
                    "agent, so write_paths cannot be honoured)",
                    "FORBIDDEN",
                )
            kept = [n for n in names if n not in WRITE_TOOLS and n != "Bash"]
            if not kept:
                return _error(
                    f"Subagent lacks permission for required tools: {', '.join(names) or 'none'} "
                    "(it would run below a read-only agent: read-only tools only)",
                    "FORBIDDEN",
                )
            return kept
        if scopes:
            names = [n for n in names if n != "Bash"]  # a shell could write outside the inherited confinement
        if write_paths is not None:
            if not any(n in WRITE_TOOLS for n in names):
                return _error(
                    f"Subagent lacks permission for required tools: Write, Edit (type {agent_type.name} "
                    f"cannot write, so write_paths cannot be honoured)",
                    "FORBIDDEN",
                )
            names = [n for n in names if n != "Bash"]  # a shell could write outside write_paths
        if not names:
            return _error(
                f"Subagent lacks permission for required tools: {', '.join(allowed) or 'none'} "
                f"(all denied by task_tool.deny_tools)",
                "FORBIDDEN",
            )
        return names

    def _new_handle(
        self,
        args: TaskArgs,
        parent: ParentLink,
        tool_call_id: str,
        agent_type: AgentType,
        model: ResolvedModel,
        previous: TaskRecord | None,
        scopes: tuple[tuple[str, ...], ...] = (),
    ) -> TaskHandle:
        cfg = self.settings.task_tool
        task_id = new_id("tsk")
        number = next(self._numbers.setdefault(agent_type.name, itertools.count(1)))
        psession = parent.session
        child = Session(
            system_prompt=self._system_prompt(agent_type, args.description, args.write_paths, scopes),
            model=model,
            workspace=self.workspace,
            agent=f"{agent_type.name}#{number}",
            agent_type=agent_type.name,
            depth=psession.depth + 1,
            chain=(*psession.chain, agent_type.name),
            lineage=(*psession.lineage, (agent_type.name, normalize_prompt(args.prompt))),
            parent_session_id=psession.id,
            task_id=task_id,
        )
        if previous is not None and previous.child_session_id:
            child.id = previous.child_session_id
            child.messages = self._transcript(previous)
        record = TaskRecord(
            task_id=task_id,
            parent_session_id=psession.id,
            parent_task_id=parent.task_id,
            parent_tool_call_id=tool_call_id,
            child_session_id=child.id,
            depth=child.depth,
            chain=list(child.chain),
            subagent_type=agent_type.name,
            description=args.description,
            prompt=args.prompt,
            model_used=model.display,
            status="queued",
        )
        timeout = args.timeout_seconds or agent_type.timeout_seconds or cfg.default_timeout_seconds
        return TaskHandle(
            record=record,
            agent_type=agent_type,
            model=model,
            session=child,
            parent=parent,
            user_message=self._user_message(args),
            timeout=float(min(timeout, cfg.max_timeout_seconds)),
            slot=Slot(priority=child.depth),
            write_paths=args.write_paths,
            write_scopes=scopes,
            output_schema=args.output_schema,
        )

    def _transcript(self, record: TaskRecord) -> list[Message]:
        for handle in self.handles.values():
            if handle.session.id == record.child_session_id:
                return list(handle.session.messages)
        if self.store is not None and record.child_session_id:
            return self.store.get_messages(record.child_session_id)
        return []

    def _system_prompt(
        self,
        agent_type: AgentType,
        description: str,
        write_paths: list[str] | None,
        scopes: tuple[tuple[str, ...], ...] = (),
    ) -> str:
        role = Template(agent_type.prompt).safe_substitute(
            workspace=str(self.workspace), date=_now().date().isoformat()
        )
        text = f"{role}\n\n# Task\n{description}"
        every = [*scopes, *([tuple(write_paths)] if write_paths else [])]
        if () in every:
            text += "\n\nYou may not write files or run commands: you work below a read-only agent."
        elif len(every) == 1:
            text += "\n\nYou may write only to files matching: " + ", ".join(every[0])
        elif every:
            text += "\n\nYou may write only to files matching all of: " + " and ".join(
                "(" + ", ".join(scope) + ")" for scope in every
            )
        if self.instructions:
            text += f"\n\n{self.instructions}"
        return text

    @staticmethod
    def _user_message(args: TaskArgs) -> str:
        text = args.prompt
        if args.expected_response:
            text += f"\n\n# Expected response\n{args.expected_response}"
        if args.output_schema is not None:
            import json

            text += (
                "\n\n# Output format\nReply with only a JSON document (no prose, no code fence) that "
                f"satisfies this JSON schema:\n{json.dumps(args.output_schema, indent=2)}"
            )
        return text

    # --- running --------------------------------------------------------------------------------

    async def _execute(self, handle: TaskHandle, tools: list[Tool[Any]]) -> ToolResult:
        """Wait for a slot, run the child under its limits, store the record, build the parent's result."""
        from agentcli.subagents.child import run_child

        record = handle.record
        try:
            if not handle.slot.held and not await self._admit(handle):
                self._finish(handle, "cancelled", None, handle.stop[1] if handle.stop else "cancelled")
            else:
                record.status = "running"
                record.started_at = _now()
                handle.started = handle.last_progress = time.monotonic()
                self._save(handle)
                self._update(handle)
                status, result, error = await run_child(self, handle, tools)
                self._finish(handle, status, result, error)
        except LimitReachedError:
            self._finish(handle, "failed", None, "Maximum concurrent tasks limit reached")
        except Exception as exc:  # a bug or an unexpected failure: the record never stays running
            log.exception("subagent %s failed", record.task_id)
            error = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            self._finish(handle, "failed", handle.loop.last_text() if handle.loop else None, f"internal error: {error}")
        except asyncio.CancelledError:
            # The parent (or the person, with Esc) stopped the whole turn: record it, then propagate.
            self._finish(handle, "cancelled", handle.loop.last_text() if handle.loop else None, "cancelled")
            await self._store_record(handle)
            raise
        finally:
            self.limiter.release(handle.slot)
            self.leases.release(record.task_id)
        await self._store_record(handle)  # the full result is stored before the parent sees anything
        self._announce(handle)
        return self.parent_result(handle)

    async def _admit(self, handle: TaskHandle) -> bool:
        """Wait in the queue; False when the task was cancelled while queued."""
        acquire = asyncio.ensure_future(self.limiter.acquire(handle.slot))
        cancelled = asyncio.ensure_future(handle.cancel_requested.wait())
        try:
            await asyncio.wait({acquire, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
            if not acquire.done():
                acquire.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await acquire
        if acquire.cancelled():
            return False
        acquire.result()  # re-raise LimitReachedError
        return True

    def _relay(self, handle: TaskHandle) -> EventSink:
        """The child's event sink: count, enforce budgets, and pass every event up wrapped."""
        cfg = self.settings.task_tool
        record = handle.record
        parent = handle.parent

        def relay(event: Event) -> None:
            handle.touch()
            kind = event.kind
            if kind == "tool_call_started":
                handle.in_flight_tools += 1
                handle.tool_counts[event.name] += 1  # type: ignore[union-attr]
                record.tool_calls += 1
            elif kind == "tool_call_finished":
                handle.in_flight_tools -= 1
                for path in event.files_modified:  # type: ignore[union-attr]
                    handle.files[path] = None
            elif kind == "usage":
                record.input_tokens += event.input_tokens + event.cache_read_tokens + event.cache_write_tokens  # type: ignore[union-attr]
                record.output_tokens += event.output_tokens  # type: ignore[union-attr]
            parent.emit(
                SubagentEvent(
                    session_id=parent.session.id,
                    agent=parent.session.agent,
                    task_id=record.task_id,
                    parent_tool_call_id=record.parent_tool_call_id or "",
                    subagent_type=record.subagent_type,
                    event=event,
                )
            )
            if kind in ("tool_call_finished", "usage"):
                self._update(handle)
                used = record.input_tokens + record.output_tokens
                if used > cfg.max_tokens:
                    self.stop(handle, "budget_exceeded", f"token budget exceeded: {used} > {cfg.max_tokens} tokens")
            if kind == "tool_call_started" and record.tool_calls > cfg.max_tool_calls:
                # max_tool_calls calls are allowed; the one beyond them stops the run.
                self.stop(handle, "budget_exceeded", f"tool call limit reached ({cfg.max_tool_calls} calls)")

        return relay

    def stop(self, handle: TaskHandle, status: TaskStatus, reason: str) -> None:
        """Stop a running child (a limit was hit, or someone cancelled it); its partial work is kept."""
        if handle.stop is None:
            handle.stop = (status, reason)
        handle.cancel_requested.set()
        if handle.loop_task is not None and not handle.loop_task.done():
            handle.loop_task.cancel()

    async def cancel(self, task_id: str, reason: str = "cancelled") -> bool:
        """Cancel one subagent (queued or running) without touching its siblings or its parent."""
        handle = self.handles.get(task_id)
        if handle is None or handle.record.status in FINISHED_TASK_STATUSES:
            return False
        self.stop(handle, "cancelled", reason)
        return True

    # --- finishing ------------------------------------------------------------------------------

    def _finish(self, handle: TaskHandle, status: TaskStatus, result: str | None, error: str | None) -> None:
        record = handle.record
        if record.status in FINISHED_TASK_STATUSES:
            return
        record.status = status
        record.result = result or ""
        record.error = error if status != "completed" else None
        record.finished_at = _now()
        elapsed = time.monotonic() - handle.started if handle.started else 0.0
        record.time_ms = round(elapsed * 1000, 1)
        record.tool_summary = [ToolCount(tool=t, count=c) for t, c in handle.tool_counts.most_common()]
        record.files_modified = list(handle.files)
        child = handle.session
        record.cost_usd = child.total_cost_usd
        handle.parent.session.add_delegated(child.total_usage, child.total_cost_usd)
        handle.done.set()
        self._emit_parent(
            handle,
            SubagentBlockFinishedEvent(
                session_id=handle.parent.session.id,
                agent=handle.parent.session.agent,
                task_id=record.task_id,
                status=status,
                short_result=short_result(record.status, record.subagent_type, record.error),
                error=record.error,
                elapsed_ms=record.time_ms,
            ),
        )
        log.info(
            "subagent %s %s: %d tool calls, %d in / %d out tokens, %.0f ms",
            record.task_id, status, record.tool_calls, record.input_tokens, record.output_tokens, record.time_ms,
        )

    def parent_result(self, handle: TaskHandle) -> ToolResult:
        """The parent's tool result: head line, the framed (possibly cut) result, files modified."""
        record = handle.record
        label = defang_tags(f"{record.subagent_type}, {handle.model.display}")
        error = defang_tags(record.error or "")
        body = results.frame(
            record.task_id, record.result or "", offset=0, max_tokens=self.settings.task_tool.max_result_tokens
        )
        if record.status == "completed":
            text = f"Subagent ({label}) completed.\n\n{body}"
        elif record.result:
            text = f"{error}\n\nSubagent ({label}) stopped ({record.status}); what it produced so far:\n\n{body}"
        else:
            text = f"{error}\n\nSubagent ({label}) stopped ({record.status}) before producing an answer."
        if record.files_modified:
            text += "\nFiles modified: " + defang_tags(", ".join(record.files_modified))
        return ToolResult(
            text,
            is_error=record.status != "completed",
            files_modified=list(record.files_modified),
            metadata={
                "task_id": record.task_id,
                "status": record.status,
                "code": TASK_ERROR_CODES.get(record.status),
                "short_result": short_result(record.status, record.subagent_type, record.error),
            },
        )

    def _announce(self, handle: TaskHandle) -> None:
        if handle.background:
            record = handle.record
            self._notices.setdefault(handle.parent.session.id, []).append(
                f"Background task {record.task_id} ({record.subagent_type}) finished: {record.status}. "
                f'TaskOutput(task_id="{record.task_id}") returns its result.'
            )

    async def task_output(self, task_id: str, offset: int, wait_seconds: float) -> ToolResult:
        """TaskOutput: status, and the full result from `offset` once finished."""
        handle = self.handles.get(task_id)
        if handle is not None and handle.record.status not in FINISHED_TASK_STATUSES and wait_seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(handle.done.wait(), wait_seconds)
        record = handle.record if handle else (self.store.get_task(task_id) if self.store else None)
        if record is None:
            return ToolResult(f"No task '{task_id}'.", is_error=True)
        head = defang_tags(f"Task {record.task_id} ({record.subagent_type}): {record.status}")
        if record.status not in FINISHED_TASK_STATUSES:
            return ToolResult(f"{head}. {record.tool_calls} tool calls so far; call TaskOutput again to wait.")
        if record.error:
            head += f" — {defang_tags(record.error)}"
        body = results.frame(
            record.task_id, record.result or "", offset=offset, max_tokens=self.settings.task_tool.max_result_tokens
        )
        return ToolResult(f"{head}\n\n{body}", metadata={"task_id": record.task_id, "status": record.status})

    async def aclose(self) -> None:
        """Session end: cancel background tasks and wait for their records to be written."""
        for handle in list(self.handles.values()):
            if handle.background and handle.record.status not in FINISHED_TASK_STATUSES:
                self.stop(handle, "cancelled", "the session ended")
        jobs = list(self._background)
        if jobs:
            await asyncio.gather(*jobs, return_exceptions=True)

    # --- events and storage ---------------------------------------------------------------------

    def _emit_parent(self, handle: TaskHandle, event: Event) -> None:
        try:
            handle.parent.emit(event)
        except Exception:
            log.exception("event consumer failed on %s", event.kind)

    def _update(self, handle: TaskHandle) -> None:
        record = handle.record
        self._emit_parent(
            handle,
            SubagentBlockUpdatedEvent(
                session_id=handle.parent.session.id,
                agent=handle.parent.session.agent,
                task_id=record.task_id,
                status=record.status,
                tool_calls=record.tool_calls,
                input_tokens=record.input_tokens,
                output_tokens=record.output_tokens,
                elapsed_ms=(time.monotonic() - handle.started) * 1000 if handle.started else 0.0,
            ),
        )

    def _save(self, handle: TaskHandle) -> None:
        if self.store is not None:
            from agentcli.store.writes import upsert_task

            self.store.submit(upsert_task(handle.record.model_copy()))

    async def _store_record(self, handle: TaskHandle) -> None:
        """Store the record before the parent sees the result; a store that fails (disk full) does not
        keep the result from the parent: the store remembers the failure and the run reports it."""
        if self.store is not None:
            from agentcli.store.writes import upsert_task

            try:
                await self.store.write(upsert_task(handle.record.model_copy()))
            except Exception as exc:
                log.warning("task %s: record not stored: %s", handle.record.task_id, exc)

    def records(self) -> list[TaskRecord]:
        """Every task of this runner, in creation order."""
        return [h.record for h in self.handles.values()]
