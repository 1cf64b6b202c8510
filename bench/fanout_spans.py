"""Wall-clock spans of the synchronous steps of a fan-out (perf_counter, no profiler's inflation).

Run: python bench/fanout_spans.py [--fanout 16] [--runs 3] [--latency-ms 500]

bench/delegation.py's efficiency run (fake server in its own process, a real runner, store and event recorder)
with each step below wrapped to add up its own wall time, per subagent (an awaited step's includes its waits).
The steps run on the event loop's thread one after another, so each one's milliseconds hold back the subagents
started after it (dispatch) or the parent's next request (return). A step that calls another is counted whole,
so nested steps overlap.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import delegation

from agentcli.agent import loop as agent_loop
from agentcli.agent import spending
from agentcli.llm import anthropic as anthropic_adapter
from agentcli.llm import prices
from agentcli.store import db
from agentcli.subagents import agent_kit, plan, results, runner, supervisor
from agentcli.subagents.result_cache import cache

SPENT: collections.Counter[str] = collections.Counter()
CALLS: collections.Counter[str] = collections.Counter()

# (owner, attribute, label, path): the synchronous steps between a Task call and a subagent's first request,
# and between its last answer and the parent's next request
STEPS: list[tuple[Any, str, str, str]] = [
    (plan.Planner, "plan", "plan the task (type, model, tools, system prompt)", "dispatch"),
    (runner, "new_handle", "handle: child session, record, supervisor", "dispatch"),
    (cache, "task_key", "result-cache key (fingerprint of the call)", "dispatch"),
    (runner.SubagentRunner, "_save", "queue a record write", "both"),
    (runner.SubagentRunner, "_emit_parent", "events to the parent (UI, store recorder)", "both"),
    (runner.SubagentRunner, "_child_loop", "the child's loop: tools, context, compactor", "dispatch"),
    (agent_kit.AgentKit, "tool_context", "  of which its ToolContext", "dispatch"),
    (agent_loop.AgentLoop, "__init__", "  of which AgentLoop() (tool specs)", "dispatch"),
    (agent_loop, "session_request", "build the request (messages, tools)", "both"),
    (anthropic_adapter, "request_params", "provider params of the request", "both"),
    (supervisor.Supervisor, "relay", "relay a child event to the parent", "both"),
    (spending.Spending, "response", "price and ledger of a response", "return"),
    (prices, "_calc", "  of which its price (genai-prices)", "return"),
    (spending.Spending, "_event", "  of which its UsageEvent", "return"),
    (runner, "close_record", "close the record", "return"),
    (cache.ResultCache, "finished", "result cache: a task finished", "return"),
    (results, "parent_result", "format the parent's result", "return"),
    (runner.SubagentRunner, "_store_record", "store the final record, awaited (wall, waits included)", "return"),
    (runner.SubagentRunner, "_end_commands", "end its background commands (wall)", "return"),
    (db.Store, "record", "store: queue a write", "both"),
]


def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    if asyncio.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def waited(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                SPENT[label] += time.perf_counter() - start
                CALLS[label] += 1
        return waited

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[label] += time.perf_counter() - start
            CALLS[label] += 1
    return wrapper


def _patch() -> list[tuple[str, str]]:
    labels = []
    for owner, name, label, path in STEPS:
        if not hasattr(owner, name):
            continue
        setattr(owner, name, _timed(label, getattr(owner, name)))
        labels.append((label, path))
    return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fanout", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency-ms", type=int, default=500)
    args = parser.parse_args()
    labels = _patch()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve()
        (workspace / "small.txt").write_text("hello\n")
        os.environ.setdefault("XDG_CONFIG_HOME", str(workspace / "xdg"))
        asyncio.run(delegation.overhead(workspace, 3))  # warm imports and caches
        SPENT.clear()
        CALLS.clear()
        figures = [asyncio.run(delegation.efficiency(workspace, args.fanout, args.latency_ms))
                   for _ in range(args.runs)]
    per = args.runs * args.fanout
    print(f"Fan-out {args.fanout}, {args.latency_ms} ms per answer, {args.runs} runs (in-process bench); efficiency"
          f" {statistics.median(f[1] for f in figures):.3f}, dispatch last"
          f" {statistics.median(f[2]['last'] for f in figures):.1f} ms, back"
          f" {statistics.median(f[2]['back'] for f in figures):.1f} ms")
    print(f"  {'step':52s} {'path':>8s} {'ms/subagent':>12s} {'calls/subagent':>15s}")
    for label, path in labels:
        if CALLS[label]:
            print(f"  {label:52s} {path:>8s} {1000 * SPENT[label] / per:12.3f} {CALLS[label] / per:15.1f}")


if __name__ == "__main__":
    main()
