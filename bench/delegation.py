"""Delegation figures from one run against the fake server (real SDK, real runner, real store
recording every event as a Conversation does).

Run: python bench/delegation.py [--calls 30] [--latency-ms 500] [--sizes 1,5,16,50]

1. Overhead per Task call at zero model latency, from the server's clock:
   dispatch = end of the parent's response holding the Task call -> the subagent's first request;
   return   = end of the subagent's last response -> the parent's next request.
   Beside them, the gap of a plain tool turn (a Read) measured in the same run.
2. Parallel efficiency: N subagents started by one parent turn, each one model call of
   --latency-ms. Ideal wall = one model call; efficiency = ideal / measured wall between the
   parent's Task dispatch and its next request.
3. Message delivery: the parent sends a running background subagent a message (SendMessage) while
   the subagent waits for its model; delivery = message sent -> the subagent's next request holding
   it, minus the model's latency (the wait for the reply it was in); beside it, the same turn's gap
   without a message, measured in the same run.
4. Cache-hit cost: one explore task repeated once per parent turn (--calls times) at zero model latency;
   every repeat after the first is answered from the first's result (`subagents/result_cache/cache.py`). A hit's
   wall time = end of the parent's response holding the Task call -> the parent's next request (server
   clock), beside the plain Read turn's gap; the runner's own time of a hit (lookup, re-checking what the
   first run looked at, serving) is the hit's `time_ms`. Twice: a first run that read one file, and one
   that grepped a tree of --tree-files files (a hit re-walks that tree). The subagent requests are counted.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fake_server import server_process

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.config.load import load_config
from agentcli.conversation import main_agent_tools
from agentcli.events import EventBus
from agentcli.llm.base import RetryPolicy
from agentcli.llm.models import ProviderPool, resolve_model
from agentcli.llm.prices import cost_usd
from agentcli.store.db import Store
from agentcli.store.recorder import StoreRecorder
from agentcli.store.records import TaskRecord
from agentcli.subagents.definitions.registry import AgentRegistry
from agentcli.subagents.runner import SubagentRunner
from agentcli.subagents.task_tool import ParentLink
from agentcli.testing.fake_llm import Match, RecordedRequest, Reply, Script, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy

MAIN = "MAIN AGENT UNDER BENCH"


def _task(i: int) -> ToolCall:
    return ToolCall(name="Task", input={"description": f"Bench task {i:04d}", "prompt": f"answer bench question {i}",
                                        "subagent_type": "explore"})


CPU: dict[str, float] = {}  # of the last _run: "loop" (the event loop's thread) and "process" seconds
RECORDS: list[TaskRecord] = []  # the task records of the last _run


async def _run(workspace: Path, script: Script, max_concurrent: int) -> list[RecordedRequest]:
    with server_process(script, workspace) as (base_url, requests):
        os.environ["ANTHROPIC_API_KEY"] = "sk-bench"
        os.environ["ANTHROPIC_BASE_URL"] = base_url
        settings = load_config(
            workspace=workspace,
            env=dict(os.environ),
            overrides={"task_tool.max_concurrent": max_concurrent, "llm.max_retries": 0},
        ).settings
        pool = ProviderPool(RetryPolicy(max_retries=0))
        store = Store.open(workspace / "bench.db")
        model = resolve_model("main", settings)
        session = Session(system_prompt=MAIN, model=model, workspace=workspace)
        permissions = PermissionPolicy("auto")
        runner = SubagentRunner(settings=settings, registry=AgentRegistry.load(workspace), pool=pool,
                                workspace=workspace, permissions=permissions, store=store, price=cost_usd)
        bus = EventBus()  # as a Conversation has it: every event is recorded in the store
        bus.subscribe(StoreRecorder(store))
        runner.cache.attach(bus)  # reused results see every agent's tool calls, as in a Conversation
        ctx = ToolContext(workspace=workspace, agent="main", session_id=session.id, permissions=permissions,
                          file_locks=FileLocks())
        loop = AgentLoop(session, pool.get(model), main_agent_tools(runner, ParentLink(session, bus)), ctx,
                         bus, max_turns=10_000, price=cost_usd, notices=runner.notices_for(session.id))
        thread0, process0 = time.thread_time(), time.process_time()
        outcome = await loop.run("bench")
        CPU.update(loop=time.thread_time() - thread0, process=time.process_time() - process0)
        assert outcome.status == "completed", outcome
        RECORDS[:] = runner.records()
        await runner.aclose()
        await pool.aclose()
        await store.flush()
        store.close()
    return requests


def _is_main(request: Any) -> bool:
    return MAIN in str(request.body.get("system", ""))


async def overhead(workspace: Path, calls: int) -> dict[str, float]:
    """Sequential Task calls (one per parent turn) and plain Read turns, zero latency."""
    steps = []
    for i in range(calls):
        steps.append(Step(match=Match(system_contains=MAIN, turn=2 * i), reply=Reply(tool_calls=[_task(i)])))
        steps.append(Step(match=Match(system_contains=f"# Task\nBench task {i:04d}"), reply=Reply(text=f"answer {i}")))
        steps.append(Step(match=Match(system_contains=MAIN, turn=2 * i + 1),
                          reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "small.txt"})])))
    steps.append(Step(match=Match(system_contains=MAIN, turn=2 * calls), reply=Reply(text="done")))
    reqs = sorted(await _run(workspace, Script(steps=steps), max_concurrent=5), key=lambda r: r.received_at)
    dispatch, back, plain = [], [], []
    for a, b in itertools.pairwise(reqs):
        assert a.finished_at is not None
        gap = (b.received_at - a.finished_at) * 1000
        if _is_main(a) and not _is_main(b):
            dispatch.append(gap)
        elif not _is_main(a) and _is_main(b):
            back.append(gap)
        elif _is_main(a) and _is_main(b):
            plain.append(gap)
    return {
        "dispatch": statistics.median(dispatch),
        "return": statistics.median(back),
        "plain": statistics.median(plain),
    }


async def efficiency(workspace: Path, n: int, latency_ms: int) -> tuple[float, float, dict[str, float]]:
    """One parent turn starts n subagents of one model call each; (measured wall s, efficiency, figures).

    Figures (ms): `first`/`last` = parent response end -> first / last subagent request (the dispatch
    spread: every request before the last one holds it back); `back` = last subagent response end ->
    parent's next request; `loop_cpu`/`process_cpu` = CPU of the event loop's thread / the whole process
    over the run."""
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task(i) for i in range(n)]))]
    steps += [Step(match=Match(system_contains=f"# Task\nBench task {i:04d}"), reply=Reply(text=f"answer {i}"),
                   latency_ms=latency_ms) for i in range(n)]
    steps.append(Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="done")))
    requests = await _run(workspace, Script(steps=steps), max_concurrent=max(n, 1))
    mains = sorted((r for r in requests if _is_main(r)), key=lambda r: r.received_at)
    assert mains[0].finished_at is not None
    wall = mains[1].received_at - mains[0].finished_at
    subs = [r for r in requests if not _is_main(r)]
    end = mains[0].finished_at
    figures = {
        "first": (min(r.received_at for r in subs) - end) * 1000,
        "last": (max(r.received_at for r in subs) - end) * 1000,
        "back": (mains[1].received_at - max(r.finished_at or 0 for r in subs)) * 1000,
        "loop_cpu": CPU["loop"] * 1000,
        "process_cpu": CPU["process"] * 1000,
    }
    return wall, (latency_ms / 1000) / wall, figures


async def cache_hit(workspace: Path, calls: int, look: ToolCall) -> dict[str, float]:
    """One explore task (its run does `look`, then answers) repeated once per parent turn; medians (ms) of the
    hits' gaps and own times, the plain Read gap of the same run, and the subagent requests."""
    task = ToolCall(name="Task", input={"description": "Bench cached task", "prompt": "what is in the workspace?",
                                        "subagent_type": "explore"})
    steps = [Step(match=Match(system_contains="# Task\nBench cached task", turn=0), reply=Reply(tool_calls=[look])),
             Step(match=Match(system_contains="# Task\nBench cached task", turn=1), reply=Reply(text="an answer"))]
    for i in range(calls):
        steps.append(Step(match=Match(system_contains=MAIN, turn=2 * i), reply=Reply(tool_calls=[task])))
        steps.append(Step(match=Match(system_contains=MAIN, turn=2 * i + 1),
                          reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "small.txt"})])))
    steps.append(Step(match=Match(system_contains=MAIN, turn=2 * calls), reply=Reply(text="done")))
    reqs = sorted(await _run(workspace, Script(steps=steps), max_concurrent=5), key=lambda r: r.received_at)
    mains = [r for r in reqs if _is_main(r)]
    gaps = [(b.received_at - (a.finished_at or 0)) * 1000 for a, b in itertools.pairwise(mains)]
    hits = [r for r in RECORDS if r.cached_from]
    assert len(hits) == calls - 1, [(r.status, r.cached_from) for r in RECORDS]
    return {
        "hit": statistics.median(gaps[2::2]),  # turn 0's gap is the first (real) run; even gaps follow Task calls
        "plain": statistics.median(gaps[1::2]),
        "own": statistics.median(r.time_ms or 0.0 for r in hits),
        "sub_requests": float(len(reqs) - len(mains)),
    }


