"""Background commands: a printed line's way to TaskOutput, and starting one against a plain Bash call, in one run.

Run: python bench/background.py [--lines 1000] [--calls 200] [--flood-mb 100] [--repeat 3] [--network deny|allow]

Latency: a background command (`python3 -u`) waits on a fifo in the workspace; per line the bench starts
`BackgroundShells.output(job, wait_seconds=10)` (TaskOutput's path: it waits on the job's `changed` event), writes a
byte to the fifo, the command prints `time.time()` and the bench takes its own clock when `output` returns. The
figure is the difference, from the moment the command printed to the moment TaskOutput had the line (the pipe,
the event loop, the file write and read, the result's text). Two commands run side by side, one in the Bash
sandbox and one not, their lines interleaved so a busy machine slows both alike.

Starting: `BashTool.run` with `true` (a plain call, to its end) against the same call with `run_in_background=true`
(until it returns the task id, and, separately, until the background `true` has exited and its clean-up is done:
`job.done`), interleaved, in the Bash sandbox when this machine has one (as Bash normally runs). The table shows
medians and p90 and the ratio to the plain call.

Flood: a command printing --flood-mb MiB (`head -c`), through a plain Bash call (kept in memory, head and tail)
and in the background (to its output file, capped: the oldest bytes cut), until it has exited. Nothing is
asserted on time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.sandbox.policy import Sandbox, SandboxSpec
from agentcli.tools.shell.background import BackgroundCommand, BackgroundShells
from agentcli.tools.shell.bash import BashArgs, BashTool

# Prints its own clock once per byte the bench writes to the fifo; ends when the bench closes it. One write per
# line (print writes the line and its newline apart: two chunks).
CHILD = ("import os, sys, time\nf = open(sys.argv[1], 'rb', 0)\n"
         "while f.read(1):\n    os.write(1, b'%r\\n' % time.time())\n")


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _context(workspace: Path, sandbox: Sandbox | None, shells: BackgroundShells) -> ToolContext:
    return ToolContext(workspace=workspace, agent="bench", session_id="bench", permissions=PermissionPolicy("auto"),
                       file_locks=FileLocks(), sandbox=sandbox, shells=shells)


class _Printer:
    """One background command printing its clock on request, and the latencies read of it."""

    def __init__(self, shells: BackgroundShells, job: BackgroundCommand, fd: int) -> None:
        self.shells, self.job, self.fd = shells, job, fd
        self.latencies: list[float] = []

    @classmethod
    async def start(cls, shells: BackgroundShells, ctx: ToolContext, sandbox: Sandbox | None,
                    fifo: Path) -> _Printer:
        os.mkfifo(fifo, 0o600)
        command = f"exec {shlex.quote(sys.executable)} -c {shlex.quote(CHILD)} {shlex.quote(str(fifo))}"
        job = await shells.start(command, ctx, sandbox)
        fd = await asyncio.wait_for(asyncio.to_thread(os.open, fifo, os.O_WRONLY), 10)  # once the child opened it
        return cls(shells, job, fd)

    async def one(self) -> None:
        """One line: TaskOutput waiting, the request, the line's way back."""
        reader = asyncio.ensure_future(self.shells.output(self.job, wait_seconds=10))
        await asyncio.sleep(0)  # TaskOutput is now waiting for news
        os.write(self.fd, b"x")
        result = await reader
        now = time.time()
        text = result.content.split("\n\n", 1)[1]
        try:
            stamp = float(text)
        except ValueError:
            raise SystemExit(f"unexpected TaskOutput for one line: {result.content!r}") from None
        self.latencies.append(now - stamp)

    async def close(self) -> None:
        os.close(self.fd)
        await asyncio.wait_for(self.job.done.wait(), 10)


async def _latency(lines: int, workspace: Path, sandbox: Sandbox | None) -> dict[str, list[float]]:
    shells = BackgroundShells()
    try:
        printers = {"no sandbox": await _Printer.start(shells, _context(workspace, None, shells), None,
                                                       workspace / "plain.fifo")}
        if sandbox is not None:
            printers["sandbox"] = await _Printer.start(shells, _context(workspace, sandbox, shells), sandbox,
                                                       workspace / "boxed.fifo")
        for printer in printers.values():
            for _ in range(5):  # warm-up: the child's start, the first reads
                await printer.one()
            printer.latencies.clear()
        order = list(printers.values())
        for _ in range(lines):
            for printer in order:
                await printer.one()
            order.reverse()  # neither always goes first
        for printer in printers.values():
            await printer.close()
        return {name: printer.latencies for name, printer in printers.items()}
    finally:
        await shells.aclose()


