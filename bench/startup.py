"""Start-up and exit figures: `agentcli --help`, each SDK's import cost, and a one-shot's two ends beside
the floor, a bare script that imports the anthropic SDK and sends one streamed request.

Run: python bench/startup.py [--runs 10] [--skip-help] [--latency-ms 300] [--baseline-python PYTHON]
All figures come from this one run, on this machine, so they can be compared with each other.
The floor and `agentcli run` are run interleaved (alternating which goes first), each against its own
fake server process, and medians are printed:

- start -> first request: from just before the process is spawned to the arrival of its first model
  request, on the fake server's clock (CLOCK_MONOTONIC, the same as `time.monotonic()` here);
- last answer -> exit: from the end of the last response (server clock) to the moment the process
  has exited (`wait()` returned here);
- wall: spawn -> exit.
Targets: start -> first request <= 1.08 x the floor (issue 21; it was 1.05 before dynaconf and pydantic-settings
carried the config); last answer -> exit <= 0.1 s (issue 14).

Before the one-shot figures, `config_figures` times, in fresh interpreters that have already imported what a run
imports anyway (the SDK, typer, pydantic), what the config libraries add: importing pydantic-settings and dynaconf,
importing the schema, and one `load_config` of the shipped defaults plus a user file.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from fake_server import server_process

from agentcli.testing.fake_llm import Match, Reply, Script, Step

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


@dataclass(frozen=True, slots=True)
class Sample:
    """One process's figures, in ms."""

    first_request: float
    exit_after_answer: float
    wall: float


def bench_env(home: Path, base_url: str) -> dict[str, str]:
    """A clean environment: the home and XDG dirs under `home`, the fake server as the endpoint."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_CONFIG_HOME": str(home / "c"),
            "XDG_DATA_HOME": str(home / "d"), "XDG_STATE_HOME": str(home / "s"),
            "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": base_url}


def one_shot(cmd: list[str], run_dir: Path, script: Script, home: Path) -> Sample:
    """Spawn `cmd` against a fresh fake server serving `script`; its figures from both clocks."""
    run_dir.mkdir(parents=True)
    with server_process(script, run_dir) as (base_url, requests):
        start = time.monotonic()
        subprocess.run(cmd, capture_output=True, check=True, env=bench_env(home, base_url), cwd=run_dir)
        end = time.monotonic()
    first = min(r.received_at for r in requests)
    last = max(r.finished_at or r.received_at for r in requests)
    return Sample((first - start) * 1000, (end - last) * 1000, (end - start) * 1000)


def interleaved(commands: dict[str, list[str]], runs: int, workdir: Path, script: Script,
                fresh_home: bool = False) -> dict[str, list[Sample]]:
    """`runs` samples of each command, alternating the order each round; one warm-up round first.

    Each command keeps one home from the warm-up round on (agentcli's database then exists, as it does for
    anyone after their first run); `fresh_home` gives every run a new one (a first run ever: the database
    is created and migrated before the first request).
    """
    samples: dict[str, list[Sample]] = {name: [] for name in commands}
    names = list(commands)
    for i in range(runs + 1):
        for name in names if i % 2 else reversed(names):
            home = workdir / (f"home-{name}-{i}" if fresh_home else f"home-{name}")
            sample = one_shot(commands[name], workdir / f"{name}-{i}", script, home)
            if i:  # the first round warms the file cache
                samples[name].append(sample)
    return samples


def median(values: list[float]) -> float:
    return statistics.median(values)


def _median_wall(cmd: list[str], runs: int) -> float:
    subprocess.run(cmd, capture_output=True, check=True)  # warm the file cache
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


CONFIG_PROBE = """
import gc, json, sys, time
from pathlib import Path
gc.disable()  # as agentcli runs until its first request is out
import anthropic, typer, pydantic  # a run imports these anyway: not the config libraries' cost
marks = [time.perf_counter()]
import pydantic_settings
marks.append(time.perf_counter())
import dynaconf
marks.append(time.perf_counter())
import agentcli.config.schema
from agentcli.config.load import load_config
marks.append(time.perf_counter())
home = Path(sys.argv[1])
load_config(home, env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / "c")})
marks.append(time.perf_counter())
print(json.dumps([(b - a) * 1000 for a, b in zip(marks, marks[1:])]))
"""
CONFIG_STEPS = ("import pydantic_settings", "import dynaconf", "import the schema",
                "load_config (defaults + a user file)")


def config_figures(runs: int) -> None:
    """What the config path adds before the first request, step by step (medians of fresh interpreters)."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "c" / "agentcli").mkdir(parents=True)
        (home / "c" / "agentcli" / "config.toml").write_text('[models.main]\nmodel = "claude-sonnet-5-5"\n'
                                                             '[permissions]\nallow = ["Read"]\n')
        samples = []
        for i in range(runs + 1):
            out = subprocess.run([sys.executable, "-c", CONFIG_PROBE, tmp], capture_output=True, text=True,
                                 check=True).stdout
            if i:  # the first run warms the file cache
                samples.append(json.loads(out))
    print(f"config path, medians of {runs} fresh interpreters that already imported the SDK, typer and pydantic")
    for step, values in zip(CONFIG_STEPS, zip(*samples, strict=True), strict=True):
        print(f"  {step:<34} {median(list(values)):6.1f} ms")
    print(f"  {'total':<34} {median([sum(row) for row in samples]):6.1f} ms")


