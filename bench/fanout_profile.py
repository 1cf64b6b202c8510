"""Where a fan-out's milliseconds go in the real CLI: a sampling profile of `agentcli run` (every feature on)
over the two windows of a fan-out that hold the parent back.

Run: python bench/fanout_profile.py [--fanout 16] [--runs 3] [--latency-ms 500] [--interval-ms 0.5] [--top 25]

The peer bench's fanout scenario (bench/peers.py: the fake server in its own process, `--latency-ms` before each
answer, max_concurrent = fan-out) runs `agentcli run` in a wrapper that samples the main thread's stack every
`--interval-ms` from a thread of its own (the GIL switch interval is lowered to match), on CLOCK_MONOTONIC, the
server's clock. Two windows, from the server's log:
- dispatch = end of the parent's answer holding the Task calls -> the last subagent's first request;
- return   = end of the last subagent answer -> the parent's next request.
Each window's samples are summed per function: the innermost agentcli frame (`ours`), and the agentcli frame an
event-loop callback entered first (`entry`: which piece of work it was); a sample in the selector's wait is
`idle` (the loop waited on a thread or the network). Sampling slows the process: the shares are the figure,
the absolute milliseconds are inflated. The sampler is a thread: it gets the GIL most often where the main thread
lets go of it (a syscall: a log write, os.urandom, a stat, a socket call), so functions that make one are
over-weighted; bench/fanout_spans.py times the steps themselves. Without --no-netns it re-runs itself under
`unshare -rn` as peers.py does.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path

WRAPPER = r'''
import os, sys, threading, time, json
out, interval = sys.argv[1], float(sys.argv[2]) / 1000
sys.argv = ["agentcli", *sys.argv[3:]]
main_id = threading.main_thread().ident
samples = []
stop = False
def stack(frame):
    names = []
    while frame is not None:
        code = frame.f_code
        names.append((code.co_filename, code.co_name))
        frame = frame.f_back
    return names
seen = set(sys.modules)
def sample():
    while not stop:
        frame = sys._current_frames().get(main_id)
        if frame is not None:
            new = [name for name in list(sys.modules) if name not in seen]
            seen.update(new)
            samples.append((time.monotonic(), stack(frame), new))
        time.sleep(interval)
def dump():
    global stop
    stop = True
    with open(out, "w") as f:
        json.dump(samples, f)
real_exit = os._exit
def exit_after_dump(code):
    dump()
    real_exit(code)
os._exit = exit_after_dump
sys.setswitchinterval(interval)
threading.Thread(target=sample, daemon=True).start()
from agentcli.__main__ import main
try:
    main()
finally:
    dump()
'''

Frame = tuple[str, str]


def _ours(path: str) -> str | None:
    """`agentcli/x/y.py` for a file of agentcli (its fake server excluded), else None."""
    marker = "/agentcli/"
    at = path.rfind(marker)
    if at < 0 or "/agentcli/testing/" in path or "site-packages" in path[:at]:
        return None
    return path[at + 1:]


def part(file: str) -> str:
    """Which part of the process a frame's file belongs to."""
    if (ours := _ours(file)) is not None:
        return "agentcli/" + ours.split("/")[1].removesuffix(".py")
    at = file.find("site-packages/")
    if at >= 0:
        return "library: " + file[at + 14:].split("/")[0].removesuffix(".py")
    return "stdlib: " + Path(file).name


def labels(stack: list[Frame]) -> tuple[str, str, str]:
    """(ours, entry, part) of one sample: innermost-first `stack`."""
    file, name = stack[0]
    if name in ("select", "poll") and file.endswith("selectors.py"):
        return ("idle (selector wait)",) * 3
    ours = next((f"{p}:{n}" for f, n in stack if (p := _ours(f))), f"(no agentcli frame) {Path(file).name}:{name}")
    entry = ours
    for i, (f, n) in enumerate(stack):
        if f.endswith("asyncio/events.py") and n == "_run":  # a callback of the event loop: what it entered
            entry = next((f"{p}:{m}" for g, m in reversed(stack[:i]) if (p := _ours(g))), ours)
            break
    return ours, entry, part(file)


