"""A 200-turn session with large tool results: does it stay inside the window, and does its per-turn cost
stay flat as it grows? One run through the composition root (real SDK, runner, store, compactor).

Run: python bench/long_session.py [--turns 200] [--window 200000] [--file-kb 24] [--api anthropic|openai]

Against the fake server (its own process, zero model latency) the main agent Reads a large file every turn
until `--turns` turns are done (`[agent] max_turns`). From the server's clock, per turn: the gap between the
end of a response and the next request of the main agent (the client's own work: tool, events, store, the
compaction check, SDK request building), and the input tokens the server counted. Printed for turns 6-15 and
the last 10, with compaction on (`auto_compact = true`: the light model summarises, its requests are counted
apart) and, as the baseline in the same run, off (`compact_threshold` at its maximum and a window no request
reaches: the history grows without bound, as it would until a provider refused it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import sqlite3
import statistics
import tempfile
from pathlib import Path

from fake_server import server_process

from agentcli.config.load import load_config
from agentcli.conversation import Conversation
from agentcli.store.db import Store
from agentcli.testing.fake_llm import Match, RecordedRequest, Reply, Script, Step, ToolCall

MAIN = "You are agentcli"
SUMMARISER = "You compact the conversation"


def _script(files: int) -> Script:
    steps = [Step(match=Match(system_contains=SUMMARISER), reply=Reply(text="SUMMARY of the reading so far."),
                  times=None, optional=True)]
    steps += [
        Step(match=Match(system_contains=MAIN, last_user_contains=f"<<file {n}>>"),
             reply=Reply(text=f"Next file after {n}.", tool_calls=[
                 ToolCall(name="Read", input={"file_path": f"big{(n + 1) % files}.txt"})]),
             times=None, optional=True)
        for n in range(files)
    ]
    steps.append(Step(match=Match(system_contains=MAIN), reply=Reply(text="Starting.", tool_calls=[
        ToolCall(name="Read", input={"file_path": "big0.txt"})]), times=None, optional=True))
    return Script(steps=steps)


def _is_summary(request: RecordedRequest) -> bool:
    return SUMMARISER in json.dumps(request.body.get("system", request.body.get("messages", ""))[:1])


async def _session(api: str, workspace: Path, turns: int, window: int, compact: bool, files: int) -> dict[str, object]:
    with server_process(_script(files), workspace) as (base_url, requests):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENTCLI_"))}
        if api == "anthropic":
            env.update(ANTHROPIC_API_KEY="sk-bench", ANTHROPIC_BASE_URL=base_url)
        else:
            env.update(OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=base_url + "/v1",
                       AGENTCLI_MODELS__MAIN__PROVIDER="openai", AGENTCLI_MODELS__MAIN__MODEL="gpt-bench",
                       AGENTCLI_MODELS__LIGHT__PROVIDER="openai", AGENTCLI_MODELS__LIGHT__MODEL="gpt-bench-mini")
        overrides: dict[str, object] = {
            "llm.max_retries": 0, "agent.max_turns": turns, "permissions.mode": "auto",
            "models.main.context_window": window if compact else 100_000_000,
            "context.auto_compact": compact, "context.compact_threshold": 0.8 if compact else 0.95,
            "context.max_messages": 120 if compact else 100_000,
        }
        os.environ.clear()
        os.environ.update(env)  # the model resolves its key and URL from the process environment
        settings = load_config(workspace=workspace, env=env, overrides=overrides).settings
        store = Store.open(workspace / "bench.db")
        conversation = Conversation(settings, workspace, store=store)
        compactions: list[str] = []
        conversation.bus.subscribe(lambda e: compactions.append(e.mode) if e.kind == "compaction" else None)
        try:
            outcome = await conversation.send("Read the big files one after another.")
        finally:
            await conversation.aclose()
        assert outcome.status == "max_turns", outcome
        with contextlib.closing(sqlite3.connect(workspace / "bench.db")) as db:  # what the server counted
            rows = db.execute("SELECT model, input_tokens FROM usage WHERE session_id = ? ORDER BY id",
                              (conversation.session.id,)).fetchall()
        light = settings.models.light.model
        tokens = [count for model, count in rows if model != light]
    ordered = sorted(requests, key=lambda r: r.received_at)
    main = [r for r in ordered if not _is_summary(r)]
    gaps: list[float | None] = []  # per main turn: the client's own time before the next request
    for previous, request in itertools.pairwise(main):
        between = [r for r in ordered if previous.received_at < r.received_at < request.received_at]
        assert previous.finished_at is not None
        gaps.append(None if between else (request.received_at - previous.finished_at) * 1000)
    return {"gaps": gaps, "tokens": tokens, "summaries": len(ordered) - len(main),
            "compactions": compactions}


def _median(values: list[float | None]) -> float:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else float("nan")


def _per_k(gaps: list[float | None], tokens: list[int]) -> float:
    """Median client time per 1000 context tokens over a stretch of turns (ms)."""
    return _median([g / (t / 1000) for g, t in zip(gaps, tokens, strict=False) if g is not None and t])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--window", type=int, default=200_000)
    parser.add_argument("--file-kb", type=int, default=24)
    parser.add_argument("--api", choices=["anthropic", "openai"], default="anthropic")
    args = parser.parse_args()
    files = 5
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp).resolve()
        line = "a line of a large source file, long enough to matter\n"
        for n in range(files):
            (workspace / f"big{n}.txt").write_text(f"<<file {n}>>\n" + line * (args.file_kb * 1024 // len(line)))
        runs = {}
        for compact in (True, False):
            runs[compact] = asyncio.run(_session(args.api, workspace, args.turns, args.window, compact, files))
            (workspace / "bench.db").unlink()
    print(f"{args.api}, {args.turns} turns, one {args.file_kb} KB Read per turn, window {args.window // 1000}k, "
          "zero model latency")
    for compact, run in runs.items():
        gaps, tokens = run["gaps"], run["tokens"]
        assert isinstance(gaps, list) and isinstance(tokens, list)
        half = len(gaps) // 2
        early, middle, late = _median(gaps[5:15]), _median(gaps[half - 10 : half]), _median(gaps[-10:])
        name = "compaction on " if compact else "compaction off"
        print(f"  {name}: client time per turn (median of 10), turns 6-15 {early:6.2f} ms, "
              f"{half - 9}-{half} {middle:6.2f} ms, last 10 {late:6.2f} ms; "
              f"last/6-15 {late / early:5.2f}x, last/{half - 9}-{half} {late / middle:5.2f}x")
        print(f"                  input tokens counted: turn 10 {tokens[9]:>9,}, turn {half} {tokens[half - 1]:>9,}, "
              f"last {tokens[-1]:>9,}, peak {max(tokens):>9,} = {100 * max(tokens) / args.window:5.1f}% of the window")
        per_k = [_per_k(gaps[a:b], tokens[a:b]) for a, b in ((5, 15), (half - 10, half), (len(gaps) - 10, len(gaps)))]
        print("                  client time per 1k tokens of context: "
              + ", ".join(f"{v * 1000:6.1f} us" for v in per_k) + " (the same three stretches)")
        if compact:
            modes = run["compactions"]
            assert isinstance(modes, list)
            print(f"                  compactions: {modes.count('prune')} prune, {modes.count('summary')} summary "
                  f"({run['summaries']} light-model requests; their turns are left out of the medians)")


if __name__ == "__main__":
    main()
