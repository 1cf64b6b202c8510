"""The parent's side of remote tasks: the Ray connection (`RayExecutor`: Ray imported and the cluster joined at the
first remote task, never before) and `RemoteLoop`, which stands in for the subagent's `AgentLoop` under its
supervisor: the worker's events are relayed as they arrive (its messages and usage mirrored into the local session,
so budgets, records and transcripts work as for a local subagent), its permission questions are put to the parent's
approver and answered, the parent's mode changes and stops are sent to it, and a lost worker or cluster ends the run
`failed` with one line. `close` brings the task's changes back into its local worktree, from
where the usual merge takes them."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.util
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.agent import RunOutcome
from agentcli.events import Event, MessageAddedEvent, UsageEvent
from agentcli.mcp import McpTool
from agentcli.subagents.remote import snapshot
from agentcli.subagents.remote.job import (
    KEY_VARIABLE,
    Asked,
    Finished,
    HookCall,
    McpCall,
    McpSpec,
    Question,
    RemoteError,
    RemoteJob,
    ToolHere,
    Unread,
    apply_changes,
)
from agentcli.subagents.remote.parent_side import ParentSide
from agentcli.subagents.remote.worker import RemoteAgent
from agentcli.text import one_line, terminal_safe

if TYPE_CHECKING:
    from agentcli.agent import Session
    from agentcli.config import ExecutorSettings, Settings
    from agentcli.events import EventSink
    from agentcli.llm import Message
    from agentcli.subagents.tasks import TaskHandle

log = logging.getLogger(__name__)
_STOP_SECONDS = 10.0  # how long a stopped worker gets to end its turn and hand its changes back
_COLOURS = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # Ray colours its errors' lines
_STARTING_TICK = 5.0  # while a worker starts, the task's idle clock is reset this often
_LETTER_TICK = 0.25  # how often letters for a running remote subagent are looked for
LOST = "the remote worker was lost (its process or node died)"


class RayExecutor:
    """The session's link to its Ray cluster (`[executor]`), made at the first remote task."""

    def __init__(self, settings: ExecutorSettings) -> None:
        self.settings = settings
        self._lock = asyncio.Lock()
        self._actor: Any = None  # RemoteAgent as a Ray actor class
        self._started = False  # this process called ray.init (and shuts it down)
        self._warm: dict[str, list[Any]] = {}  # finished actors by model key, ready for the next task (`keep_warm`)

    def unavailable(self) -> str | None:
        """Why a remote task cannot run here (one line), or None."""
        if self.settings.kind != "ray":
            return 'isolation "remote" needs [executor] kind = "ray" (a Ray cluster to run on)'
        if importlib.util.find_spec("ray") is None:
            return "isolation \"remote\" needs Ray, which is not installed: pip install 'agentcli[ray]'"
        return None

    async def actor_class(self) -> Any:
        """`RemoteAgent` as an actor class, the cluster joined first. Raises `RemoteError`."""
        async with self._lock:
            if self._actor is None:
                await asyncio.to_thread(self._connect)
                import ray

                self._actor = ray.remote(max_restarts=0, max_task_retries=0)(RemoteAgent)
        return self._actor

    def _connect(self) -> None:
        import ray

        if ray.is_initialized():
            return
        address = self.settings.address or None
        try:
            ray.init(address=address, namespace="agentcli", log_to_driver=False, logging_level=logging.WARNING,
                     configure_logging=False, include_dashboard=False if address is None else None)
        except Exception as exc:
            raise RemoteError(f"cannot reach the Ray cluster at {address or 'RAY_ADDRESS'}: {one_line(exc)}"
                              [:300]) from None
        self._started = True

    async def lease(self, key: str) -> tuple[Any, bool]:
        """An actor for one task (one kept warm when there is one), and whether it is new."""
        if warm := self._warm.get(key):
            return warm.pop(), False
        cls = await self.actor_class()
        return cls.options(**self.options(key)).remote(), True

    def give_back(self, actor: Any, key: str) -> None:
        """A finished task's actor (its folder cleaned): kept for the next task, or ended past `keep_warm`."""
        kept = self._warm.setdefault(key, [])
        if sum(map(len, self._warm.values())) < self.settings.keep_warm:
            kept.append(actor)
        else:
            kill(actor)

    def options(self, key: str) -> dict[str, Any]:
        """One task's actor options: its resources, and the model key in its runtime environment only."""
        found: dict[str, Any] = {"num_cpus": self.settings.num_cpus, "runtime_env": {"env_vars": {KEY_VARIABLE: key}}}
        if self.settings.memory_mb:
            found["memory"] = self.settings.memory_mb << 20
        return found

    async def aclose(self) -> None:
        """Leave the cluster (a Ray started by this process stops with it)."""
        for actor in [a for kept in self._warm.values() for a in kept]:
            kill(actor)
        self._warm.clear()
        if self._started:
            import ray

            self._started = False
            await asyncio.to_thread(ray.shutdown)