async def delivery(workspace: Path, latency_ms: int, message: bool) -> dict[str, float]:
    """One background subagent, one model call of `latency_ms` then an LS and a second call; with `message`, the
    parent sends it a message while the first call runs. Figures (ms, server clock): `sent` -> `next` request."""
    survey = "# Task\nBench steer"
    steer = "Bench message: look at src first"
    start = ToolCall(name="Task", input={"description": "Bench steer", "prompt": "survey",
                                         "subagent_type": "explore", "run_in_background": True})
    wait = ToolCall(name="TaskOutput", input={"task_id": "explore#1", "wait_seconds": 60})
    first_main = [ToolCall(name="SendMessage", input={"to": "explore#1", "message": steer})] if message else [wait]
    steps = [
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[start])),
        Step(match=Match(system_contains=survey, turn=0), reply=Reply(tool_calls=[ToolCall(name="LS", input={})]),
             latency_ms=latency_ms),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(tool_calls=first_main)),
        Step(match=Match(system_contains=survey, turn=1), reply=Reply(text="surveyed")),
        Step(match=Match(system_contains=MAIN, last_user_contains="surveyed"), reply=Reply(text="done")),
    ]
    if message:
        steps.insert(3, Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(tool_calls=[wait])))
    requests = await _run(workspace, Script(steps=steps), max_concurrent=5)
    mains = sorted((r for r in requests if _is_main(r)), key=lambda r: r.received_at)
    subs = sorted((r for r in requests if not _is_main(r)), key=lambda r: r.received_at)
    sent = mains[1].finished_at or 0.0  # the reply holding SendMessage (or TaskOutput) is complete
    first_done = subs[0].finished_at or 0.0
    if message:
        assert steer in str(subs[1].body), "the message did not reach the subagent's next request"
        assert first_done > sent, "the message was not sent while the subagent waited for its model"
    return {"next_after_reply": (subs[1].received_at - first_done) * 1000,
            "model_wait": (first_done - sent) * 1000, "sent_to_next": (subs[1].received_at - sent) * 1000}


