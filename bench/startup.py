"""Start-up figures: median wall time of `agentcli --help` and the import cost of each SDK.

Run: python bench/startup.py [--runs 10]
All figures come from this one run, on this machine, so they can be compared with each other.
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


if __name__ == "__main__":
    main()
