"""The Bash sandbox's cost per call: `true` through the Bash tool, sandboxed and not, interleaved in one run.

Run: python bench/sandbox.py [--calls 200] [--network deny|allow]

Each call is `BashTool.run` with the command `true` (the path a model's call takes: the reaper's hook, the
fork, bash, the group's clean-up); the sandboxed calls also apply Landlock in the child and, with the network
off where user namespaces are allowed, enter a network namespace of their own. The ruleset is built once
(a warm-up call) and reused while no split folder changes, as in a session. Calls alternate between the two
so a busy machine slows both alike; the table shows the median and p95 of each and the median's difference
(target: at most 5 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.sandbox.policy import Sandbox, SandboxSpec
from agentcli.tools.shell.bash import BashArgs, BashTool


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _time(calls: int, workspace: Path, sandbox: Sandbox) -> tuple[list[float], list[float]]:
    tool, args = BashTool(), BashArgs(command="true")
    plain = ToolContext(workspace=workspace, agent="bench", session_id="bench",
                        permissions=PermissionPolicy("auto"), file_locks=FileLocks())
    boxed = ToolContext(workspace=workspace, agent="bench", session_id="bench",
                        permissions=PermissionPolicy("auto"), file_locks=FileLocks(), sandbox=sandbox)
    await tool.run(args, boxed)  # builds the ruleset (once per session)
    await tool.run(args, plain)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(calls):
        for ctx, out in ((plain, times[0]), (boxed, times[1])):
            start = time.perf_counter()
            result = await tool.run(args, ctx)
            out.append(time.perf_counter() - start)
            assert result.metadata.get("exit_code") == 0, result.content
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--network", choices=("deny", "allow"), default="deny")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve()
        sandbox = Sandbox(SandboxSpec(workspace, network=opts.network))
        if not sandbox.active:
            raise SystemExit(f"no sandbox here: {sandbox.describe()}")
        try:
            plain, boxed = asyncio.run(_time(opts.calls, workspace, sandbox))
        finally:
            sandbox.close()
    print(sandbox.describe())
    print(f"{opts.calls} calls of `true` each, interleaved\n")
    print(f"{'':<12}{'median ms':>10}{'p95 ms':>10}")
    for name, values in (("no sandbox", plain), ("sandbox", boxed)):
        print(f"{name:<12}{_ms(values, 0.5):>10.2f}{_ms(values, 0.95):>10.2f}")
    delta = 1000 * (statistics.median(boxed) - statistics.median(plain))
    print(f"\nsandbox cost per call (median difference): {delta:+.2f} ms (target <= 5 ms)")


if __name__ == "__main__":
    main()