def make_job(handle: TaskHandle, settings: Settings, parent: ParentSide) -> RemoteJob:
    """What `handle`'s task sends to its worker: its plan, its session so far, the worktree's snapshot."""
    tree = handle.worktree
    if tree is None:
        raise RemoteError("a remote task needs its worktree")
    models = settings.models.model_copy(update={
        "main": settings.models.main.model_copy(update={"api_key": None}),
        "light": settings.models.light.model_copy(update={"api_key": None})})
    plan, policy, hooks = handle.plan, parent.policy, parent.hooks
    return RemoteJob(
        task_id=handle.record.task_id, settings=settings.model_copy(update={"models": models}),
        session=dataclasses.replace(handle.session, messages=list(handle.session.messages)),
        model=dataclasses.replace(plan.model, api_key=""), tool_names=tuple(t.name for t in parent.tools),
        write_paths=plan.write_paths, max_turns=plan.max_turns, budgets=plan.budgets, rules=parent.rules(),
        asks=policy.approver is not None, non_interactive=policy.non_interactive,
        mcp=tuple(_mcp_spec(t) for t in parent.tools if isinstance(t, McpTool)),
        hook_events=tuple(e for e in ("PreToolUse", "PostToolUse") if hooks is not None and hooks.has(e)),
        here=parent.here(), bundle=snapshot.bundle_of(tree.git, tree.snapshot), snapshot=tree.snapshot)


def _mcp_spec(tool: McpTool) -> McpSpec:
    return McpSpec(tool.server, tool.remote_name, tool.remote_description, tool.schema, tool.read_only)