def help_figures(runs: int) -> None:
    py = sys.executable
    script = shutil.which("agentcli", path=str(Path(sys.executable).parent))
    bare = _median_wall([py, "-c", "pass"], runs)
    rows = [("python -c pass (interpreter baseline)", bare)]
    if script:
        rows.append(("agentcli --help (console script)", _median_wall([script, "--help"], runs)))
    rows.append(("python -m agentcli --help", _median_wall([py, "-m", "agentcli", "--help"], runs)))
    for module in ("typer", "textual", "openai", "anthropic"):
        rows.append((f"python -c 'import {module}'", _median_wall([py, "-c", f"import {module}"], runs)))
    print(f"median wall time over {runs} runs (target: agentcli --help <= 120 ms)")
    for label, ms in rows:
        extra = f"  (+{ms - bare:.0f} ms over the interpreter)" if label != rows[0][0] else ""
        print(f"  {label:<42} {ms:8.1f} ms{extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--skip-help", action="store_true", help="only the one-shot figures")
    parser.add_argument("--latency-ms", type=int, default=300,
                        help="the fake model's time to answer (default 300, as in issue 14's comparison)")
    parser.add_argument("--fresh-home", action="store_true",
                        help="a new home for every run: agentcli creates its database each time (a first run ever)")
    parser.add_argument("--baseline-python", metavar="PYTHON", action="append", default=[],
                        help="also run `PYTHON -m agentcli run` (e.g. another checkout's venv) in the same rounds; "
                             "repeatable, each named after its checkout's folder")
    args = parser.parse_args()
    if not args.skip_help:
        help_figures(args.runs)
        config_figures(args.runs)
    py = sys.executable
    commands = {
        "floor": [py, "-c", BARE],
        "agentcli": [py, "-m", "agentcli", "run", "--yes", "--output-format", "json", "hi"],
    }
    for python in args.baseline_python:
        name = Path(python).absolute().parents[2].name  # CHECKOUT/.venv/bin/python
        commands[name if name not in commands else f"{name}-{len(commands)}"] = [
            python, "-m", "agentcli", "run", "--yes", "--output-format", "json", "hi"]
    script = Script(steps=[Step(match=Match(), reply=Reply(text="ok"), times=None, optional=True,
                                latency_ms=args.latency_ms)])
    with tempfile.TemporaryDirectory() as tmp:
        samples = interleaved(commands, args.runs, Path(tmp), script, args.fresh_home)
    floor, ours = samples["floor"], samples["agentcli"]
    print(f"one-shot, medians of {args.runs} interleaved runs, model answers in {args.latency_ms} ms "
          "(floor: import anthropic, one streamed request); "
          + ("a new home every run (a first run ever)" if args.fresh_home
             else "one home per client (its database exists)"))
    print(f"  {'':<10} {'start->1st request':>19} {'last answer->exit':>18} {'wall':>9}")
    for name, rows in samples.items():
        print(f"  {name:<10} {median([s.first_request for s in rows]):16.1f} ms "
              f"{median([s.exit_after_answer for s in rows]):15.1f} ms {median([s.wall for s in rows]):6.0f} ms")
    for name, rows in samples.items():
        if name != "floor":
            ratio = median([o.first_request / f.first_request for o, f in zip(rows, floor, strict=True)])
            print(f"  start -> first request: {name} / floor = {ratio:.3f} (median of per-round ratios; "
                  "target <= 1.08)")
    print(f"  last answer -> exit: agentcli {median([s.exit_after_answer for s in ours]):.0f} ms "
          f"(target <= 100 ms), floor {median([s.exit_after_answer for s in floor]):.0f} ms")


if __name__ == "__main__":
    main()