async def _flood(megabytes: int, repeat: int, workspace: Path, sandbox: Sandbox | None) -> dict[str, list[float]]:
    shells = BackgroundShells()
    ctx = _context(workspace, sandbox, shells)
    tool, plain = BashTool(), BashArgs(command=f"head -c {megabytes << 20} /dev/zero")
    times: dict[str, list[float]] = {"plain Bash (to its end)": [], "background (until exited)": []}
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            result = await tool.run(plain, ctx)
            times["plain Bash (to its end)"].append(time.perf_counter() - start)
            assert result.metadata.get("exit_code") == 0, result.content
            start = time.perf_counter()
            job = await shells.start(plain.command, ctx, sandbox)
            await asyncio.wait_for(job.done.wait(), 60)
            times["background (until exited)"].append(time.perf_counter() - start)
            assert job.exit_code == 0 and job.written == megabytes << 20, job.state()
    finally:
        await shells.aclose()
    return times


async def _starts(calls: int, workspace: Path, sandbox: Sandbox | None) -> dict[str, list[float]]:
    shells = BackgroundShells()
    ctx = _context(workspace, sandbox, shells)
    tool, plain, background = BashTool(), BashArgs(command="true"), BashArgs(command="true", run_in_background=True)
    await tool.run(plain, ctx)  # builds the sandbox's ruleset (once per session)
    times: dict[str, list[float]] = {"plain Bash `true` (to its end)": [], "background: id returned": [],
                                     "background: `true` exited, cleaned up": []}
    lists = list(times.values())
    try:
        async def run_plain() -> None:
            start = time.perf_counter()
            result = await tool.run(plain, ctx)
            lists[0].append(time.perf_counter() - start)
            assert result.metadata.get("exit_code") == 0, result.content

        async def run_background() -> None:
            start = time.perf_counter()
            result = await tool.run(background, ctx)
            lists[1].append(time.perf_counter() - start)
            job = shells.find(result.metadata["task_id"])
            assert job is not None, result.content
            await asyncio.wait_for(job.done.wait(), 10)
            lists[2].append(time.perf_counter() - start)
            assert job.exit_code == 0, job.state()

        for turn in range(calls):
            for step in (run_plain, run_background) if turn % 2 == 0 else (run_background, run_plain):
                await step()  # each goes first in half the rounds
    finally:
        await shells.aclose()
    return times


def _table(title: str, times: dict[str, list[float]], baseline: str) -> None:
    print(title)
    print(f"{'':<40}{'median ms':>10}{'p90 ms':>10}{'max ms':>10}{'x first row':>14}")
    base = statistics.median(times[baseline])
    for name, values in times.items():
        print(f"{name:<40}{_ms(values, 0.5):>10.2f}{_ms(values, 0.9):>10.2f}{_ms(values, 1.0):>10.2f}"
              f"{statistics.median(values) / base:>14.2f}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000, help="lines read through TaskOutput per command")
    parser.add_argument("--calls", type=int, default=200, help="plain and background starts of `true` each")
    parser.add_argument("--flood-mb", type=int, default=100, help="MiB of output of the flood case")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the flood case")
    parser.add_argument("--network", choices=("deny", "allow"), default="deny")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve()
        made = Sandbox(SandboxSpec(workspace, network=opts.network))
        print(made.describe())
        sandbox = made if made.active else None
        try:
            latency = asyncio.run(_latency(opts.lines, workspace, sandbox))
            starts = asyncio.run(_starts(opts.calls, workspace, sandbox))
            flood = asyncio.run(_flood(opts.flood_mb, opts.repeat, workspace, sandbox))
        finally:
            if sandbox is not None:
                sandbox.close()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores\n")
    _table(f"Line printed -> TaskOutput(wait_seconds) returns it, {opts.lines} lines per command, interleaved",
           latency, "no sandbox")
    _table(f"Starting `true`, {opts.calls} calls each, interleaved"
           f"{', in the sandbox' if sandbox is not None else ', no sandbox here'}", starts,
           "plain Bash `true` (to its end)")
    cap = BackgroundShells().output_cap >> 20
    _table(f"Output flood: `head -c {opts.flood_mb}M /dev/zero`, {opts.repeat} rounds, interleaved (the background "
           f"command's file keeps its newest {cap} MiB)", flood, "plain Bash (to its end)")


if __name__ == "__main__":
    main()
