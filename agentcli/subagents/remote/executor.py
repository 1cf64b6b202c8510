"""The parent's side of a remote task: `RemoteLoop` stands in for the subagent's `AgentLoop` under its supervisor:
the worker's events are relayed as they arrive (its messages and usage mirrored into the local session, so budgets,
records and transcripts work as for a local subagent), what it asks of the parent is served (`ParentSide`), the
parent's mode changes and stops are sent to it, and a lost worker or cluster ends the run `failed` with one line.
`close` brings the task's changes back into its local worktree, from where the usual merge takes them. `make_job`
is what the task sends."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.agent import RunOutcome
from agentcli.events import Event, MessageAddedEvent, UsageEvent
from agentcli.mcp import McpTool
from agentcli.subagents.remote import snapshot
from agentcli.subagents.remote.cluster import RayExecutor, Worker
from agentcli.subagents.remote.job import (
    Asked,
    Finished,
    McpSpec,
    RemoteError,
    RemoteJob,
    Unread,
    apply_changes,
)
from agentcli.subagents.remote.parent_side import ParentSide
from agentcli.text import one_line, terminal_safe

if TYPE_CHECKING:
    from agentcli.agent import Session
    from agentcli.config import Settings
    from agentcli.events import EventSink
    from agentcli.llm import Message
    from agentcli.subagents.tasks import TaskHandle

log = logging.getLogger(__name__)
_STOP_SECONDS = 10.0  # how long a stopped worker gets to end its turn and hand its changes back
_COLOURS = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # Ray colours its errors' lines
_STARTING_TICK = 5.0  # while a worker starts, the task's idle clock is reset this often
_LETTER_TICK = 0.25  # how often letters for a running remote subagent are looked for
LOST = "the remote worker was lost (its process or node died)"


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
        self.worktree, self.key, self.parent = worktree, key, parent
        self.task_id = job.task_id
        self.worker: Worker | None = None  # while it holds a place on one
        self.stopped: tuple[str, str] | None = None
        self._running = False
        self._asked: set[asyncio.Task[None]] = set()  # what the worker asked, being served

    @property
    def actor(self) -> Any:
        return self.worker.actor if self.worker is not None else None

    async def run(self, message: str | Message) -> RunOutcome:
        """Run the subagent's turn on its worker (started at the first run), relaying its events."""
        if not isinstance(message, str):
            raise RemoteError("a remote task takes a text message")
        try:
            if self.worker is None:
                await self._start()
            self._running = True
            self.parent.policy.mode_watchers.append(self._mode_changed)
            if self.stopped is not None:
                self.actor.stop.remote(self.task_id, *self.stopped)
            if self.parent.rules() != self.job.rules:
                self._mode_changed(self.parent.policy.mode)
            stream = self.actor.run.options(num_returns="streaming").remote(self.task_id, message)
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
            self._leave()
            raise
        except Exception as exc:  # a lost worker, node or cluster, or a job it could not start
            why = failure_line(exc)
            log.warning("remote task %s: %s", self.task_id, why)
            self._leave(lost=not _raised_on_worker(exc))  # then no change comes back
            return RunOutcome("failed", self.last_text(), self.session.turns, error=why)
        finally:
            self._running = False
            watchers = self.parent.policy.mode_watchers
            watchers[:] = [w for w in watchers if w != self._mode_changed]
            for asked in self._asked:
                asked.cancel()

    def _mode_changed(self, _mode: str) -> None:
        self.job.rules = self.parent.rules()
        if self.actor is not None:
            self.actor.follow.remote(self.task_id, self.job.rules)

    async def _answer(self, asked: Asked) -> None:
        """Serve what the worker asked (`ParentSide.serve`); the reply goes back with the policy's mode and rules."""
        reply = await self.parent.serve(asked, self.emit)
        if self.actor is not None:
            self.job.rules = self.parent.rules()
            self.actor.answer.remote(self.task_id, asked.number, reply, self.job.rules)

    async def _forward_letters(self) -> None:
        """While the turn runs, send the worker the letters that came for the subagent (it reads them at its next
        turn boundary)."""
        while self.parent.letters is not None:
            if self.actor is not None and (letters := self.parent.new_letters()):
                self.actor.deliver.remote(self.task_id, letters)
            await asyncio.sleep(_LETTER_TICK)

    async def _start(self) -> None:
        """Take a place on a worker and prepare the job there; a kept worker found dead is replaced by a new one."""
        while True:
            self.worker, new = await self.executor.lease()
            try:
                await self._starting(asyncio.ensure_future(self.actor.prepare.remote(self.task_id, self.job,
                                                                                     self.key)))
                return
            except Exception as exc:
                self._leave(lost=not _raised_on_worker(exc))
                if new or failure_line(exc) != LOST:
                    raise

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
        if isinstance(event, Asked):
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
        self.actor.stop.remote(self.task_id, status, reason)
        return True

    def last_text(self) -> str:
        return self.session.last_text()

    async def close(self) -> str:
        """Bring the task's changes into its local worktree and leave its worker; a note when they could not
        come."""
        if self.worker is None:  # never started, or gone (its outcome already says so)
            return ""
        lost = False
        try:
            finished: Finished = await asyncio.wait_for(self.actor.finish.remote(self.task_id), _STOP_SECONDS * 6)
            if finished.problem:
                return f"Its changes did not come back: {finished.problem}."
            await asyncio.to_thread(apply_changes, self.worktree, finished.changes)
            return ""
        except (Exception, TimeoutError) as exc:
            log.warning("remote task %s: changes not brought back", self.task_id, exc_info=True)
            lost = not (_raised_on_worker(exc) or isinstance(exc, RemoteError))  # one that cannot answer is ended
            return f"Its changes did not come back: {failure_line(exc)}."
        finally:
            self._leave(lost=lost, finished=True)

    def _leave(self, lost: bool = False, finished: bool = False) -> None:
        """Give the task's place on its worker back (what it left there is dropped unless `finished`); a lost worker
        is ended."""
        worker, self.worker = self.worker, None
        if worker is None:
            return
        if not (lost or finished):
            worker.actor.abort.remote(self.task_id)
        self.executor.give_back(worker, lost=lost)


def _raised_on_worker(exc: BaseException) -> bool:
    """Whether `exc` is an error the worker raised and lived on (any other failure leaves it unusable)."""
    return type(exc).__name__.startswith("RayTaskError")


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
