"""Reused results: a Task identical to a finished read-only one of this session is answered from its result.

When a hit is allowed (README "Reused results" says the same to the person):

- `[task_tool] cache_results` is on (an untrusted project may only turn it off), the call has no
  `no_cache`, `resume` or `fork_context` (nor does its type's agent file), and its type is read-only
  (no tool that writes files or runs commands);
- an earlier task of this session tree, in this process, had the same key: type, model (with its
  thinking and effort settings), description, prompt, expected_response, output_schema, and what the
  planner made of them (system prompt with its date and project instructions, user message, tool
  names, depth) — and finished `completed` with an answer;
- that run (its subagents included) used only Read, LS, Glob, Grep, TodoWrite and the Task tools, and
  received no message: a WebFetch (the web changes), SendMessage or ListAgents (its answer may rest on
  other agents), AskUserQuestion (the person's answer may differ), a message queued for it or a task below
  it, an MCP tool or any other tool makes it never reused;
- everything it looked at is provably unchanged (`fingerprints`): each file it read, each folder it
  listed, each tree it searched with Glob or Grep (the workspace when the call named no path), wherever
  it lies (the workspace, an additional directory, a skill's folder, through a symlink or not), was,
  when the run finished, what it was when the call started (ctimes older than the call), and is the
  same now (equal digests);
- no write of this session happened under what it looked at since the original task was started:
  Write / Edit / MultiEdit / NotebookEdit of a path it covers, and anything that can write anywhere — a Bash call, an
  MCP or unknown tool, a hook command, the person's `!command` — at all. A call counts from its start
  to its end, so one still running, or one that overlapped the original run, rules a hit out too.

The cache sees the whole session tree's tool calls on the conversation's event bus (`attach`); a
runner used without one never answers from it. Results of earlier processes (a resumed session's
tasks) are never reused: what they looked at was not watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.events import (
    AgentMessageEvent,
    Event,
    EventBus,
    HookRunEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    unwrap,
)
from agentcli.subagents import results
from agentcli.subagents.result_cache.fingerprints import Kind, Target, Unprovable, covers, fingerprint, resolve
from agentcli.text import defang_tags
from agentcli.tools import ToolResult

if TYPE_CHECKING:
    from agentcli.config import TaskToolSettings
    from agentcli.store import TaskRecord
    from agentcli.subagents.plan import TaskPlan
    from agentcli.subagents.task_tool import ParentLink, TaskArgs

log = logging.getLogger(__name__)

#: The tools whose input a run's answer may depend on, and which argument names the path.
LOOKS: dict[str, tuple[Kind, str]] = {
    "Read": ("file", "file_path"),
    "LS": ("listing", "path"),
    "Glob": ("tree", "path"),
    "Grep": ("tree", "path"),
}
#: Tools that read nothing outside the session tree (the Task tools' subagents report their own calls).
NEUTRAL = frozenset({"TodoWrite", "Task", "TaskOutput", "TaskCancel"})
#: Tools that write one file, with the argument that names it.
FILE_WRITERS: dict[str, str] = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
                                "NotebookEdit": "notebook_path"}
#: Tools that talk with the other agents of the tree: they write no file, but an answer may rest on them.
MESSAGING = frozenset({"SendMessage", "ListAgents"})
#: Tools that write nothing. Any tool in none of these sets may write anywhere (Bash, MCP tools, new tools).
NON_WRITERS = frozenset({*LOOKS, *NEUTRAL, *MESSAGING, "WebFetch", "WebSearch", "AskUserQuestion"})
#: Task arguments that make a call's answer depend on more than its key (`isolation`: a worktree's merge back).
UNCACHEABLE_ARGS = ("resume", "fork_context", "isolation")


@dataclass(slots=True)
class _Write:
    path: Path | None  # None: anywhere
    start: int  # ticks of the cache's clock
    end: int | None = None  # None while it runs
    what: str = ""


@dataclass(slots=True)
class _Watch:
    key: str
    parent: str | None  # the watched task it runs under, if any
    start: int
    targets: list[Target] = field(default_factory=list)
    tainted: str = ""  # why it is never reused


@dataclass(frozen=True, slots=True)
class Entry:
    """A finished task whose result may be reused: what it looked at, with each target's digest."""

    key: str
    task_id: str
    result: str
    start: int  # the cache's clock when the task was started
    looked_at: tuple[tuple[Target, str], ...]


