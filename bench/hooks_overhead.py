"""What hooks cost a tool turn, from one run (in process, scripted model, no network).

Run: python bench/hooks_overhead.py [--turns 30] [--rounds 5]

Three loops run the same N turns (each one Read of a small file), interleaved round by round:
  none     no hook engine;
  miss     an engine whose only PreToolUse hook matches Bash (the Read calls match none);
  hook     a PreToolUse hook (`true`) on every tool call: one bash process per call.
Per-turn medians over the rounds, and ratios against `none` measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.hooks.engine import HookEngine
from agentcli.hooks.settings import HookCommand, HookConfig
from agentcli.llm.models import ResolvedModel
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools


def _engine(workspace: Path, matcher: str | None) -> HookEngine | None:
    if matcher is None:
        return None
    config = HookConfig()
    config.add(HookCommand("PreToolUse", "true", matcher, 10, "bench"))
    return HookEngine(config, workspace, env={"PATH": os.environ["PATH"]})


async def _run(workspace: Path, turns: int, matcher: str | None) -> float:
    llm = ScriptedLLM()
    llm.add_steps(*[Step(match=Match(turn=i), reply=Reply(tool_calls=[
        ToolCall(name="Read", input={"file_path": "small.txt"})])) for i in range(turns - 1)])
    llm.add_steps(Step(match=Match(turn=turns - 1), reply=Reply(text="Done.")))
    model = ResolvedModel("main", "anthropic", "bench", None, "sk-bench", 1024)
    session = Session(system_prompt="bench", model=model, workspace=workspace)
    ctx = ToolContext(workspace=workspace, agent="main", session_id=session.id,
                      permissions=PermissionPolicy("auto"), file_locks=FileLocks())
    loop = AgentLoop(session, llm.provider("anthropic"), build_tools(), ctx, lambda e: None,
                     max_turns=turns + 1, hooks=_engine(workspace, matcher))
    start = time.perf_counter()
    outcome = await loop.run("read small.txt repeatedly")
    assert outcome.status == "completed", outcome
    return (time.perf_counter() - start) * 1000 / turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    kinds = {"none": None, "miss": "Bash", "hook": ""}
    per_turn: dict[str, list[float]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve()
        (workspace / "small.txt").write_text("hello\n")
        asyncio.run(_run(workspace, 3, ""))  # warm imports
        for _ in range(args.rounds):
            for kind, matcher in kinds.items():
                per_turn[kind].append(asyncio.run(_run(workspace, args.turns, matcher)))
    base = statistics.median(per_turn["none"])
    print(f"{args.turns} turns x {args.rounds} rounds, one Read per turn, scripted model (in process)")
    for kind in kinds:
        median = statistics.median(per_turn[kind])
        print(f"  {kind:5} {median:8.2f} ms/turn   ratio to none {median / base:6.2f}x   (+{median - base:.2f} ms)")


if __name__ == "__main__":
    main()
