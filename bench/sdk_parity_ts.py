"""TypeScript SDK parity: the TypeScript Claude Agent SDK's scenarios (tests/e2e/ts), run unchanged against agentcli
and the Claude Code the SDK ships.

    npm ci --prefix tests/e2e/ts        # the SDK with its bundled Claude Code (the tests need only --omit=optional)
    .venv/bin/python bench/sdk_parity_ts.py [--only plain,sdk_mcp]        # both CLIs
    .venv/bin/python bench/sdk_parity_ts.py --agentcli-only               # agentcli alone, no namespace needed

With Claude Code the script re-executes itself inside `unshare -rn` (user + network namespace, loopback brought up,
no other interface), or refuses with one line: node, the SDK, both CLIs and the scripted fake server (in this
process) all run there, so Claude Code's binary reaches nothing but the fake. Each scenario runs per CLI in a fresh
temporary folder (workspace, HOME, CLAUDE_CONFIG_DIR, XDG folders); the scenario's checks are the SDK code's
(run.mjs) and those on the model requests (scenarios.py). Printed per scenario and CLI: PASS/FAIL, wall time, the
results (subtype/is_error/num_turns/terminal_reason/denials), the model requests, the message kinds per turn
(`(sub)`: a subagent's); then N/N per CLI and the differences. A bench script, not a test: the test suite never
runs Claude Code.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from itertools import groupby
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sdk_parity import default_cli, enter_loopback_namespace, only_loopback  # noqa: E402

from tests.e2e.ts.scenarios import SCENARIOS, TS_DIR, Outcome, Scenario, missing, run  # noqa: E402

ARCH = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def bundled_claude_code() -> Path:
    """Where `npm ci --prefix tests/e2e/ts` puts the Claude Code binary the SDK ships, for this machine."""
    arch = ARCH.get(platform.machine(), platform.machine())
    return TS_DIR / "node_modules" / "@anthropic-ai" / f"claude-agent-sdk-linux-{arch}" / "claude"


def kinds(turns: list[list[str]]) -> str:
    runs = [[(k, len(list(g))) for k, g in groupby(turn)] for turn in turns]
    return " | ".join(" ".join(k if n == 1 else f"{k}×{n}" for k, n in turn) for turn in runs) or "-"


def fields(outcome: Outcome) -> dict[str, str]:
    """What is compared between the CLIs."""
    results = " ; ".join(f"{r['subtype']}/{r['is_error']}/{r['num_turns']}/{r['terminal_reason']}/{r['denials']}"
                         for r in outcome.results) or "-"
    catch = outcome.catch_all
    requests = f"{len(outcome.requests)}" + (f" (+{catch} catch-all)" if catch else "")
    return {"results": results, "requests": requests, "messages": kinds(outcome.turns),
            "checks": "; ".join(outcome.failed) or "all passed"}


def run_one(scenario: Scenario, cli: str) -> Outcome:
    with tempfile.TemporaryDirectory(prefix=f"sdk-parity-ts-{scenario.name}-") as tmp:
        return run(scenario, cli, Path(tmp).resolve())


def print_rows(name: str, rows: dict[str, Outcome]) -> None:
    w = max(len(c) for c in rows)
    print(f"\n== {name}\n  {'cli':<{w}}  check  wall    results: subtype/is_error/num_turns/terminal_reason/denials"
          "  | model requests")
    for cli, outcome in rows.items():
        f = fields(outcome)
        print(f"  {cli:<{w}}  {'PASS' if outcome.passed else 'FAIL'}   {outcome.wall:5.1f}s  {f['results']}  "
              f"| {f['requests']}")
    for cli, outcome in rows.items():
        print(f"  {cli:<{w}}  messages: {kinds(outcome.turns)}")
        if not outcome.passed:
            for line in [f"failed: {f}" for f in outcome.failed] + [f"stderr: {s[:160]}" for s in outcome.stderr[-4:]]:
                print(f"  {cli:<{w}}  {line}")


def report(clis: dict[str, str], chosen: list[Scenario]) -> None:
    table: dict[str, dict[str, Outcome]] = {}
    for scenario in chosen:
        table[scenario.name] = {label: run_one(scenario, path) for label, path in clis.items()}
        print_rows(scenario.name, table[scenario.name])
    print("\n== summary")
    for label in clis:
        print(f"  {label}: {sum(rows[label].passed for rows in table.values())}/{len(table)} scenarios passed")
    if len(clis) < 2:
        return
    first, second = list(clis)
    print(f"\n== differences ({first} vs {second}; wall time and request counts not compared)")
    for name, rows in table.items():
        a, b = fields(rows[first]), fields(rows[second])
        diffs = [key for key in ("results", "messages", "checks") if a[key] != b[key]]
        print(f"  {name}:" + ("" if diffs else " none"))
        for key in diffs:
            print(f"    {key}:\n      {first}: {a[key]}\n      {second}: {b[key]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cli", default=default_cli(), help="agentcli's console script (default: this venv's)")
    parser.add_argument("--claude-code", metavar="PATH", default=str(bundled_claude_code()),
                        help="Claude Code's binary (default: the one the SDK ships; run only in a loopback netns)")
    parser.add_argument("--agentcli-only", action="store_true", help="run agentcli alone")
    parser.add_argument("--only", help="comma-separated scenario names: " + ",".join(s.name for s in SCENARIOS))
    args = parser.parse_args()
    if (problem := missing()) is not None:
        sys.exit(f"sdk_parity_ts: {problem}")
    chosen = [s for s in SCENARIOS if not args.only or s.name in args.only.split(",")]
    clis = {"agentcli": args.cli}
    if not args.agentcli_only:
        if not os.access(args.claude_code, os.X_OK):
            sys.exit(f"sdk_parity_ts: no Claude Code binary at {args.claude_code}: npm ci --prefix {TS_DIR} "
                     "installs the one the SDK ships (or pass --claude-code PATH, or --agentcli-only)")
        enter_loopback_namespace(Path(__file__))
        clis["claude-code"] = args.claude_code
    print(f"sdk_parity_ts: {', '.join(f'{k}={v}' for k, v in clis.items())}; scenarios: {len(chosen)}"
          + ("; loopback-only network namespace" if only_loopback() else ""), flush=True)
    report(clis, chosen)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
