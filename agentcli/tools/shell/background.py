"""Bash commands that keep running beside the agents (`Bash(run_in_background=true)`): dev servers, watchers, long
builds. One `BackgroundShells` per session tree; each command is a task of its own (`bash_…`), which `TaskOutput`
reads (what is new since the last read, optionally waiting for more and filtering lines) and `TaskCancel` stops.

A command starts as any Bash call does (the sandbox, the reaper's mark, a process group of its own) but nobody waits
for it: its output goes to a file in the session's folder, capped (the oldest bytes cut first, and the cut said), and
when it exits its agent is told at its next turn (status, exit code, last lines), as of a background subagent. It
belongs to the agent that started it: a subagent's commands end when its task ends (those it started with
`hand_to_parent` go on as its parent's, unless its worktree goes with the task), and every one ends with the
session (`aclose`: SIGTERM, a grace, SIGKILL to the whole group and whatever carries its mark); the reaper ends them
should agentcli die.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from agentcli.tools.base import ToolContext, ToolError, ToolResult
from agentcli.tools.shell.bash import DRAIN_GRACE_SECONDS, BashProtocol, launch, stop_process_group
from agentcli.tools.shell.reaper import kill_marked, mark_needle, reaper

if TYPE_CHECKING:
    from agentcli.tools.sandbox.policy import Sandbox

log = logging.getLogger("agentcli.tools")
LAST_LINES = 10  # lines of a command's output its exit notice quotes
READ_LIMIT = 30_000  # bytes one TaskOutput returns at most (the newest; the rest stays readable in the file)


@dataclass(eq=False)
class BackgroundCommand:
    """One command running (or run) in the background, and what has been read of its output."""

    id: str
    command: str
    owner: str  # the session id of the agent that started it
    agent: str
    path: Path  # its output file
    cap: int  # bytes the file keeps at most
    started: float = field(default_factory=time.time)
    status: str = "running"  # running | exited | stopped
    exit_code: int | None = None
    pgid: int = 0
    written: int = 0  # bytes of output in all
    dropped: int = 0  # bytes cut from the front of the file
    read_to: int = 0  # how far (in `written` terms) TaskOutput has read
    ended: float | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    watcher: asyncio.Task[None] | None = None
    exited: asyncio.Future[int] | None = None  # resolves with bash's exit code
    tool_call_id: str = ""  # the Bash call that started it
    sink: BinaryIO | None = None  # the output file, open while output arrives (one open, not one per chunk)
    description: str = ""  # the Bash call's own words for it (its `description`), if any
    hand_over: bool = False  # a subagent's command that goes on for its parent when its task ends

    def write(self, chunk: bytes) -> None:
        """Append output; past the cap, keep the newest half of it (only that half is read back)."""
        if self.sink is None:
            self.sink = open(self.path, "a+b")  # noqa: SIM115 - closed by close_output when the command ends
        self.sink.write(chunk)
        self.sink.flush()  # TaskOutput reads the file
        self.written += len(chunk)
        if (size := self.written - self.dropped) > self.cap:
            keep = os.pread(self.sink.fileno(), self.cap // 2, size - self.cap // 2)
            self.sink.truncate(0)
            self.sink.write(keep)  # appends: at 0 now
            self.sink.flush()
            self.dropped += size - len(keep)
        self.changed.set()

    def close_output(self) -> None:
        """No more output comes: close the file (it stays readable)."""
        if self.sink is not None:
            self.sink.close()
            self.sink = None

    def read_new(self) -> tuple[bytes, int]:
        """The output written since the last read (its newest `READ_LIMIT` bytes), and how many bytes before it
        were cut (by the cap, or by this read's limit). While the command runs, a line it has not finished yet is
        left for the next read (a program that writes a line and its newline apart is read whole)."""
        start = max(self.read_to - self.dropped, 0)
        cut = max(self.dropped - self.read_to, 0)
        with open(self.path, "rb") as out:
            out.seek(start)
            data = out.read(max(self.written - self.dropped - start, 0))
        read_to = self.read_to + cut + len(data)
        if self.status == "running" and (end := data.rfind(b"\n")) >= 0 and end + 1 < len(data):
            read_to -= len(data) - end - 1
            data = data[:end + 1]
        if len(data) > READ_LIMIT:
            cut += len(data) - READ_LIMIT
            data = data[-READ_LIMIT:]
        self.read_to = read_to
        self.changed.clear()
        return data, cut

    def whole_line_waiting(self) -> bool:
        """Whether a whole line was written since the last read."""
        start = max(self.read_to - self.dropped, 0)
        with open(self.path, "rb") as out:
            out.seek(start)
            return b"\n" in out.read(max(self.written - self.dropped - start, 0))

    def last_lines(self, count: int = LAST_LINES) -> str:
        """The last lines of its output."""
        try:
            with open(self.path, "rb") as out:
                out.seek(max(self.written - self.dropped - 8192, 0))
                text = out.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip("\n").splitlines()[-count:])

    def state(self) -> str:
        """`running for 12s`, `exited with code 0 after 3s`, `stopped after 40s`."""
        seconds = (self.ended or time.time()) - self.started
        if self.status == "running":
            return f"running for {seconds:.0f}s"
        if self.status == "stopped":
            return f"stopped after {seconds:.0f}s"
        code = self.exit_code
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
        return f"{how} after {seconds:.0f}s"


@dataclass
class ForegroundCall:
    """A Bash call its agent waits for, which the person may move to the background (Ctrl+B)."""

    command: str
    owner: str
    agent: str
    tool_call_id: str
    description: str
    started: float = field(default_factory=time.time)


class BackgroundShells:
    """The background commands of one session tree."""

    def __init__(self, max_running: int = 8, output_cap: int = 1 << 20) -> None:
        self.max_running = max_running
        self.output_cap = output_cap
        self.commands: dict[str, BackgroundCommand] = {}
        self._notices: dict[str, list[str]] = {}
        self._folder: Path | None = None
        self._stopping: set[str] = set()
        self._count = 0
        self._foreground: dict[asyncio.Future[None], ForegroundCall] = {}  # Bash calls Ctrl+B may move
        self.listeners: list[Callable[[BackgroundCommand], None]] = []  # told when a command starts and ends

    def _dir(self) -> Path:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="agentcli-shells-"))  # 0700, removed with the session
        return self._folder

    def running(self) -> list[BackgroundCommand]:
        """The commands still running, oldest first."""
        return [c for c in self.commands.values() if c.status == "running"]

    def find(self, ref: str) -> BackgroundCommand | None:
        """A command by its id."""
        return self.commands.get(ref.strip())

    async def start(self, command: str, ctx: ToolContext, sandbox: Sandbox | None, description: str = "",
                    hand_over: bool = False) -> BackgroundCommand:
        """Start `command` in the background for the agent of `ctx` (`hand_over`: a subagent's command goes on
        for its parent when its task ends); ToolError when it cannot start."""
        if len(self.running()) >= self.max_running:
            raise ToolError(f"{self.max_running} background commands are running, the most [shell] max_background "
                            "allows: stop one with TaskCancel first")
        job = self._new(command, ctx.session_id, ctx.agent, ctx.tool_call_id, description)
        job.hand_over = hand_over
        guard = reaper()
        mark = guard.new_mark()
        argv, env, hook = launch(command, ctx, sandbox, mark, guard.spawn_hook())
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: BashProtocol(job.write, loop), *argv, cwd=ctx.workspace, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, env=env, preexec_fn=hook)
        except OSError as exc:
            raise ToolError(f"Cannot start bash: {exc}") from None
        except subprocess.SubprocessError:
            raise ToolError("Cannot start bash: the child could not enter the Bash sandbox; nothing ran") from None
        guard.track(transport.get_pid())
        return self._register(job, transport, protocol, mark_needle(mark))

    def _new(self, command: str, owner: str, agent: str, tool_call_id: str, description: str) -> BackgroundCommand:
        self._count += 1
        ident = f"bash_{self._count}"  # Claude Code's form; unique in the session tree
        job = BackgroundCommand(ident, command, owner, agent, self._dir() / f"{ident}.log", self.output_cap,
                                tool_call_id=tool_call_id, description=description)
        job.path.touch(mode=0o600)
        return job

    def _register(self, job: BackgroundCommand, transport: asyncio.SubprocessTransport, protocol: BashProtocol,
                  needle: bytes) -> BackgroundCommand:
        job.pgid, job.exited = transport.get_pid(), protocol.exited
        self.commands[job.id] = job
        job.watcher = asyncio.create_task(self._watch(job, transport, protocol, needle), name=f"background-{job.id}")
        self._tell(job)
        return job

    def attend(self, command: str, ctx: ToolContext, description: str = "") -> asyncio.Future[None]:
        """A foreground Bash call runs: the future resolves when the person moves it (`move_foreground`)."""
        moved: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._foreground[moved] = ForegroundCall(command, ctx.session_id, ctx.agent, ctx.tool_call_id, description)
        return moved

    def leave(self, moved: asyncio.Future[None]) -> None:
        """That foreground call has ended, or has been moved."""
        self._foreground.pop(moved, None)

    def foreground(self) -> list[ForegroundCall]:
        """The foreground Bash calls running now (any agent's), oldest first."""
        return [call for moved, call in self._foreground.items() if not moved.done()]

    def move_foreground(self) -> str:
        """Ctrl+B: move the running foreground Bash calls to the background (as many as `max_background` leaves
        room for); one line saying what happens."""
        waiting = [moved for moved in self._foreground if not moved.done()]
        if not waiting:
            return "No Bash command is running in the foreground."
        room = self.max_running - len(self.running())
        if room <= 0:
            return (f"{self.max_running} background commands are running, the most [shell] max_background allows: "
                    "stop one first (/bg)")
        for moved in waiting[:room]:
            moved.set_result(None)
        line = f"Moving {min(room, len(waiting))} running Bash command(s) to the background (/bg lists them)"
        return line + (f"; {len(waiting) - room} stay: no room under [shell] max_background" if room < len(waiting)
                       else "")

    def adopt(self, moved: asyncio.Future[None], transport: asyncio.SubprocessTransport, protocol: BashProtocol,
              needle: bytes, output: str) -> BackgroundCommand:
        """Take over a moved foreground call's process as a background command: what it printed so far
        (`output`, which its agent is shown at once) starts the file, what it prints next goes on into it."""
        call = self._foreground.pop(moved)
        job = self._new(call.command, call.owner, call.agent, call.tool_call_id, call.description)
        job.started = call.started
        if output:
            job.write(output.encode() + b"\n")
        job.read_to = job.written  # its agent has it in the Bash call's result
        protocol.feed = job.write
        return self._register(job, transport, protocol, needle)

    def _tell(self, job: BackgroundCommand) -> None:
        for listener in list(self.listeners):
            try:
                listener(job)
            except Exception:  # a broken consumer must not break the command
                log.exception("background command listener failed")

    async def _watch(self, job: BackgroundCommand, transport: asyncio.SubprocessTransport, protocol: BashProtocol,
                     needle: bytes) -> None:
        """Wait for the command's end (or its stop), then end whatever it left behind and tell its agent."""
        try:
            await asyncio.shield(protocol.exited)
            await asyncio.wait({protocol.closed}, timeout=DRAIN_GRACE_SECONDS)
        finally:
            with contextlib.suppress(Exception):
                await stop_process_group(job.pgid, protocol.exited)
            kill_marked(needle, after=job.pgid)
            transport.close()  # no output after this
            job.close_output()
            reaper().untrack(job.pgid)
            job.ended = time.time()
            if job.id in self._stopping:
                job.status = "stopped"
            else:
                job.status, job.exit_code = "exited", protocol.exited.result() if protocol.exited.done() else None
                self._notices.setdefault(job.owner, []).append(_exit_notice(job))
            job.changed.set()
            job.done.set()
            self._tell(job)

    async def output(self, job: BackgroundCommand, wait_seconds: float = 0, pattern: str | None = None
                     ) -> ToolResult:
        """TaskOutput of a background command: its state, and the output written since the last read (waiting up
        to `wait_seconds` for some, or for its end; only the lines matching `pattern` when given)."""
        matcher = None
        if pattern:
            try:
                matcher = re.compile(pattern)
            except re.error as exc:
                raise ToolError(f"filter {pattern!r} is not a valid regular expression: {exc}") from None
        deadline = asyncio.get_running_loop().time() + wait_seconds
        while job.status == "running" and not job.whole_line_waiting():
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            job.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(job.changed.wait(), left)
        data, cut = job.read_new()
        text = data.decode("utf-8", errors="replace").rstrip("\n")
        if matcher is not None:
            text = "\n".join(line for line in text.splitlines() if matcher.search(line))
        head = f"Background command {job.id} ({job.command.splitlines()[0][:120]}): {job.state()}."
        if cut:
            head += f"\n[{cut} earlier bytes of output were cut]"
        body = text if text else "(no new output)"
        return ToolResult(f"{head}\n\n{body}", metadata={"task_id": job.id, "status": job.status,
                                                          "exit_code": job.exit_code})

    async def stop(self, job: BackgroundCommand) -> bool:
        """Stop a running command (its whole process group, then what carries its mark); False when it was not
        running."""
        if job.status != "running" or job.watcher is None or job.exited is None:
            return False
        self._stopping.add(job.id)
        with contextlib.suppress(Exception):
            await stop_process_group(job.pgid, job.exited)
        await asyncio.wait({job.watcher})
        return True

    async def end_task(self, session_id: str, parent: tuple[str, str] | None = None) -> None:
        """A subagent's task ended: its commands stop, but those it started with `hand_to_parent` go on as the
        parent's (`parent`: its session id and name; None: none may, as when the task's worktree goes), and the
        parent is told at its next turn."""
        owned = [job for job in self.running() if job.owner == session_id]
        kept = [job for job in owned if job.hand_over and parent is not None]
        for job in kept:
            assert parent is not None
            was = job.agent
            job.owner, job.agent = parent
            self._notices.setdefault(job.owner, []).append(
                f"Background command {job.id} ({job.command.splitlines()[0][:120]}), started by {was}, is yours now: "
                f"its task ended and it handed it to you; it keeps running ({job.state()}). "
                f'TaskOutput(task_id="{job.id}") reads it, TaskCancel stops it.')
        await asyncio.gather(*(self.stop(job) for job in owned if job not in kept), return_exceptions=True)

    def notices(self, session_id: str) -> list[str]:
        """What an agent has not been told yet: its commands that exited."""
        return self._notices.pop(session_id, [])

    async def aclose(self) -> None:
        """Session end: stop every command, remove the output files."""
        await asyncio.gather(*(self.stop(job) for job in self.running()), return_exceptions=True)
        for job in self.commands.values():
            job.close_output()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def _exit_notice(job: BackgroundCommand) -> str:
    last = job.last_lines()
    return (f"Background command {job.id} ({job.command.splitlines()[0][:120]}) {job.state()}."
            + (f" Its last lines:\n{last}" if last else " It printed nothing.")
            + f"\n(TaskOutput(task_id=\"{job.id}\") has the rest.)")
