"""Remote subagents on a local Ray cluster against local ones: dispatch overhead, and a wide remote fan-out.

Run: python bench/remote.py [--runs 3] [--fanout 50] [--cpus-per-node 8] [--per-worker 4] [--sections cost,...]
(needs pip install -e '.[ray]')

A Ray cluster of a head (no CPU) and two worker nodes starts on this machine (`ray.cluster_utils.Cluster`); the
fake server runs in its own process.
- cost: CPU time and memory of starting one worker process, and of the imports its first task needs.

Each other run is `agentcli run` in a fresh git workspace whose main agent makes Task calls of general subagents
that each write one file and answer:
- dispatch: two Tasks one after the other, `isolation: "worktree"` (local) and `"remote"`, interleaved; the figure
  is the time from the end of the parent's answer holding the Task call to the subagent's first request (the
  server's clock), for the session's first Task (which joins the cluster and starts a worker) and its second (a
  worker kept warm, `[executor] keep_warm`), and the whole run's wall time;
- fan-out: `--fanout` remote writers in one turn (`num_cpus` per subagent sized so all fit at once), with
  `--per-worker` subagents per worker process and with one each: the wall time, subagents finished per second, and
  the parent process's peak RSS (`/usr/bin/time`), beside the same fan-out with `isolation: "worktree"` in the
  parent's process.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fake_server import server_process

from agentcli.testing.fake_llm import Match, Reply, Script, Step, ToolCall

MAIN = "You are agentcli, a coding assistant"
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _script(count: int, isolation: str, rounds: int = 1) -> Script:
    """`rounds` turns of the main agent, each with `count` Task calls of writers (each writes one file)."""
    steps: list[Step] = []
    for r in range(rounds):
        names = [f"part{r * count + n}" for n in range(count)]
        tasks = [ToolCall(name="Task", input={"description": f"Write {name} now", "prompt": f"Write {name}.txt",
                                              "subagent_type": "general", "isolation": isolation}) for name in names]
        steps.append(Step(match=Match(system_contains=MAIN, turn=r), reply=Reply(tool_calls=tasks)))
        for name in names:
            task = f"# Task\nWrite {name} now"
            steps += [Step(match=Match(system_contains=task, turn=0), reply=Reply(tool_calls=[
                          ToolCall(name="Write", input={"file_path": f"{name}.txt", "content": f"{name}\n"})])),
                      Step(match=Match(system_contains=task, turn=1), reply=Reply(text=f"{name} done"))]
    steps.append(Step(match=Match(system_contains=MAIN, turn=rounds), reply=Reply(text="Done.")))
    return Script(steps=steps)


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir()
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=ws, check=True,
                       env={**os.environ, **GIT_ENV})
    return ws


def run_once(count: int, isolation: str, address: str, cpus: float, rounds: int = 1, per_worker: int = 4
             ) -> dict[str, Any]:
    """One `agentcli run`: its wall time, peak RSS, and each round's dispatch delay (its main answer's end to its
    first subagent request)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = _workspace(root)
        with server_process(_script(count, isolation, rounds), root, strict=False) as (base_url, requests):
            env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENTCLI_"))}
            env.update(GIT_ENV, XDG_DATA_HOME=str(root / "data"), XDG_STATE_HOME=str(root / "state"),
                       XDG_CONFIG_HOME=str(root / "config"), ANTHROPIC_API_KEY="sk-bench", ANTHROPIC_BASE_URL=base_url,
                       AGENTCLI_EXECUTOR__KIND="ray", AGENTCLI_EXECUTOR__ADDRESS=address,
                       AGENTCLI_EXECUTOR__NUM_CPUS=str(cpus), AGENTCLI_TASK_TOOL__MAX_CONCURRENT=str(max(count, 1)),
                       AGENTCLI_EXECUTOR__SUBAGENTS_PER_WORKER=str(per_worker))
            started = time.monotonic()
            proc = subprocess.run(["/usr/bin/time", "-f", "RSS %M", sys.executable, "-m", "agentcli", "run",
                                   "--yes", "--output-format", "json", "--cwd", str(ws), "go"],
                                  capture_output=True, text=True, env=env, timeout=1800)
            wall = time.monotonic() - started
        if proc.returncode != 0:
            raise SystemExit(f"agentcli run failed ({isolation}):\n{proc.stderr[-3000:]}")
        tasks = json.loads(proc.stdout.strip().splitlines()[-1])["tasks"]
        merged = sum(1 for t in tasks if t["merge"] == "merged")
        failed = {t["error"] for t in tasks if t["status"] != "completed"}
        if failed:
            print(f"  ({isolation}: {len(tasks) - merged} not merged: {'; '.join(sorted(map(str, failed)))[:300]})")
        rss = int(next(line for line in proc.stderr.splitlines() if line.startswith("RSS ")).split()[1]) / 1024
    mains = sorted(r.finished_at or 0.0 for r in requests if MAIN in json.dumps(r.body.get("system")))
    dispatch = []
    for r in range(rounds):
        names = [f"# Task\\nWrite part{r * count + n} now" for n in range(count)]
        subs = [q.received_at for q in requests if any(n in json.dumps(q.body.get("system")) for n in names)]
        dispatch.append((min(subs) - mains[r]) * 1000 if subs else float("nan"))  # nan: no subagent ever asked
    return {"wall": wall, "rss_mib": rss, "dispatch_ms": dispatch, "merged": merged}


