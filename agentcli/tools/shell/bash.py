"""Bash: run a command in the workspace with a timeout, an output cap and process-group cleanup (or, with
`run_in_background`, start it and return at once: `tools/shell/background`).

The command runs as `bash -c` in a new session (its own process group), stdin closed. When it
finishes, times out or is cancelled, the whole group is stopped (SIGTERM, a short grace,
SIGKILL), so background children (`sleep 30 &`) never outlive the call; then whatever left the
group (a daemon: double fork, `setsid`) is found by the call's mark in its environment and killed
(Linux). Should agentcli itself die, even by SIGKILL, bash gets SIGKILL from the kernel
(PR_SET_PDEATHSIG, Linux) and the reaper process (`agentcli.tools.shell.reaper`) kills the whole group
and every process carrying one of this agentcli's marks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agentcli.tools.shell.reaper import MARK_VARIABLE, kill_marked, mark_needle, reaper

if TYPE_CHECKING:
    from agentcli.tools.sandbox.policy import Sandbox

TERM_GRACE_SECONDS = 0.5  # after SIGTERM, before SIGKILL
DRAIN_GRACE_SECONDS = 0.2  # after bash exits, how long background children may still write
_POLL_SECONDS = 0.02
_EXTRA_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "TERM": "dumb"}


class BashArgs(ToolArgs):
    """Arguments of Bash."""

    command: str = Field(min_length=1, description="The bash command to run in the workspace")
    timeout: float | None = Field(None, gt=0, description="Timeout in seconds (default and maximum are configured)")
    description: str | None = Field(None, description="5-10 words saying what the command does")
    run_in_background: bool = Field(False, description="Start it and return at once (servers, watchers, long builds): "
                                                       "read its output with TaskOutput, stop it with TaskCancel")
    hand_to_parent: bool = Field(False, description="With run_in_background, in a subagent: the command keeps "
                                                    "running for the agent that started you when your task ends")


class OutputBuffer:
    """Keeps the first and last `limit/2` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Add bytes as they arrive."""
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def text(self) -> str:
        """The kept output, with a marker saying how much was cut from the middle."""
        cut = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if cut <= 0:
            return (head + tail).rstrip("\n")
        return f"{head}\n\n... [{cut} bytes of output cut; {self.total} bytes in all] ...\n\n{tail}".rstrip("\n")


def _signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to a process group (0: just probe); False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a recycled id we do not own
        return False
    return True


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs. Zombies do not count: an orphan's zombie
    waits for init to reap it, which some container inits never do. Uses /proc where present."""
    if not _signal_group(pgid, 0):
        return False
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def stop_process_group(pgid: int, exited: asyncio.Future[int]) -> None:
    """SIGTERM the command's process group, wait a short grace, SIGKILL what is left, await bash's exit."""
    try:
        if _signal_group(pgid, signal.SIGTERM):
            loop = asyncio.get_running_loop()
            deadline = loop.time() + TERM_GRACE_SECONDS
            while loop.time() < deadline and _group_alive(pgid):
                await asyncio.sleep(_POLL_SECONDS)
    finally:
        _signal_group(pgid, signal.SIGKILL)
    if not exited.done():
        await asyncio.wait({exited}, timeout=TERM_GRACE_SECONDS)


class BashProtocol(asyncio.SubprocessProtocol):
    """Hands output to `feed` as it arrives; resolves futures on exit and on pipe close (a foreground call's
    buffer, a background command's file).

    (asyncio's `Process.wait()` also waits for the pipes to close, which a background child
    holding stdout delays: hence a protocol of our own.)
    """

    def __init__(self, feed: Callable[[bytes], None], loop: asyncio.AbstractEventLoop) -> None:
        self.feed = feed
        self.exited: asyncio.Future[int] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self.transport: asyncio.SubprocessTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.feed(data if isinstance(data, bytes) else data.encode())

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and not self.closed.done():
            self.closed.set_result(None)

    def process_exited(self) -> None:
        if self.transport is not None and not self.exited.done():
            code = self.transport.get_returncode()
            self.exited.set_result(code if code is not None else -1)


def max_timeout(ctx: ToolContext) -> int:
    """The longest timeout a Bash call may ask for: the cap, or the configured default when that is longer
    (a person who sets `[agent] bash_timeout_seconds` above the cap has chosen commands that long)."""
    return max(ctx.bash_max_timeout_seconds, ctx.bash_timeout_seconds)