def _category(where: str, name: str) -> str:
    """Which part of the client a profiled function belongs to."""
    for marker, label in [
        ("site-packages/anthropic", "SDK: anthropic"), ("httpx", "SDK: httpx"), ("aiohttp", "SDK: aiohttp"),
        ("yarl", "SDK: aiohttp"), ("multidict", "SDK: aiohttp"), ("pydantic", "pydantic (ours and SDK)"),
        ("/agentcli/store/", "ours: store"), ("/agentcli/agent/", "ours: loop"),
        ("/agentcli/subagents/", "ours: runner/supervisor"), ("/agentcli/llm/", "ours: llm adapter"),
        ("/agentcli/events", "ours: events"), ("/agentcli/", "ours: other"), ("asyncio", "asyncio"),
    ]:  # fmt: skip
        if marker in where:
            return label
    return "" if where == "~" else "stdlib"


def _split(workspace: Path, n: int, latency_ms: int) -> tuple[dict[str, float], dict[str, int]]:
    """Seconds of the event loop's thread by part over one run (C calls count for their caller), and the
    Python function calls by part (a count that does not depend on the machine's load)."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(efficiency(workspace, n, latency_ms))
    profiler.disable()
    stats: dict[Any, Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    split: dict[str, float] = {}
    calls: dict[str, int] = {}
    for (where, _, name), (_, ncalls, own, _, callers) in stats.items():
        label = _category(where, name)
        if label:
            split[label] = split.get(label, 0.0) + own
            calls[label] = calls.get(label, 0) + ncalls
        elif not any(w in name for w in ("poll", "readline", "acquire", "sleep")):  # waiting is not working
            total = sum(c[2] for c in callers.values()) or 1.0
            for (cwhere, _, cname), c in callers.items():
                caller = _category(cwhere, cname) or "C builtins"
                split[caller] = split.get(caller, 0.0) + own * c[2] / total
    return split, calls


def profile(workspace: Path, n: int, latency_ms: int) -> None:
    """The split of one subagent's cost: a run of n subagents minus a run of one, over n - 1."""
    (many, many_calls), (one, one_calls) = _split(workspace, n, latency_ms), _split(workspace, 1, latency_ms)
    per = {label: (many.get(label, 0.0) - one.get(label, 0.0)) / (n - 1) for label in many}
    per_calls = {label: (many_calls.get(label, 0) - one_calls.get(label, 0)) / (n - 1) for label in many_calls}
    total, total_calls = sum(per.values()), sum(per_calls.values())
    print(f"Profile (cProfile, event-loop thread): one more subagent costs {total * 1000:.2f} ms and"
          f" {total_calls:.0f} Python calls (runs of {n} and 1 subagents, {latency_ms} ms per call; cProfile"
          " inflates the time)")
    for label, own in sorted(per.items(), key=lambda kv: -kv[1]):
        print(f"  {label:28s} {own * 1000:6.2f} ms  {100 * own / total:5.1f} %  {per_calls.get(label, 0):7.0f} calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--latency-ms", type=int, default=500)
    parser.add_argument("--sizes", default="1,5,16,50")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, help="only profile one fan-out of this many subagents")
    parser.add_argument("--tree-files", type=int, default=2000, help="files of the tree the cache-hit run greps")
    parser.add_argument("--only-cache", action="store_true", help="only the cache-hit figures")
    parser.add_argument("--only-efficiency", action="store_true", help="only the parallel-efficiency figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve()
        (workspace / "small.txt").write_text("hello\n")
        os.environ.setdefault("XDG_CONFIG_HOME", str(workspace / "xdg"))
        asyncio.run(overhead(workspace, 3))  # warm imports and caches
        if args.profile:
            profile(workspace, args.profile, args.latency_ms)
            return
        if args.only_efficiency:
            efficiency_figures(workspace, args.latency_ms, args.sizes, args.repeat)
            return
        for i in range(args.tree_files):
            folder = workspace / "tree" / f"d{i // 100:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"f{i:05d}.py").write_text(f"value_{i} = {i}\n")
        time.sleep(2.1)  # older than any timestamp granularity: a run that reads them can be reused
        print(f"Cache-hit cost ({args.calls} identical explore tasks, one per parent turn, zero model latency;"
              " medians)")
        for label, look in (
            ("first run read one file", ToolCall(name="Read", input={"file_path": "small.txt"})),
            (f"first run grepped a {args.tree_files}-file tree",
             ToolCall(name="Grep", input={"pattern": "value_7", "path": "tree"})),
        ):
            hit = asyncio.run(cache_hit(workspace, args.calls, look))
            print(f"  {label}: hit wall (Task call -> parent next request) {hit['hit']:6.2f} ms, runner's own"
                  f" {hit['own']:6.2f} ms; plain Read turn {hit['plain']:5.2f} ms; subagent requests"
                  f" {hit['sub_requests']:.0f} (the first run's 2 only)")
        if args.only_cache:
            return
        figures = asyncio.run(overhead(workspace, args.calls))
        print(f"Task call overhead at zero model latency ({args.calls} sequential calls, medians)")
        print(f"  parent response end -> subagent first request   {figures['dispatch']:7.2f} ms")
        print(f"  subagent last response end -> parent next request {figures['return']:5.2f} ms")
        print(f"  plain tool turn (Read) gap, same run               {figures['plain']:5.2f} ms")
        extra = figures["dispatch"] + figures["return"] - figures["plain"]
        print(f"  runtime overhead per Task call (dispatch + return - plain gap) {extra:6.2f} ms")
        print(f"Message delivery to a running subagent ({args.repeat} runs each, medians; "
              f"model call {args.latency_ms} ms)")
        with_msg = [asyncio.run(delivery(workspace, args.latency_ms, True)) for _ in range(args.repeat)]
        without = [asyncio.run(delivery(workspace, args.latency_ms, False)) for _ in range(args.repeat)]
        sent_next = statistics.median(r["sent_to_next"] for r in with_msg)
        wait = statistics.median(r["model_wait"] for r in with_msg)
        gap_msg = statistics.median(r["next_after_reply"] for r in with_msg)
        gap_plain = statistics.median(r["next_after_reply"] for r in without)
        print(f"  message sent -> in the subagent's next request      {sent_next:7.2f} ms")
        print(f"    of which the model's reply it was waiting for   {wait:7.2f} ms")
        print(f"  delivery latency (the above minus the model wait)  {gap_msg:7.2f} ms")
        print(f"  the same turn boundary without a message           {gap_plain:7.2f} ms"
              f"  (ratio {gap_msg / gap_plain if gap_plain else float('nan'):.2f})")
        efficiency_figures(workspace, args.latency_ms, args.sizes, args.repeat)


def efficiency_figures(workspace: Path, latency_ms: int, sizes: str, repeat: int) -> None:
    """Section 2: parallel efficiency per fan-out size, with the event loop's CPU per extra subagent."""
    print(f"Parallel efficiency, {latency_ms} ms per subagent model call (ideal wall {latency_ms} ms),"
          f" medians of {repeat}")
    print("  (dispatch first/last = parent response end -> first/last subagent request; back = last subagent"
          " response end -> parent request)")
    _, _, one = asyncio.run(efficiency(workspace, 1, latency_ms))
    for n in (int(s) for s in sizes.split(",")):
        runs = []
        for _ in range(repeat):  # interleaved with a one-subagent run: the per-subagent CPU is the difference
            runs.append(asyncio.run(efficiency(workspace, n, latency_ms)))
            _, _, one = asyncio.run(efficiency(workspace, 1, latency_ms))
            runs[-1][2]["loop_cpu_1"] = one["loop_cpu"]
        wall = statistics.median(r[0] for r in runs)
        eff = statistics.median(r[1] for r in runs)
        fig = {k: statistics.median(r[2][k] for r in runs) for k in runs[0][2]}
        per = (fig["loop_cpu"] - fig["loop_cpu_1"]) / max(n - 1, 1)
        print(f"  N={n:3d}: wall {wall * 1000:7.1f} ms  efficiency {eff:5.2f}  dispatch first {fig['first']:5.1f}"
              f" last {fig['last']:6.1f} ms  back {fig['back']:5.1f} ms")
        print(f"         event-loop CPU per extra subagent {per:5.2f} ms;  run CPU: loop thread {fig['loop_cpu']:6.1f}"
              f" ms, whole process {fig['process_cpu']:6.1f} ms")


if __name__ == "__main__":
    main()
