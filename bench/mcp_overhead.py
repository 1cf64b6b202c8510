"""MCP figures: what a configured server adds before the first model request, and what a tool call costs
through agentcli's manager beside the SDK's own `Client` calling the same server.

Run: python bench/mcp_overhead.py [--runs 8] [--calls 200]
Needs the dev extra (`mcp`, `mcp-server-time`). All figures come from this one run; runs are interleaved
(no server / one server, manager / bare client) and medians are quoted, with their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fake_server import server_process

from agentcli.testing.fake_llm import Match, Reply, Script, Step

SERVER_TOML = f'[mcp.servers.time]\ncommand = "{sys.executable}"\nargs = ["-m", "mcp_server_time"]\n'


def _first_request(workdir: Path, with_server: bool) -> float:
    """Seconds from spawning `agentcli run` to its first request at the fake server."""
    script = Script(steps=[Step(match=Match(), reply=Reply(text="ok"), times=None, optional=True)])
    workdir.mkdir(parents=True)
    config = workdir / "c" / "agentcli"
    config.mkdir(parents=True)
    if with_server:
        (config / "config.toml").write_text(SERVER_TOML)
    with server_process(script, workdir) as (base_url, requests):
        env = {"PATH": "/usr/bin:/bin", "HOME": str(workdir), "XDG_CONFIG_HOME": str(workdir / "c"),
               "XDG_DATA_HOME": str(workdir / "d"), "XDG_STATE_HOME": str(workdir / "s"),
               "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": base_url}
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "agentcli", "run", "--yes", "hi"], capture_output=True, check=True,
                       env=env, cwd=workdir)
    return min(r.received_at for r in requests) - start


async def _calls(calls: int) -> tuple[float, float]:
    """Median seconds per call: through McpManager.call, and through a bare SDK Client (same server, interleaved)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from agentcli.mcp.manager import McpManager
    from agentcli.mcp.specs import ServerSpec

    with tempfile.TemporaryDirectory() as tmp:
        spec = ServerSpec("time", "stdio", "bench", False, command=sys.executable, args=("-m", "mcp_server_time"))
        manager = McpManager([spec], workspace=Path(tmp), trusted=lambda: True, log_dir=Path(tmp))
        await manager.start_all()
        params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_time"])
        ours, bare = [], []
        try:
            with open(Path(tmp) / "bare.log", "w") as errlog:
                from mcp.client.stdio import stdio_client

                async with Client(stdio_client(params, errlog=errlog)) as client:
                    for _ in range(calls):
                        start = time.perf_counter()
                        await manager.call("time", "get_current_time", {"timezone": "UTC"}, "bench")
                        ours.append(time.perf_counter() - start)
                        start = time.perf_counter()
                        await client.call_tool("get_current_time", {"timezone": "UTC"})
                        bare.append(time.perf_counter() - start)
        finally:
            await manager.aclose()
    return statistics.median(ours), statistics.median(bare)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    without, with_server = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs + 1):
            a = _first_request(Path(tmp) / f"none{i}", with_server=False)
            b = _first_request(Path(tmp) / f"time{i}", with_server=True)
            if i:  # the first pair warms the file cache
                without.append(a)
                with_server.append(b)
    none_ms, time_ms = statistics.median(without) * 1000, statistics.median(with_server) * 1000
    print(f"agentcli run: start -> first model request, median of {args.runs} interleaved runs")
    print(f"  no MCP server configured                {none_ms:8.1f} ms")
    print(f"  one stdio server (mcp-server-time)      {time_ms:8.1f} ms  (+{time_ms - none_ms:.0f} ms, "
          f"x{time_ms / none_ms:.2f}: the server's own start and tool listing)")
    ours, bare = asyncio.run(_calls(args.calls))
    print(f"tool call get_current_time, median of {args.calls} interleaved calls")
    print(f"  bare SDK Client.call_tool               {bare * 1000:8.3f} ms")
    print(f"  McpManager.call (agentcli)              {ours * 1000:8.3f} ms  (x{ours / bare:.2f})")


if __name__ == "__main__":
    main()