class BashTool(Tool[BashArgs]):
    """Run a shell command."""

    name: ClassVar[str] = "Bash"
    args_model: ClassVar[type[ToolArgs]] = BashArgs
    own_time_limit: ClassVar[bool] = True
    mutating: ClassVar[bool] = True

    def summary(self, args: BashArgs) -> str:
        lines = args.command.strip().splitlines() or [""]
        return lines[0][:200] + (" …" if len(lines) > 1 or len(lines[0]) > 200 else "")

    def permission_target(self, args: BashArgs) -> str:
        return args.command.strip()

    async def run(self, args: BashArgs, ctx: ToolContext) -> ToolResult:
        timeout = args.timeout if args.timeout is not None else float(ctx.bash_timeout_seconds)
        if timeout > (cap := max_timeout(ctx)):
            raise ToolError(f"timeout {timeout:g}s is above the maximum of {cap}s")
        sandbox = ctx.sandbox if ctx.sandbox is not None and ctx.sandbox.active else None
        if ctx.sandbox is not None and (refusal := ctx.sandbox.refusal()) is not None:
            raise ToolError(refusal)
        if args.run_in_background:
            return await _start_background(args, ctx, sandbox)
        result = await _execute(args.command, timeout, ctx, sandbox)
        if sandbox is None or result.metadata.get("moved") or not (notes := sandbox.notes(result.content)):
            return result
        result.content += "\n\n" + "\n".join(notes)
        result.metadata["sandbox_refused"] = notes
        if not await ctx.permissions.approve_outside_sandbox(self, args, ctx, "\n".join(notes)):
            return result
        again = await _execute(args.command, timeout, ctx, None)
        again.content = ("[ran again OUTSIDE the sandbox, approved by the person; the sandboxed run was refused: "
                         + "; ".join(notes) + "]\n\n" + again.content)
        again.metadata["outside_sandbox"] = True
        return again


async def _start_background(args: BashArgs, ctx: ToolContext, sandbox: Sandbox | None) -> ToolResult:
    """Start the command in the background: its task id at once."""
    if ctx.shells is None:
        raise ToolError("background commands are not available to this agent: run it without run_in_background")
    job = await ctx.shells.start(args.command, ctx, sandbox, args.description or "", args.hand_to_parent)
    return ToolResult(
        f"Started background command {job.id} (process group {job.pgid}). It keeps running while you work; read what "
        f"it printed since your last look with TaskOutput(task_id=\"{job.id}\") (wait_seconds waits for more, filter "
        f"keeps matching lines), stop it with TaskCancel(task_id=\"{job.id}\"). You will be told when it exits.",
        metadata={"task_id": job.id, "background": True})