@dataclass(frozen=True, slots=True)
class Lookup:
    """What `ResultCache.lookup` found: `key` None when the call is never cached, `entry` on a hit, `why` else."""

    key: str | None
    entry: Entry | None = None
    why: str = ""
    started: float = 0.0  # time.monotonic() of the lookup, for the hit's time


def task_key(args: TaskArgs, plan: TaskPlan, depth: int) -> str:
    """The digest of everything that decides a task's answer besides the files it looks at."""
    model = plan.model
    payload: dict[str, Any] = {
        "type": [plan.agent_type.name, plan.agent_type.source],
        "model": [model.provider, model.model, model.base_url or "", model.thinking, model.thinking_budget_tokens,
                  model.reasoning_effort, model.effort, model.max_output_tokens],
        "description": args.description,
        "prompt": args.prompt,
        "expected_response": args.expected_response,
        "output_schema": args.output_schema,
        "system": plan.system_prompt,
        "user": plan.user_message,
        "tools": list(plan.tool_names),
        "depth": depth,
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


class ResultCache:
    """The reusable results of one session tree, and what its agents wrote since (see the module docstring)."""

    def __init__(self, workspace: Path, settings: TaskToolSettings) -> None:
        self.workspace = workspace
        self.enabled = settings.cache_results
        self.max_result_tokens = settings.max_result_tokens
        self.attached = False
        self._clock = 0
        self._writes: list[_Write] = []
        self._running: dict[tuple[str, str], _Write] = {}  # (session id, tool call id) of writes in flight
        self._watches: dict[str, _Watch] = {}
        self._entries: dict[str, Entry] = {}
        self._settling: dict[str, asyncio.Task[None]] = {}

    # --- what the session tree does -------------------------------------------------------------------

    def attach(self, bus: EventBus) -> Callable[[], None]:
        """Watch every event of the session tree; returns the function that stops it."""
        self.attached = True
        drop = bus.subscribe(self.observe)

        def detach() -> None:
            self.attached = False
            drop()

        return detach

    def observe(self, event: Event) -> None:
        """The bus subscriber: writes of any agent of the tree, and what watched tasks look at (synchronously,
        before the call runs: the loop emits a call's start before it executes it)."""
        if not self.enabled:
            return
        wrappers, inner = unwrap(event)
        if isinstance(inner, ToolCallStartedEvent):
            self._clock += 1
            self._started(inner, [w.task_id for w in wrappers])
        elif isinstance(inner, ToolCallFinishedEvent):
            self._clock += 1
            write = self._running.pop((inner.session_id, inner.tool_call_id), None)
            if write is not None:
                write.end = self._clock
        elif isinstance(inner, HookRunEvent):  # a command ran: it may have written anywhere
            self._clock += 1
            self._writes.append(_Write(None, self._clock, self._clock, f"a {inner.hook_event} hook"))
        elif isinstance(inner, AgentMessageEvent) and inner.delivery == "queued":  # it travels in the recipient's
            for task_id in [w.task_id for w in wrappers]:  # wrappers: it and the tasks above it read it, in effect
                watch = self._watches.get(task_id)
                if watch is not None and not watch.tainted:
                    watch.tainted = f"it received a message from {inner.sender} while it ran"

    @contextlib.contextmanager
    def writing(self, what: str) -> Iterator[None]:
        """Something that may write anywhere runs in this process outside any tool call (the person's `!command`)."""
        self._clock += 1
        write = _Write(None, self._clock, None, what)
        self._writes.append(write)
        try:
            yield
        finally:
            self._clock += 1
            write.end = self._clock

    def _started(self, call: ToolCallStartedEvent, owners: list[str]) -> None:
        name = call.name
        if name not in NON_WRITERS:
            raw = call.args.get(FILE_WRITERS[name]) if name in FILE_WRITERS else None
            path = resolve(self.workspace, raw) if isinstance(raw, str) else None
            if name in FILE_WRITERS and path is None:
                return  # no path it could name: the tool refuses it, nothing is written
            write = _Write(path, self._clock, None, f"{name} {raw}" if raw else name)
            self._writes.append(write)
            self._running[(call.session_id, call.tool_call_id)] = write
        watches = [w for w in (self._watches.get(t) for t in owners) if w is not None]
        if not watches:
            return
        target, taint = self._target(call)
        for watch in watches:
            if target is not None:
                watch.targets.append(target)
            elif taint and not watch.tainted:
                watch.tainted = taint

    @staticmethod
    def _target(call: ToolCallStartedEvent) -> tuple[Target | None, str]:
        """What a watched task's call looks at, or why its run can never be reused ("" for neither)."""
        name = call.name
        if name in LOOKS:
            kind, arg = LOOKS[name]
            raw = call.args.get(arg)
            if raw is None and kind != "file":
                raw = ""  # the tool's default: the workspace
            if not isinstance(raw, str):
                return None, f"a {name} call without a path"
            return Target(kind, raw, time.time_ns()), ""
        if name in NEUTRAL:
            return None, ""
        if name == "WebFetch":
            return None, "it fetched a web page (which can change at any time)"
        if name == "WebSearch":
            return None, "it searched the web (whose results change at any time)"
        if name in MESSAGING:
            return None, f"it called {name} (its answer may rest on other agents)"
        if name == "AskUserQuestion":
            return None, "it asked the person (whose answer may differ next time)"
        return None, f"it called {name} (agentcli cannot tell what that depends on)"

    # --- the runner's hooks ---------------------------------------------------------------------------

    async def lookup(self, args: TaskArgs, plan: TaskPlan, depth: int) -> Lookup:
        """The reusable entry for this Task call, if any (checks every file it looked at, in a thread)."""
        started = time.monotonic()
        if not (self.enabled and self.attached):
            return Lookup(None, why="result caching is off")
        if not plan.agent_type.read_only:
            return Lookup(None, why=f"{plan.agent_type.name} is not a read-only type")
        if plan.fork or plan.isolated or any(getattr(args, name, None) for name in UNCACHEABLE_ARGS):  # type's too
            return Lookup(None, why="resumes, forks and isolated tasks are never cached")
        key = task_key(args, plan, depth)
        if args.no_cache:
            return Lookup(key, why="no_cache")
        settling = self._settling.get(key)
        if settling is not None:
            await asyncio.shield(settling)
        entry = self._entries.get(key)
        if entry is None:
            return Lookup(key, why="no identical finished task")
        why = self._written(entry) or await asyncio.to_thread(self._changed, entry) or self._written(entry)
        if why:
            log.info("task result of %s not reused: %s", entry.task_id, why)
            self._entries.pop(key, None)
            return Lookup(key, why=why)
        return Lookup(key, entry, started=started)

    def watch(self, task_id: str, parent_task_id: str | None, found: Lookup) -> None:
        """Start recording what a task about to run looks at (only tasks that could be reused later)."""
        if found.key is not None:
            self._watches[task_id] = _Watch(found.key, parent_task_id, self._clock)

    def finished(self, record: TaskRecord) -> None:
        """A task ended: a completed, untainted one becomes reusable once what it looked at is proven unchanged
        (in a thread; a lookup of its key waits for that)."""
        watch = self._watches.pop(record.task_id, None)
        if watch is None:
            return
        self._prune()
        if record.status != "completed" or not (record.result or "").strip():
            return
        if watch.tainted:
            log.info("task result of %s not reusable: %s", record.task_id, watch.tainted)
            return
        key = watch.key
        job = asyncio.ensure_future(self._settle(watch, record.task_id, record.result or ""))
        self._settling[key] = job

        def settled(_: asyncio.Future[None]) -> None:
            if self._settling.get(key) is job:
                del self._settling[key]

        job.add_done_callback(settled)

    def serve(self, record: TaskRecord, parent: ParentLink, found: Lookup, model: str) -> ToolResult:
        """Answer a Task call from `found.entry`: the new task's record (completed, no tokens, `cached_from`), its
        block's added and finished events, and the parent's result that says so."""
        entry = found.entry
        assert entry is not None
        now = _now()
        record.status = "completed"
        record.result = entry.result
        record.error = None
        record.cached_from = entry.task_id
        record.child_session_id = None  # no subagent ran; resume= of this task continues the original
        record.started_at = record.finished_at = now
        record.time_ms = round((time.monotonic() - found.started) * 1000, 1)
        record.cost_usd = 0.0
        for watch in self._ancestors(parent.task_id):  # what the answer rests on is what its parents rest on
            watch.targets.extend(target for target, _ in entry.looked_at)
        short = cached_short_result(record.subagent_type, entry.task_id)
        session = parent.session
        for event in (
            SubagentBlockAddedEvent(
                session_id=session.id, agent=session.agent, task_id=record.task_id,
                parent_tool_call_id=record.parent_tool_call_id or "", subagent_type=record.subagent_type,
                description=record.description, model=model, depth=record.depth,
            ),
            SubagentBlockFinishedEvent(
                session_id=session.id, agent=session.agent, task_id=record.task_id, status="completed",
                short_result=short, elapsed_ms=record.time_ms, tool_calls=0, input_tokens=0, output_tokens=0,
                cost_usd=0.0, cached_from=entry.task_id,
            ),
        ):
            try:
                parent.emit(event)
            except Exception:
                log.exception("event consumer failed on %s", event.kind)
        log.info("task %s answered from the result of %s (no request)", record.task_id, entry.task_id)
        return cached_result(record, model, self.max_result_tokens)

    # --- checks ---------------------------------------------------------------------------------------

    def _ancestors(self, task_id: str | None) -> Iterator[_Watch]:
        seen: set[str] = set()
        while task_id is not None and task_id not in seen and (watch := self._watches.get(task_id)) is not None:
            seen.add(task_id)
            yield watch
            task_id = watch.parent

    async def _settle(self, watch: _Watch, task_id: str, result: str) -> None:
        earliest: dict[tuple[str, str], Target] = {}  # a path looked at again is proven since its first look
        for target in watch.targets:
            seen = earliest.get((target.kind, target.raw))
            if seen is None or target.started_ns < seen.started_ns:
                earliest[(target.kind, target.raw)] = target
        targets = list(earliest.values())
        try:
            # a task that looked at nothing has nothing to prove: no thread hop beside the parent's next request
            looked_at = await asyncio.to_thread(self._prove, targets) if targets else ()
        except Unprovable as exc:
            log.info("task result of %s not reusable: %s", task_id, exc)
            return
        except Exception:  # a check that fails proves nothing: the result is simply not reused
            log.exception("task result of %s not reusable: its files could not be checked", task_id)
            return
        entry = Entry(watch.key, task_id, result, watch.start, looked_at)
        if why := self._written(entry):
            log.info("task result of %s not reusable: %s", task_id, why)
            return
        self._entries[watch.key] = entry
        self._prune()

    def _prove(self, targets: list[Target]) -> tuple[tuple[Target, str], ...]:
        return tuple((t, fingerprint(self.workspace, t, since_ns=t.started_ns)) for t in targets)

    def _changed(self, entry: Entry) -> str:
        """Why what `entry` looked at is not what it was ("" when it is)."""
        for target, digest in entry.looked_at:
            try:
                if fingerprint(self.workspace, target) != digest:
                    return f"{target.label} changed"
            except Exception as exc:  # Unprovable (too large now), or a check that failed: no hit
                return f"{target.label}: {exc}"
        return ""

    def _written(self, entry: Entry) -> str:
        """Why a write of this session since `entry`'s task started may have changed what it looked at ("")."""
        for write in self._writes:
            if write.end is not None and write.end <= entry.start:
                continue
            if write.path is None:
                return f"{write.what} ran since (it may write anywhere)"
            if any(covers(target, self.workspace, write.path) for target, _ in entry.looked_at):
                return f"{write.what} wrote there since"
        return ""

    def _prune(self) -> None:
        """Forget writes that ended before every remembered and watched task started."""
        starts = [e.start for e in self._entries.values()] + [w.start for w in self._watches.values()]
        oldest = min(starts, default=self._clock)
        self._writes = [w for w in self._writes if w.end is None or w.end > oldest]


def cached_short_result(subagent_type: str, original: str) -> str:
    """The one-line form of a reused result: `Task completed by explore (cached from tsk_…)`."""
    return f"Task completed by {subagent_type} (cached from {original})"


def cached_result(record: TaskRecord, model: str, max_tokens: int) -> ToolResult:
    """The parent's tool result for a task answered from `record.cached_from`'s result."""
    original = record.cached_from or ""
    label = defang_tags(f"{record.subagent_type}, {model}")
    body = results.frame(record.task_id, record.result or "", offset=0, max_tokens=max_tokens)
    text = (
        f"Subagent ({label}) completed (cached: the result of the identical task {original}, reused without a "
        f"model request; nothing it read, listed or searched has changed since).\n\n{body}\n"
        f'[task {record.task_id}: TaskOutput(task_id="{record.task_id}") returns this result again; '
        f'Task(resume="{original}", prompt=...) continues the original\'s transcript; pass no_cache: true to run '
        "the task afresh.]"
    )
    return ToolResult(
        text,
        metadata={
            "task_id": record.task_id,
            "status": "completed",
            "code": None,
            "short_result": cached_short_result(record.subagent_type, original),
            "cached_from": original,
        },
    )