def windows(requests: list, latency_ms: int) -> dict[str, tuple[float, float]]:
    """The dispatch and return windows (server clock, s) of one fan-out run."""
    from peers import MAIN_MARK

    mains = sorted((r for r in requests if MAIN_MARK in json.dumps(r.body.get("messages", [])[:1])),
                   key=lambda r: r.received_at)
    subs = [r for r in requests if r not in mains]
    end0 = mains[0].finished_at
    return {"dispatch": (end0, max(r.received_at for r in subs)),
            "return": (max(r.finished_at for r in subs), mains[-1].received_at)}


def run_one(fanout: int, latency_ms: int, interval_ms: float, tmp: Path, index: int) -> tuple[dict, list]:
    """One profiled fan-out: its windows and its samples."""
    import subprocess

    from fake_server import server_process
    from peers import FILE_TEXT, MAIN_MARK, _base_env, all_clients, script_for

    client = next(c for c in all_clients(fanout) if c.name == "agentcli")
    script = script_for("fanout", client, latency_ms, fanout)
    assert script is not None
    work, home = tmp / f"run-{index}", tmp / "home"
    work.mkdir(parents=True)
    (work / "notes.txt").write_text(FILE_TEXT)
    out = work / "samples.json"
    prompt = f"{MAIN_MARK}: what does notes.txt say?"
    with server_process(script, work, strict=False) as (base_url, requests):
        argv = client.command("fanout", prompt, base_url)
        argv = [sys.executable, "-c", WRAPPER, str(out), str(interval_ms), *argv[3:]]  # after "-m agentcli"
        env = {**_base_env(home, base_url), **client.env(base_url), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env=env, cwd=work, timeout=180)
    if done.returncode != 0:
        raise SystemExit(f"agentcli exited {done.returncode}: {done.stderr.decode(errors='replace')[-400:]}")
    return windows(requests, latency_ms), json.loads(out.read_text())


Tally = dict[str, collections.Counter[str]]


def tally(runs: list[tuple[dict, list]], window: str) -> tuple[float, Tally]:
    """Mean window length (ms) and the ms per label of each kind (`labels`), summed over the runs / runs."""
    kinds = ("innermost agentcli function", "event-loop callback entered", "part holding the innermost frame")
    counts: Tally = {k: collections.Counter() for k in kinds}
    length = 0.0
    imported: collections.Counter[str] = collections.Counter()
    for spans, samples in runs:
        start, end = spans[window]
        length += (end - start) * 1000
        for (t, stack, _), (t_next, _, new) in itertools.pairwise(samples):
            if start <= t < end:
                ms = (min(t_next, end) - t) * 1000
                imported.update(name for name in new if "." not in name or name.startswith("agentcli"))
                for kind, label in zip(kinds, labels([tuple(f) for f in stack]), strict=True):
                    counts[kind][label] += ms
    n = len(runs)
    counts["modules first imported in the window (runs)"] = imported
    return length / n, {k: collections.Counter({a: v / n for a, v in c.items()}) for k, c in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fanout", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency-ms", type=int, default=500)
    parser.add_argument("--interval-ms", type=float, default=0.5)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--no-netns", action="store_true")
    args = parser.parse_args()
    if not args.no_netns:
        from peers import _enter_netns

        print(_enter_netns())
    with tempfile.TemporaryDirectory() as tmp:
        run_one(args.fanout, args.latency_ms, args.interval_ms, Path(tmp), 0)  # warm-up: files, HOME
        runs = [run_one(args.fanout, args.latency_ms, args.interval_ms, Path(tmp), i + 1) for i in range(args.runs)]
    print(f"agentcli run, fan-out {args.fanout}, {args.latency_ms} ms per answer, {args.runs} runs sampled every"
          f" {args.interval_ms} ms (means per run; sampling inflates the absolute figures)")
    for window in ("dispatch", "return"):
        length, tallies = tally(runs, window)
        print(f"\n{window} window: {length:.1f} ms")
        for title, counts in tallies.items():
            print(f"  by {title}:")
            if title.startswith("modules"):
                print("    " + ", ".join(f"{name} ({n})" for name, n in sorted(counts.items())))
                continue
            for label, ms in counts.most_common(args.top):
                print(f"    {ms:7.2f} ms  {100 * ms / max(length, 1e-9):5.1f} %  {label}")


if __name__ == "__main__":
    main()