async def _execute(command: str, timeout: float, ctx: ToolContext, sandbox: Sandbox | None) -> ToolResult:
    """Run `command` once, in `sandbox` when one is given (unless the person moves it to the background)."""
    buffer = OutputBuffer(ctx.bash_output_limit_bytes)
    guard = reaper()
    mark = guard.new_mark()
    needle = mark_needle(mark)
    transport, protocol = await _spawn(command, ctx, sandbox, mark, buffer)
    pgid = transport.get_pid()  # start_new_session: the group id is bash's pid
    guard.track(pgid)  # already sent by the child; again in case the reaper had to be restarted
    moved = ctx.shells.attend(command, ctx) if ctx.shells is not None else None
    swept = handed = False
    try:
        ends: set[asyncio.Future[Any]] = {protocol.exited, *([moved] if moved is not None else [])}
        await asyncio.wait(ends, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if moved is not None and moved.done() and not protocol.exited.done() and ctx.shells is not None:
            started = ctx.shells.adopt(moved, transport, protocol, needle, buffer.text())
            handed = True
            return _moved(started.id, buffer.text())
        timed_out = not protocol.exited.done()
        if not timed_out:
            # Background children may still hold the pipe: give them a moment, then stop them.
            await asyncio.wait({protocol.closed}, timeout=DRAIN_GRACE_SECONDS)
        await stop_process_group(pgid, protocol.exited)
        kill_marked(needle, after=pgid)  # what left the group (a daemon) and still runs; it may hold the pipe
        swept = True
        if not protocol.closed.done():  # the last bytes arrive once the group is gone
            await asyncio.wait({protocol.closed}, timeout=TERM_GRACE_SECONDS)
    except BaseException:  # cancelled: still SIGTERM, grace, SIGKILL (the kill happens even if
        await stop_process_group(pgid, protocol.exited)  # cancelled again), then re-raise
        raise
    finally:
        if moved is not None and ctx.shells is not None:
            ctx.shells.leave(moved)
        if not handed:  # a moved command's process is the background command's now
            transport.close()  # closes the pipes; kills bash if it somehow still runs
            if not swept:  # cancelled or failed before the sweep above
                kill_marked(needle, after=pgid)
            guard.untrack(pgid)  # SIGKILLed above: the id may now be reused by someone else
    return _result(buffer.text(), timeout, None if timed_out else protocol.exited.result())


async def _spawn(command: str, ctx: ToolContext, sandbox: Sandbox | None, mark: str, buffer: OutputBuffer
                 ) -> tuple[asyncio.SubprocessTransport, BashProtocol]:
    """Start bash for a foreground call, its output going to `buffer`; ToolError when it cannot start."""
    loop = asyncio.get_running_loop()
    guard = reaper()
    argv, env, hook = launch(command, ctx, sandbox, mark, guard.spawn_hook())
    spawn = asyncio.ensure_future(loop.subprocess_exec(
            lambda: BashProtocol(partial(_received, buffer, ctx), loop),
            *argv,
            cwd=ctx.workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
            # Forked by the event loop's thread, which lives as long as we do; the child registers its
            # group with the reaper before bash runs, then enters the sandbox.
            preexec_fn=hook,
        ))
    try:
        # Shielded: asyncio cancelled while it connects the pipes kills bash alone and then waits for pipes
        # that never connected, for ever (the run hung on SIGTERM under load). Let it finish, then stop
        # the whole group as any cancelled call does.
        return await asyncio.shield(spawn)
    except OSError as exc:
        raise ToolError(f"Cannot start bash: {exc}") from None
    except subprocess.SubprocessError:  # the child could not enter the sandbox: nothing ran
        raise ToolError("Cannot start bash: the child could not enter the Bash sandbox; nothing ran") from None
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            transport, protocol = await spawn
            try:
                await stop_process_group(transport.get_pid(), protocol.exited)
            finally:
                transport.close()
                kill_marked(mark_needle(mark), after=transport.get_pid())
                guard.untrack(transport.get_pid())
        raise


def _moved(task_id: str, output: str) -> ToolResult:
    """What the agent reads when the person moved its command to the background while it ran."""
    return ToolResult(
        f"The person moved this command to the background while it ran: it keeps running as {task_id}. Read what "
        f"it prints next with TaskOutput(task_id=\"{task_id}\"), stop it with TaskCancel(task_id=\"{task_id}\"); "
        "you will be told when it exits. Its output so far:\n\n" + (output or "(none yet)"),
        metadata={"task_id": task_id, "background": True, "moved": True})


def _received(buffer: OutputBuffer, ctx: ToolContext, chunk: bytes) -> None:
    """A foreground call's output: kept in its buffer, shown live, counted as progress."""
    buffer.feed(chunk)
    ctx.progress()
    ctx.output(chunk)


def launch(
    command: str, ctx: ToolContext, sandbox: Sandbox | None, mark: str, hook: Callable[[], None] | None,
) -> tuple[list[str], dict[str, str], Callable[[], None] | None]:
    """The argv, environment and pre-exec hook (`hook`, the reaper's, then the sandbox's) bash starts with."""
    env = {**(os.environ if ctx.bash_env is None else ctx.bash_env), **_EXTRA_ENV, MARK_VARIABLE: mark}
    if sandbox is not None:
        env = sandbox.environment(env)
        try:
            hook = sandbox.child_hook(hook)
        except OSError as exc:
            raise ToolError(f"Cannot set up the Bash sandbox: {exc}") from None
    argv = ["bash", "-c", command] if sandbox is None else sandbox.argv(["bash", "-c", command])
    return argv, env, hook


def _result(output: str, timeout: float, code: int | None) -> ToolResult:
    """What the model reads of a finished run: its output and exit code (`code` None: it timed out)."""
    if code is None:
        body = f"Command timed out after {timeout:g}s"
        return ToolResult(body + (f"\n\n{output}" if output else ""), is_error=True)
    if code != 0:
        shown = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        return ToolResult((output + "\n\n" if output else "") + shown, metadata={"exit_code": code})
    return ToolResult(output or "(no output)", metadata={"exit_code": 0})
