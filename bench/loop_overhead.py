"""The agent loop's own overhead per turn, beside the raw SDK round trip, from one run.

Run: python bench/loop_overhead.py [--turns 40] [--api anthropic|openai]

Against the fake server (its own process) with zero latency, one AgentLoop run of N turns (each turn one Read of a
small file) is timed from the server's side: the gap between the end of response i and the
arrival of request i+1. The same gap is measured for a bare SDK script sending N streamed
requests back to back with the same growing history. Loop overhead per turn = loop gap − bare
gap (the SDK's own parse/serialize cost is in both).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from fake_server import gaps_ms, server_process

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.llm.base import (
    Message,
    ModelRequest,
    ResponseDone,
    RetryPolicy,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.testing.fake_llm import Match, Reply, Script, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools


def _script(turns: int) -> Script:
    steps = [
        Step(match=Match(turn=i), reply=Reply(text="Reading it.", tool_calls=[
            ToolCall(name="Read", input={"file_path": "small.txt"})]))
        for i in range(turns - 1)
    ]
    steps.append(Step(match=Match(turn=turns - 1), reply=Reply(text="Done.")))
    return Script(steps=steps)


def _model(api: str, base_url: str) -> ResolvedModel:
    if api == "anthropic":
        return ResolvedModel("main", "anthropic", "bench", base_url, "sk-bench", 1024)
    return ResolvedModel("main", "openai", "bench", base_url + "/v1", "sk-bench", 1024)


async def _loop_run(api: str, turns: int, workspace: Path) -> tuple[list[float], float]:
    with server_process(_script(turns), workspace) as (base_url, requests):
        pool = ProviderPool(RetryPolicy(max_retries=0))
        model = _model(api, base_url)
        session = Session(system_prompt="bench", model=model, workspace=workspace)
        ctx = ToolContext(workspace=workspace, agent="main", session_id=session.id,
                          permissions=PermissionPolicy("auto"), file_locks=FileLocks())
        loop = AgentLoop(session, pool.get(model), build_tools(), ctx, lambda e: None, max_turns=turns + 1)
        start = time.perf_counter()
        outcome = await loop.run("read small.txt repeatedly")
        wall = time.perf_counter() - start
        await pool.aclose()
        assert outcome.status == "completed", outcome
    return gaps_ms(requests), wall


async def _bare_run(api: str, turns: int, workspace: Path) -> tuple[list[float], float]:
    """The same conversation driven by a bare loop over the SDK adapter: no tools, no events."""
    with server_process(_script(turns), workspace) as (base_url, requests):
        pool = ProviderPool(RetryPolicy(max_retries=0))
        model = _model(api, base_url)
        provider = pool.get(model)
        messages: list[Message] = [Message.user("read small.txt repeatedly")]
        specs = [ToolSpec(t.name, t.description(), t.input_schema()) for t in build_tools()]
        start = time.perf_counter()
        for _ in range(turns):
            request = ModelRequest(model=model.model, system="bench", messages=tuple(messages), tools=specs)
            response = None
            async for event in provider.stream(request):
                if isinstance(event, ResponseDone):
                    response = event.response
            assert response is not None
            messages.append(response.message())
            calls: list[ToolUseBlock] = response.tool_uses()
            if not calls:
                break
            messages.append(Message(role="user", content=[
                ToolResultBlock(tool_use_id=c.id, content="     1\thello\n") for c in calls]))
        wall = time.perf_counter() - start
        await pool.aclose()
    return gaps_ms(requests), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--api", choices=["anthropic", "openai"], default="anthropic")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve()
        (workspace / "small.txt").write_text("hello\n")
        asyncio.run(_bare_run(args.api, 3, workspace))  # warm imports and caches
        bare_gaps, bare_wall = asyncio.run(_bare_run(args.api, args.turns, workspace))
        loop_gaps, loop_wall = asyncio.run(_loop_run(args.api, args.turns, workspace))
    bare, loop = statistics.median(bare_gaps), statistics.median(loop_gaps)
    print(f"{args.api}, {args.turns} turns, zero model latency")
    print(f"  bare SDK: response end -> next request, median  {bare:7.2f} ms   (run wall {bare_wall * 1000:.0f} ms)")
    print(f"  AgentLoop: tool turn gap, median                {loop:7.2f} ms   (run wall {loop_wall * 1000:.0f} ms)")
    print(f"  loop overhead per turn (median gap difference)  {loop - bare:7.2f} ms")
    print(f"  ratio loop/bare gap                             {loop / bare:7.2f}x")


if __name__ == "__main__":
    main()
