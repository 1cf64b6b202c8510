"""Start-up figures: median wall time of `agentcli --help`, the import cost of each SDK, and a
one-shot's start -> first request beside a bare SDK script doing the same.

Run: python bench/startup.py [--runs 10]
All figures come from this one run, on this machine, so they can be compared with each other.
The first-request figure is measured at the fake server (its own process): from just before the
process is spawned to the arrival of its first model request.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _median_wall(cmd: list[str], runs: int) -> float:
    subprocess.run(cmd, capture_output=True, check=True)  # warm the file cache
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


BARE = """
import anthropic, asyncio, os
async def main():
    env = os.environ
    client = anthropic.AsyncAnthropic(api_key=env["ANTHROPIC_API_KEY"], base_url=env["ANTHROPIC_BASE_URL"])
    stream = await client.messages.create(model="claude-sonnet-5-5", max_tokens=100, stream=True,
                                          messages=[{"role": "user", "content": "hi"}])
    async for _ in stream:
        pass
asyncio.run(main())
"""


def _first_request_ms(cmd: list[str], runs: int, workdir: Path) -> float:
    """Median time from spawning `cmd` to its first request reaching the fake server."""
    from fake_server import server_process

    from agentcli.testing.fake_llm import Match, Reply, Script, Step

    samples = []
    for i in range(runs + 1):
        script = Script(steps=[Step(match=Match(), reply=Reply(text="ok"), times=None, optional=True)])
        run_dir = workdir / f"run{i}"
        run_dir.mkdir(parents=True)
        with server_process(script, run_dir) as (base_url, requests):
            env = {"PATH": "/usr/bin:/bin", "HOME": str(run_dir), "XDG_CONFIG_HOME": str(run_dir / "c"),
                   "XDG_DATA_HOME": str(run_dir / "d"), "XDG_STATE_HOME": str(run_dir / "s"),
                   "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": base_url}
            start = time.monotonic()
            subprocess.run(cmd, capture_output=True, check=True, env=env, cwd=run_dir)
        if i:  # the first run warms the file cache
            samples.append(min(r.received_at for r in requests) - start)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    py = sys.executable
    script = shutil.which("agentcli", path=str(Path(sys.executable).parent))
    bare = _median_wall([py, "-c", "pass"], args.runs)
    rows = [("python -c pass (interpreter baseline)", bare)]
    if script:
        rows.append(("agentcli --help (console script)", _median_wall([script, "--help"], args.runs)))
    rows.append(("python -m agentcli --help", _median_wall([py, "-m", "agentcli", "--help"], args.runs)))
    for module in ("typer", "textual", "openai", "anthropic"):
        rows.append((f"python -c 'import {module}'", _median_wall([py, "-c", f"import {module}"], args.runs)))
    print(f"median wall time over {args.runs} runs")
    for label, ms in rows:
        extra = f"  (+{ms - bare:.0f} ms over the interpreter)" if label != rows[0][0] else ""
        print(f"  {label:<42} {ms:8.1f} ms{extra}")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        runs = max(3, args.runs // 2)
        bare_ms = _first_request_ms([py, "-c", BARE], runs, Path(tmp) / "bare")
        ours_ms = _first_request_ms([py, "-m", "agentcli", "run", "--yes", "hi"], runs, Path(tmp) / "ours")
    print(f"start -> first model request, median of {runs} runs")
    print(f"  bare script (import anthropic, one streamed request)  {bare_ms:8.1f} ms")
    print(f"  agentcli run                                          {ours_ms:8.1f} ms  "
          f"({(ours_ms / bare_ms - 1) * 100:+.0f}% vs bare)")


if __name__ == "__main__":
    main()
