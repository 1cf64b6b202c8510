"""SubagentRunner: the task table of one session tree, and the Task tools' `Delegator`.

One runner serves a whole delegation tree (the main agent and every subagent below it). It owns
what siblings must not share mutably: the concurrency queue, write leases, background jobs and
their notices, and the task records (saved to the store). What a Task call becomes is decided by
the `Planner` (plan.py, pure); its handle and record are built and closed in task_handles.py; each running
subagent is owned by a `Supervisor` (supervisor.py).
The runner builds a child's tools from the injected `Toolbox`; the main agent's are the
composition root's business.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.agent import CANCELLED_RESULT, AgentLoop, Compactor, Session, answer_open_calls
from agentcli.events import Event, SubagentBlockAddedEvent
from agentcli.hooks import HookEngine
from agentcli.llm import Usage
from agentcli.status import FINISHED_TASK_STATUSES, StopStatus, TaskStatus
from agentcli.store import TaskRecord
from agentcli.subagents import results
from agentcli.subagents.agent_kit import AgentKit
from agentcli.subagents.budget import PriceNotices
from agentcli.subagents.definitions.skills import SkillCatalog
from agentcli.subagents.fork import fork_point
from agentcli.subagents.limits import ConcurrencyLimiter, LimitReachedError, Turns, WriteLeases
from agentcli.subagents.messaging.mailbox import PostOffice
from agentcli.subagents.messaging.switchboard import Switchboard
from agentcli.subagents.messaging.tools import message_tools
from agentcli.subagents.plan import Planner, Refusal, Scopes, inherited_scopes
from agentcli.subagents.remote.cluster import RayExecutor
from agentcli.subagents.remote.executor import RemoteLoop, make_job
from agentcli.subagents.remote.job import RemoteError
from agentcli.subagents.remote.parent_side import ParentSide
from agentcli.subagents.result_cache.cache import ResultCache
from agentcli.subagents.task_handles import close_record, new_handle
from agentcli.subagents.task_hooks import task_hook
from agentcli.subagents.task_tool import ParentLink, TaskArgs, output_tools, task_tools
from agentcli.subagents.tasks import SESSION_ENDED, TaskHandle, TaskTable
from agentcli.subagents.toolbox import Toolbox
from agentcli.subagents.worktrees.isolation import Isolation, Left
from agentcli.subagents.worktrees.worktree import WorktreeError
from agentcli.text import defang_tags
from agentcli.tools import FileLocks, Tool, ToolContext, ToolResult, defer_rule

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.llm import ProviderPool
    from agentcli.store import Store
    from agentcli.subagents.definitions.registry import AgentRegistry
    from agentcli.tools import PermissionPolicy, Sandbox

log = logging.getLogger(__name__)
PriceFn = Callable[[str, str, Usage], float | None]


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
        toolbox: Toolbox | None = None,
        hooks: HookEngine | None = None,
        before_task: Callable[[TaskArgs], Awaitable[None]] | None = None,
        sandbox: Sandbox | None = None,
        skills: SkillCatalog | None = None,
        extra_roots: list[Path] | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.pool = pool
        self.workspace = workspace
        self.store = store
        self.file_locks = file_locks or FileLocks()
        self.price = price
        self.toolbox = toolbox or Toolbox.builtin()  # what children's tools are built from
        self.hooks = hooks  # the person's hooks: every agent's tool calls, SubagentStart / SubagentStop here
        self.before_task = before_task  # readies what a task's type needs first (its MCP servers) before planning
        self.planner = Planner(settings, registry, workspace, self.toolbox.classes, instructions, skills)
        cfg = settings.task_tool
        self.limiter = ConcurrencyLimiter(cfg.max_concurrent, cfg.on_limit)
        self.turns = Turns()  # sibling Task calls' first steps, one a pass: each subagent's request goes out at once
        self.leases = WriteLeases()
        self.table = TaskTable(store, workspace)
        self.handles = self.table.handles
        self.post = PostOffice()  # messages to running agents, by session
        self.switchboard = Switchboard(self.table, self.post, self.run_task, self.argument_limits)
        self.kit = AgentKit(settings, workspace, permissions, self.file_locks, pool, self.table.task_lines, sandbox,
                            extra_roots)
        self._background: set[asyncio.Task[ToolResult]] = set()
        self._notices: dict[str, list[str]] = {}
        self.prices = PriceNotices()  # models whose unknown price a dollar budget already reported
        self.cache = ResultCache(workspace, cfg)  # reused results; sees the tree's tool calls once attached to its bus
        self.isolation = Isolation(workspace, self.file_locks, sandbox)  # tasks in git worktrees, merged back
        self.defer = defer_rule(settings.tools.defer)  # every agent's deferred tools, named in its ToolSearch
        self.remote = RayExecutor(settings.executor)  # `isolation: "remote"` tasks: Ray joined at the first one

    # --- what agents of this tree get ---------------------------------------------------------------

    def tool_context(self, session: Session, **kwargs: Any) -> ToolContext:
        """The ToolContext of one agent of this tree (`AgentKit.tool_context`)."""
        return self.kit.tool_context(session, **kwargs)

    def compactor(self, session: Session, context: ToolContext) -> Compactor:
        """What keeps one agent's context inside its model's window (`AgentKit.compactor`)."""
        return self.kit.compactor(session, context)

    def task_lines(self, session_id: str) -> list[str]:
        """One line per task `session_id` delegated (what a compaction keeps)."""
        return self.table.task_lines(session_id)

    def records(self) -> list[TaskRecord]:
        """Every task of this runner (a resumed session's earlier ones first), in creation order."""
        return self.table.records()

    def restore(self, records: list[TaskRecord], session_id: str) -> list[TaskRecord]:
        """Take on a resumed session's earlier tasks, so `/tasks`, `Task(resume=...)` and `TaskOutput` know them.
        Returns the main agent's tasks the session's end cut off; the main agent is told of them once."""
        cut, lines = self.table.restore(records, session_id)
        if lines:
            self._notices.setdefault(session_id, []).extend(lines)
        return cut

    def can_delegate(self, depth: int) -> bool:
        """Whether an agent at `depth` is offered the Task tool."""
        return self.planner.can_delegate(depth)

    def withheld(self, depth: int) -> dict[str, str]:
        """Why an agent past the depth limit gets no Task tools (said to a model that calls one anyway)."""
        return self.planner.withheld(depth)

    def notices_for(self, session_id: str) -> Callable[[], list[str]]:
        """The notices hook of an AgentLoop: finished background tasks and background commands, told once."""
        return lambda: self._notices.pop(session_id, []) + self.kit.shells.notices(session_id)

    def confinement(self, parent: ParentLink) -> Scopes:
        """The write scopes every child of `parent` inherits (none for the main agent)."""
        handle = self.handles.get(parent.task_id) if parent.task_id else None
        if handle is None:
            return ()
        plan = handle.plan
        return inherited_scopes(plan.write_scopes, plan.write_paths, plan.agent_type.read_only)

    def settle_history(self, session: Session) -> None:
        """A resumed session's stored history whose process died between a tool call and its result gets
        cancelled results (stored too), so the next request is valid."""
        owed = answer_open_calls(session.messages, CANCELLED_RESULT)
        if owed is None:
            return
        seq = session.append(owed)
        if self.store is not None:
            from agentcli.store import add_message

            self.store.submit(add_message(session.id, seq, owed))

    # --- the Task tools' Delegator ------------------------------------------------------------------

    def task_tool_description(self, *, lean: bool = False) -> str:
        """The Task tool's description: the bundled text (`lean`: its short form) plus every type, the same at every
        depth."""
        from agentcli.prompts import load_prompt

        return self.planner.task_description(load_prompt("tools/lean/task.md" if lean else "tools/task.md"))

    def argument_limits(self) -> Mapping[str, Any]:
        """The validation context of `TaskArgs`."""
        cfg = self.settings.task_tool
        return {
            "allow_model_override": cfg.allow_model_override,
            "max_timeout_seconds": cfg.max_timeout_seconds,
            "max_tokens": cfg.max_tokens,
            "max_cost_usd": cfg.max_cost_usd,
        }

    async def run_task(self, args: TaskArgs, parent: ParentLink, tool_call_id: str) -> ToolResult:
        """Plan and run one Task call; every failure becomes a tool error, never an exception."""
        await self.turns.take()
        previous = self.table.finished_record(args.resume) if args.resume else None
        if self.before_task is not None:
            await self.before_task(args)
        plan = self.planner.plan(args, parent.session, self.confinement(parent), previous, _now().date())
        if isinstance(plan, Refusal):
            return plan.result()
        point = fork_point(parent, tool_call_id) if plan.fork else None  # taken now: the parent goes on
        if isinstance(point, Refusal):
            return point.result()
        handle = new_handle(self.table, args, plan, parent, tool_call_id, previous, point, self.prices,
                            self.settle_history)
        task_id = handle.record.task_id
        unavailable = await self.isolation.check(handle) or (self.remote.unavailable() if plan.remote else None)
        if unavailable:
            return Refusal(unavailable, "INVALID_PARAM").result()
        found = await self.cache.lookup(args, plan, handle.session.depth)
        if found.entry is not None:  # answered from an identical finished task's result: no subagent runs
            self.handles[task_id] = handle
            answer = self.cache.serve(handle.record, parent, found, plan.model.display)
            await self._store_record(handle)
            return results.with_note(plan.note, answer)
        if args.write_paths:
            conflicts = self.leases.acquire(task_id, args.write_paths, ignore=set(self.table.ancestors(parent.task_id)))
            if conflicts:
                return Refusal(f"Cannot acquire file locks. Conflicts: {'; '.join(conflicts)}", "CONFLICT").result()
        # A parent that waits on its (foreground) child gives its slot back meanwhile, before the child
        # asks for one: nested delegation never deadlocks, and never fails for want of the parent's slot.
        parent_slot = None
        if not args.run_in_background and parent.task_id in self.handles:
            parent_slot = self.handles[parent.task_id].slot
            self.limiter.suspend(parent_slot)
        try:
            if self.limiter.on_limit == "error" and not self.limiter.try_acquire(handle.slot):
                self.leases.release(task_id)
                return Refusal("Maximum concurrent tasks limit reached", "LIMIT").result()
            self.handles[task_id] = handle
            self.cache.watch(task_id, parent.task_id, found)
            if args.run_in_background:
                self._save(handle)  # a foreground task is saved as it starts (`_execute`), queued or running
            self._emit_parent(
                handle,
                SubagentBlockAddedEvent(
                    session_id=parent.session.id,
                    agent=parent.session.agent,
                    task_id=task_id,
                    parent_tool_call_id=tool_call_id,
                    subagent_type=plan.agent_type.name,
                    description=handle.record.shown_description(),
                    model=plan.model.display,
                    depth=handle.session.depth,
                ),
            )
            log.info(
                "subagent %s created: type %s, model %s, depth %d",
                task_id, plan.agent_type.name, plan.model.display, handle.session.depth,
            )
            if args.run_in_background:
                handle.background = True
                job = asyncio.create_task(self._execute(handle), name=f"task-{task_id}")
                self._background.add(job)
                job.add_done_callback(self._background.discard)
                label = defang_tags(f"({plan.agent_type.name}, {plan.model.display}): {handle.record.description}")
                return results.with_note(plan.note, ToolResult(
                    f"Started background task {task_id} {label}. You will be told when it finishes; "
                    f'TaskOutput(task_id="{task_id}") returns its status and result, TaskCancel stops it.',
                    metadata={"task_id": task_id, "background": True},
                ))
            return results.with_note(plan.note, await self._execute(handle))
        finally:
            if parent_slot is not None:
                await self.limiter.resume(parent_slot)

    async def cancel(self, task_id: str, reason: str = "cancelled") -> bool:
        """Cancel one subagent (queued or running; by id, unique id prefix or label, as TaskOutput finds it) without
        touching its siblings or its parent, or stop one background command."""
        if (command := self.kit.shells.find(task_id)) is not None:
            return await self.kit.shells.stop(command)
        record = self.handles[task_id].record if task_id in self.handles else self.table.find(task_id)[0]
        handle = self.handles.get(record.task_id) if record is not None else None
        if handle is None or handle.record.status in FINISHED_TASK_STATUSES:
            return False
        handle.supervisor.stop("cancelled", reason)
        return True

    def stop_all(self, status: StopStatus, reason: str) -> None:
        """Stop every queued or running subagent of the tree, background ones too (a session budget ran out)."""
        for handle in list(self.handles.values()):
            if handle.record.status not in FINISHED_TASK_STATUSES:
                handle.supervisor.stop(status, reason)

    async def task_output(self, task_id: str, offset: int, wait_seconds: float, pattern: str | None = None
                          ) -> ToolResult:
        """TaskOutput: status, and the full result from `offset` once finished; of a background command, what it
        printed since the last look (the lines matching `pattern`)."""
        if (command := self.kit.shells.find(task_id)) is not None:
            return await self.kit.shells.output(command, wait_seconds, pattern)
        record, problem = self.table.find(task_id)
        if record is None:
            return ToolResult(problem, is_error=True)
        handle = self.handles.get(record.task_id)
        if handle is not None and handle.record.status not in FINISHED_TASK_STATUSES and wait_seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(handle.done.wait(), wait_seconds)
            record = handle.record
        return results.task_output(record, offset, self.settings.task_tool.max_result_tokens)

    # --- building a task ----------------------------------------------------------------------------

    def _child_loop(self, handle: TaskHandle) -> AgentLoop:
        """The subagent's AgentLoop: its planned tools (Task tools bound to it), context, model and hooks."""
        plan, session, sup = handle.plan, handle.session, handle.supervisor
        tools: list[Tool[Any]] = self.toolbox.build(plan.tool_names)
        link = ParentLink(session, sup.relay, handle.record.task_id)
        if "Task" in plan.tool_names and self.can_delegate(session.depth):
            tools += task_tools(self, link)
        elif any(tool.name == "Bash" for tool in tools):
            tools += output_tools(self)  # to read and stop its background commands
        tools += [t for t in message_tools(self.switchboard, link) if t.name in plan.tool_names]  # it has a parent
        context = self.tool_context(session, write_paths=plan.write_paths, write_scopes=plan.write_scopes,
                                    progress=sup.touch, workspace=handle.root, sandbox=handle.sandbox)
        context.read_roots.extend(plan.skill_roots)  # its preloaded skills' folders, read-only
        unavailable, fork = self.withheld(session.depth), handle.fork
        if fork is not None:  # offered its parent's tools, byte-identical; what its plan withholds is refused
            tools, unavailable = fork.tools(tools, plan, self.planner, session.depth)
        loop = AgentLoop(
            session,
            self.pool.get(plan.model),
            tools,
            context,
            sup.relay,
            max_turns=plan.max_turns,
            price=self.price,
            notices=self.notices_for(session.id),
            inbox=self.post.inbox(session.id),
            unavailable=unavailable,
            compactor=self.compactor(session, context),
            hooks=self.hooks,
            specs=fork.offered if fork is not None else None,
            lean_below=self.settings.context.lean_below_tokens,
            defer=self.defer,
        )
        link.specs = loop.offered  # what a fork of this subagent is offered
        return loop

    # --- running ------------------------------------------------------------------------------------

    async def _run_child(self, handle: TaskHandle, message: str) -> tuple[TaskStatus, str, str | None]:
        """Run the subagent here, or on the executor's cluster (its changes then brought into its worktree)."""
        sup = handle.supervisor
        if not handle.plan.remote:
            loop, fork = self._child_loop(handle), handle.fork
            opening = fork.start(handle.session, message, self.store) if fork is not None else message
            return await sup.run(loop, opening, handle.output_schema)
        plan, session = handle.plan, handle.session
        tools = self.toolbox.build(plan.tool_names)  # its MCP and messaging tools are served here
        tools += [t for t in message_tools(self.switchboard, ParentLink(session, sup.relay, handle.record.task_id))
                  if t.name in plan.tool_names]
        context = self.tool_context(session, progress=sup.touch, workspace=handle.root)
        parent = ParentSide(self.kit.permissions, self.hooks, tools, context, self.post.inbox(session.id))
        job = await asyncio.to_thread(make_job, handle, self.settings, parent)
        assert handle.root is not None
        remote = RemoteLoop(self.remote, job, session, sup.relay, handle.root, plan.model.api_key, parent, sup.touch)
        try:
            status, result, error = await sup.run(remote, message, handle.output_schema)
        finally:
            lost = await remote.close()
        if lost and status == "completed":
            return "failed", result, lost
        return status, result, error if not lost or error else lost

    async def _execute(self, handle: TaskHandle) -> ToolResult:
        """Wait for a slot, run the child under its limits, store the record, build the parent's result."""
        record, sup = handle.record, handle.supervisor
        try:
            slot = handle.slot
            if not (slot.held or self.limiter.try_acquire(slot)):
                self._save(handle)  # stored as queued while it waits (one that runs at once is stored as running)
            if not (slot.held or await self.limiter.acquire_unless(slot, sup.cancel_requested)):
                self._finish(handle, "cancelled", None, sup.stopped[1] if sup.stopped else "cancelled")
            else:
                record.status = "running"
                record.started_at = _now()
                sup.begin()
                self._save(handle)
                sup.report()
                message = handle.plan.user_message + await self.isolation.enter(handle)
                message += await task_hook(self.hooks, handle, "SubagentStart")
                status, result, error = await self._run_child(handle, message)
                self._finish(handle, status, result, error)
        except LimitReachedError:
            self._finish(handle, "failed", None, "Maximum concurrent tasks limit reached")
        except (WorktreeError, RemoteError) as exc:  # its worktree, or its job for the cluster, could not be made
            self._finish(handle, "failed", None, str(exc))
        except Exception as exc:  # a bug or an unexpected failure: the record never stays running
            log.exception("subagent %s failed", record.task_id)
            error = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            self._finish(handle, "failed", sup.last_text(), f"internal error: {error}")
        except asyncio.CancelledError:
            # The parent, the person (Esc) or a session budget stopped the whole turn: record it, then propagate.
            status, reason = sup.stopped or ("cancelled", "cancelled")
            self._finish(handle, status, sup.last_text(), reason)
            await self._end_commands(handle)
            left = await self.isolation.leave(handle)  # its changes kept on its branch, the worktree removed
            await self._store_record(handle)
            self._tell_left(handle, left)
            raise
        finally:
            self.limiter.release(handle.slot)
            self.leases.release(record.task_id)
            self.cache.finished(record)
        await self._end_commands(handle)
        left = await self.isolation.leave(handle)  # merged back before the record is stored and the parent told
        await self._store_record(handle)  # the full result is stored before the parent sees anything
        self._tell_left(handle, left)
        said = (left.note if left else "") + await task_hook(self.hooks, handle, "SubagentStop")
        self._announce(handle)
        max_tokens = self.settings.task_tool.max_result_tokens
        answer = results.parent_result(handle.record, handle.plan.model.display, max_tokens)
        return dataclasses.replace(answer, content=answer.content + said) if said else answer

    # --- finishing ----------------------------------------------------------------------------------

    def _finish(self, handle: TaskHandle, status: TaskStatus, result: str | None, error: str | None) -> None:
        event = close_record(handle, status, result, error)
        if event is None:
            return
        self._emit_parent(handle, event)
        record = handle.record
        log.info(
            "subagent %s %s: model %s, %d tool calls, %d in / %d out / %d cache tokens, cost %s, %.0f ms",
            record.task_id, status, handle.plan.model.display, record.tool_calls, record.input_tokens,
            record.output_tokens, record.cache_read_tokens + record.cache_write_tokens,
            "unknown" if record.cost_usd is None else f"${record.cost_usd:.4f}", record.time_ms,
        )

    async def _end_commands(self, handle: TaskHandle) -> None:
        """Its background commands end with it, except those it hands to its parent (not from a worktree that
        goes now: their folder would go under them)."""
        parent = handle.parent.session
        await self.kit.shells.end_task(handle.session.id, None if handle.worktree else (parent.id, parent.agent))

    def _tell_left(self, handle: TaskHandle, left: Left | None) -> None:
        if left is not None and (event := left.event(handle)) is not None:
            self._emit_parent(handle, event)  # the block shows the merge and its diff

    def _announce(self, handle: TaskHandle) -> None:
        if handle.background:
            record = handle.record
            self._notices.setdefault(handle.parent.session.id, []).append(
                f"Background task {record.task_id} ({record.subagent_type}) finished: {record.status}. "
                f'TaskOutput(task_id="{record.task_id}") returns its result.'
            )

    async def aclose(self) -> None:
        """Session end: cancel background tasks and wait for their records to be written; stop background commands
        and language servers."""
        for handle in list(self.handles.values()):
            if handle.background and handle.record.status not in FINISHED_TASK_STATUSES:
                handle.supervisor.stop("cancelled", SESSION_ENDED)
        jobs = list(self._background)
        if jobs:
            await asyncio.gather(*jobs, return_exceptions=True)
        await self.kit.shells.aclose()  # every background command stopped, their output files removed
        await self.kit.lsp.aclose()  # every language server shut down, its process group gone
        await self.remote.aclose()

    # --- events and storage -------------------------------------------------------------------------

    def _emit_parent(self, handle: TaskHandle, event: Event) -> None:
        try:
            handle.parent.emit(event)
        except Exception:
            log.exception("event consumer failed on %s", event.kind)

    def _save(self, handle: TaskHandle) -> None:
        """Queue a write of the record as it is now (`save_task` snapshots it)."""
        if self.store is not None:
            from agentcli.store import save_task

            self.store.record(save_task(handle.record))

    async def _store_record(self, handle: TaskHandle) -> None:
        """Store the record before the parent sees the result; a store that fails (disk full) does not
        keep the result from the parent: the store remembers the failure and the run reports it."""
        if self.store is not None:
            from agentcli.store import save_task

            try:
                await self.store.write(save_task(handle.record))
            except Exception as exc:
                log.warning("task %s: record not stored: %s", handle.record.task_id, exc)

