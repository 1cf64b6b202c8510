"""A change and its base side by side on the in-process fan-out bench (bench/delegation.py's efficiency figures).

Run: python bench/fanout_ab.py [--base 0e77a2f] [--rounds 4] [--sizes 16,50] [--latency-ms 500]

`git archive` of --base goes to a temporary folder; each round runs this checkout's `delegation.py
--only-efficiency` once with the base's code on PYTHONPATH and once with this checkout's, in an order that
alternates per round, so both see the same machine. Printed per side: medians over the rounds of the
efficiency, the dispatch's last subagent request, the return, and the event loop's CPU per extra subagent (the
steadiest figure when other work shares the machine). The peer bench (bench/peers.py --base) does the same for
the whole CLI beside the SDK floor.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINE = re.compile(r"N=\s*(\d+): .*efficiency\s+([\d.]+)\s+dispatch first\s+([\d.]+) last\s+([\d.]+) ms"
                  r"\s+back\s+([\d.]+)")
CPU = re.compile(r"CPU per extra subagent\s+([\d.-]+) ms")


def run(bench: Path, pythonpath: str | None, sizes: str, latency_ms: int) -> dict[int, tuple[float, ...]]:
    """One `--only-efficiency` run: per size (efficiency, last, back, CPU per extra subagent)."""
    env = {**os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    out = subprocess.run([sys.executable, str(bench / "delegation.py"), "--only-efficiency", "--repeat", "1",
                          "--sizes", sizes, "--latency-ms", str(latency_ms)], cwd=bench, env=env,
                         capture_output=True, text=True, check=True, timeout=600).stdout
    lines = out.splitlines()
    figures: dict[int, tuple[float, ...]] = {}
    for i, line in enumerate(lines):
        if (m := LINE.search(line)) and (c := CPU.search(lines[i + 1])):
            figures[int(m[1])] = (float(m[2]), float(m[4]), float(m[5]), float(c[1]))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="0e77a2f")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--sizes", default="16,50")
    parser.add_argument("--latency-ms", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(f"git archive --format=tar {args.base} | tar -x -C {tmp}", shell=True, check=True, cwd=HERE)
        sides = {f"base {args.base}": (HERE, tmp), "this checkout": (HERE, None)}  # this bench, either code
        got: dict[str, list[dict[int, tuple[float, ...]]]] = {name: [] for name in sides}
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for name in order:
                got[name].append(run(*sides[name], args.sizes, args.latency_ms))
    print(f"In-process fan-out, {args.latency_ms} ms per answer, medians of {args.rounds} alternating rounds")
    for size in (int(s) for s in args.sizes.split(",")):
        for name, runs in got.items():
            eff, last, back, cpu = (statistics.median(r[size][i] for r in runs) for i in range(4))
            print(f"  N={size:3d} {name:16s} efficiency {eff:5.2f}  dispatch last {last:6.1f} ms  back {back:6.1f} ms"
                  f"  event-loop CPU per extra subagent {cpu:5.2f} ms")


if __name__ == "__main__":
    main()