def _per_task(args: argparse.Namespace, per_worker: int) -> float:
    """CPUs per subagent such that all `--fanout` fit on the two nodes at once, in workers of `per_worker`."""
    workers_per_node = math.ceil(math.ceil(args.fanout / per_worker) / 2)
    return min(1.0, args.cpus_per_node / workers_per_node / per_worker)


def worker_cost(address: str) -> None:
    """What starting one worker process costs (three, one after another): Ray's worker with agentcli's worker
    class, then importing what building a subagent's loop needs (agentcli's agent, tools, the provider SDK)."""
    import resource

    import ray

    from agentcli.subagents.remote.host import RemoteWorker

    class Probe(RemoteWorker):
        def usage(self) -> tuple[float, int]:
            used = resource.getrusage(resource.RUSAGE_SELF)
            return used.ru_utime + used.ru_stime, used.ru_maxrss

        def imports(self) -> tuple[float, int]:
            import anthropic  # noqa: F401

            from agentcli.agent import AgentLoop  # noqa: F401
            from agentcli.subagents.agent_kit import AgentKit  # noqa: F401
            from agentcli.subagents.toolbox import Toolbox  # noqa: F401
            return self.usage()

    ray.init(address=address, log_to_driver=False)
    try:
        probe = ray.remote(Probe)
        print("one worker process (three in turn):")
        for _ in range(3):
            started = time.monotonic()
            actor = probe.options(num_cpus=1).remote()
            cpu, rss = ray.get(actor.usage.remote())
            up = time.monotonic() - started
            cpu2, rss2 = ray.get(actor.imports.remote())
            print(f"  up in {up:4.2f} s, {cpu:4.2f} CPU-s, {rss / 1024:4.0f} MiB; its imports "
                  f"{cpu2 - cpu:4.2f} CPU-s more, {rss2 / 1024:4.0f} MiB in all")
            ray.kill(actor)
    finally:
        ray.shutdown()


def dispatch(args: argparse.Namespace, address: str) -> None:
    figures: dict[str, list[dict[str, Any]]] = {"worktree": [], "remote": []}
    for _ in range(args.runs):
        for isolation in ("worktree", "remote"):
            figures[isolation].append(run_once(1, isolation, address, 1.0, rounds=2))
    print(f"dispatch of a Task, the session's first and its second (median of {args.runs}, interleaved):")
    for isolation, rows in figures.items():
        first, second = (statistics.median(r["dispatch_ms"][i] for r in rows) for i in (0, 1))
        wall = statistics.median(r["wall"] for r in rows)
        print(f"  {isolation:<9} first {first:8.0f} ms   second {second:8.0f} ms   run {wall:6.1f} s")
    for i, which in enumerate(("first", "second")):
        base = statistics.median(r["dispatch_ms"][i] for r in figures["worktree"])
        remote = statistics.median(r["dispatch_ms"][i] for r in figures["remote"])
        print(f"  remote - worktree, {which}: {remote - base:.0f} ms")


def fanout(args: argparse.Namespace, address: str) -> None:
    print(f"fan-out of {args.fanout} writers in one turn (one run each):")
    for isolation, per_worker in (("worktree", 1), ("remote", args.per_worker), ("remote", 1)):
        row = run_once(args.fanout, isolation, address, _per_task(args, per_worker), per_worker=per_worker)
        what = isolation if isolation == "worktree" else f"remote, {per_worker} per worker"
        print(f"  {what:<20} {row['wall']:6.1f} s  {args.fanout / row['wall']:5.2f} subagents/s  "
              f"parent peak RSS {row['rss_mib']:5.0f} MiB  merged {row['merged']}/{args.fanout}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fanout", type=int, default=50)
    parser.add_argument("--cpus-per-node", type=int, default=8)
    parser.add_argument("--per-worker", type=int, default=4, help="[executor] subagents_per_worker of the fan-out")
    parser.add_argument("--sections", default="cost,dispatch,fanout", help="which figures, comma-separated")
    args = parser.parse_args()
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(2):
        cluster.add_node(num_cpus=args.cpus_per_node)
    cluster.wait_for_nodes()
    try:
        address = cluster.address
        if "cost" in args.sections:
            worker_cost(address)
        if "dispatch" in args.sections:
            dispatch(args, address)
        if "fanout" in args.sections:
            fanout(args, address)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