class RemoteLoop:
    """A subagent's loop that runs on a Ray worker, as its supervisor sees it."""

    def __init__(self, executor: RayExecutor, job: RemoteJob, session: Session, emit: EventSink, worktree: Path,
                 key: str, parent: ParentSide, progress: Callable[[], None] = lambda: None) -> None:
        self.progress = progress
        self.inbox = parent.inbox if parent.letters is not None else None  # what it left unread, run again with
        self.executor, self.job, self.session, self.emit = executor, job, session, emit
        self.worktree, self.key, self.parent, self.policy = worktree, key, parent, parent.policy
        self.actor: Any = None
        self.stopped: tuple[str, str] | None = None
        self._running = False
        self._asked: set[asyncio.Task[None]] = set()  # what the worker asked, being served

    async def run(self, message: str | Message) -> RunOutcome:
        """Run the subagent's turn on its worker (started at the first run), relaying its events."""
        if not isinstance(message, str):
            raise RemoteError("a remote task takes a text message")
        try:
            if self.actor is None:
                await self._start()
            self._running = True
            self.policy.mode_watchers.append(self._mode_changed)
            if self.stopped is not None:
                self.actor.stop.remote(*self.stopped)
            if self.parent.rules() != self.job.rules:
                self._mode_changed(self.policy.mode)
            stream = self.actor.run.options(num_returns="streaming").remote(message)
            letters = asyncio.create_task(self._forward_letters())
            try:
                async for ref in stream:
                    item = await ref
                    if isinstance(item, RunOutcome):
                        return item
                    for event in item:
                        self._take(event)
            finally:
                letters.cancel()
            raise RemoteError("the worker ended without an outcome")
        except asyncio.CancelledError:
            self._kill()
            raise
        except Exception as exc:  # a lost worker, node or cluster, or a job it could not start
            lost = failure_line(exc)
            log.warning("remote task %s: %s", self.job.task_id, lost)
            self._kill()  # then no change comes back
            return RunOutcome("failed", self.last_text(), self.session.turns, error=lost)
        finally:
            self._running = False
            self.policy.mode_watchers[:] = [w for w in self.policy.mode_watchers if w != self._mode_changed]
            for asked in self._asked:
                asked.cancel()

    def _mode_changed(self, _mode: str) -> None:
        self.job.rules = self.parent.rules()
        if self.actor is not None:
            self.actor.follow.remote(self.job.rules)

    async def _answer(self, asked: Asked) -> None:
        """Serve what the worker asked (`ParentSide.serve`); the reply goes back with the policy's mode and rules."""
        reply = await self.parent.serve(asked, self.emit)
        if self.actor is not None:
            self.job.rules = self.parent.rules()
            self.actor.answer.remote(asked.number, reply, self.job.rules)

    async def _forward_letters(self) -> None:
        """While the turn runs, send the worker the letters that came for the subagent (it reads them at its next
        turn boundary)."""
        while self.parent.letters is not None:
            if self.actor is not None and (letters := self.parent.new_letters()):
                self.actor.deliver.remote(letters)
            await asyncio.sleep(_LETTER_TICK)

    async def _start(self) -> None:
        """Lease the task's actor and prepare the job there; a warm actor found dead is replaced by a new one."""
        while True:
            self.actor, new = await self.executor.lease(self.key)
            try:
                await self._starting(asyncio.ensure_future(self.actor.prepare.remote(self.job)))
                return
            except Exception as exc:
                if new or failure_line(exc) != LOST:
                    raise
                self._kill()

    async def _starting(self, ready: asyncio.Future[Any]) -> None:
        """Wait for the worker to be placed and ready; meanwhile the task counts as progressing (a cluster may take
        a while to find room: its wall-clock timeout still holds, its idle timeout waits)."""
        while not ready.done():
            await asyncio.wait({ready}, timeout=_STARTING_TICK)
            self.progress()
        ready.result()

    def _take(self, event: Event | Asked | Unread) -> None:
        """Mirror the subagent's own messages and usage into the local session, then relay the event; what the
        worker asks is served, letters it left unread are kept for its next turn."""
        if isinstance(event, Unread):
            self.parent.unread.extend(event.letters)
            return
        if isinstance(event, Question | McpCall | HookCall | ToolHere):
            asked = asyncio.create_task(self._answer(event))
            self._asked.add(asked)
            asked.add_done_callback(self._asked.discard)
            return
        self._relay(event)

    def _relay(self, event: Event) -> None:
        if event.session_id == self.session.id:
            if isinstance(event, MessageAddedEvent):
                self.session.append(event.message)
            elif isinstance(event, UsageEvent):
                self.session.ledger.add_own(event.usage, event.cost_usd)
        self.emit(event)

    def stop(self, status: str, reason: str) -> bool:
        """Ask the worker to end its turn (the first stop stands); False when no turn runs."""
        if self.stopped is None:
            self.stopped = (status, reason)
        if self.actor is None or not self._running:
            return False
        self.actor.stop.remote(status, reason)
        return True

    def last_text(self) -> str:
        return self.session.last_text()

    async def close(self) -> str:
        """Bring the task's changes into its local worktree and end the worker; a note when they could not come."""
        if self.actor is None:  # never started, or lost (its outcome already says so)
            return ""
        try:
            finished: Finished = await asyncio.wait_for(self.actor.finish.remote(), _STOP_SECONDS * 6)
            if finished.problem:
                return f"Its changes did not come back: {finished.problem}."
            await asyncio.to_thread(apply_changes, self.worktree, finished.changes)
            actor, self.actor = self.actor, None
            self.executor.give_back(actor, self.key)  # its folder is cleaned: it may serve the next task
            return ""
        except (Exception, TimeoutError) as exc:
            log.warning("remote task %s: changes not brought back", self.job.task_id, exc_info=True)
            return f"Its changes did not come back: {failure_line(exc)}."
        finally:
            self._kill()

    def _kill(self) -> None:
        actor, self.actor = self.actor, None
        kill(actor)


def kill(actor: Any) -> None:
    """End `actor` (None: nothing), whatever state it or its cluster is in."""
    if actor is not None:
        import ray

        with contextlib.suppress(Exception):
            ray.kill(actor, no_restart=True)


def failure_line(exc: BaseException) -> str:
    """One line for a remote failure (Ray's own messages run over many lines, with colours and the worker's
    traceback: an error raised on the worker is named by itself)."""
    cause = getattr(exc, "cause", None)
    if type(exc).__name__.startswith("RayTaskError") and isinstance(cause, BaseException):
        exc = cause
    name = type(exc).__name__
    if name in ("ActorDiedError", "RayActorError", "ActorUnavailableError"):
        return LOST
    if name in ("GetTimeoutError", "RaySystemError") or "connection" in str(exc).lower():
        return f"the Ray cluster could not be reached ({name})"
    text = terminal_safe(_COLOURS.sub("", str(exc)))
    if isinstance(exc, RemoteError):
        return one_line(text, 300)
    return one_line(f"{name}: {text}" if text else name, 300)
