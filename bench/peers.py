"""agentcli beside the bare SDK floor and any peer CLI installed here, against one scripted server.

Run: python bench/peers.py [--runs 5] [--latency-ms 300] [--fanout 16] [--no-netns]

Every client talks to the project's fake server (`python -m agentcli.testing.fake_llm`, its own process)
with --latency-ms before each answer. The whole bench re-runs itself inside a network namespace that has
only loopback (`unshare -rn`, then `ip link set lo up`), so nothing can reach or be reached from the
network; where unshare is not permitted it says so and runs in the host's namespace.

Clients: `floor` (a bare script with the anthropic SDK: the same requests, no agent around them),
`agentcli` (this checkout's `python -m agentcli run`), and `claude`, `kimi`, `opencode` when on PATH
(skipped, with a line saying so, when not; their command lines follow their documented print modes and
are untested here unless they ran). Each round runs every client once per scenario, in an order that
rotates each round; medians over --runs rounds (one warm-up round first).

Scenarios and figures (from the server's clock, CLOCK_MONOTONIC, and the child's rusage):
- turns: prompt -> a Read tool call -> the answer (two model calls).
  start->1st request (spawn -> first model request), per-turn gap (end of the first answer -> the next
  request), last answer->exit, wall (spawn -> exit), CPU (user+system of the process), peak RSS;
- task: one Task call; hop latencies: dispatch (end of the parent's answer -> the subagent's request) and
  return (end of the subagent's answer -> the parent's next request);
- fanout: --fanout Task calls in one answer, each subagent one model call; efficiency = one model call's
  latency / (end of the parent's answer -> its next request).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fake_server import server_process

from agentcli.testing.fake_llm import Match, RecordedRequest, Reply, Script, Step, ToolCall

IN_NETNS = "AGENTCLI_PEERS_NETNS"
MAIN_MARK = "PEERS-BENCH-MAIN"
FILE_TEXT = "the answer is 42\n"

FLOOR = r'''
import anthropic, asyncio, os, sys
SCENARIO, N = sys.argv[1], int(sys.argv[2])
READ = {"name": "Read", "description": "Read a file", "input_schema": {"type": "object",
        "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}}
async def ask(client, messages, tools):
    stream = await client.messages.create(model="claude-sonnet-4-5", max_tokens=1000, stream=True,
                                          messages=messages, tools=tools)
    blocks = []
    async for event in stream:
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            blocks.append(event.content_block)
    return blocks
async def main():
    client = anthropic.AsyncAnthropic(api_key=os.environ["ANTHROPIC_API_KEY"],
                                      base_url=os.environ["ANTHROPIC_BASE_URL"], max_retries=0)
    prompt = os.environ["BENCH_PROMPT"]
    messages = [{"role": "user", "content": prompt}]
    if SCENARIO == "fanout":
        await ask(client, messages, [READ])
        await asyncio.gather(*(ask(client, [{"role": "user", "content": f"sub task {i:04d}"}], [])
                               for i in range(N)))
        await ask(client, messages + [{"role": "assistant", "content": "done"}, {"role": "user", "content": "go"}],
                  [READ])
        return
    calls = await ask(client, messages, [READ])
    text = open(calls[0].input["file_path"] if calls and calls[0].input else "notes.txt").read()
    messages += [{"role": "assistant", "content": [{"type": "tool_use", "id": calls[0].id, "name": "Read",
                                                     "input": {"file_path": "notes.txt"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls[0].id,
                                                "content": text}]}]
    await ask(client, messages, [READ])
asyncio.run(main())
'''


@dataclass(frozen=True, slots=True)
class Client:
    """How to run one CLI non-interactively, and the names its tools take."""

    name: str
    command: Callable[[str, int], list[str]]  # (prompt, fan-out) -> argv
    read: Callable[[str], ToolCall]
    task: Callable[[int], ToolCall] | None  # None: no delegation tool this bench knows how to call
    extra_env: dict[str, str] = field(default_factory=dict)


def _read_file_path(path: str) -> ToolCall:
    return ToolCall(name="Read", input={"file_path": path})


def _agentcli_task(i: int) -> ToolCall:
    return ToolCall(name="Task", input={"description": f"Bench task {i:04d}", "prompt": f"sub task {i:04d}",
                                        "subagent_type": "explore"})


def _claude_task(i: int) -> ToolCall:
    return ToolCall(name="Task", input={"description": f"Bench task {i:04d}", "prompt": f"sub task {i:04d}",
                                        "subagent_type": "general-purpose"})


def clients(fanout: int) -> tuple[list[Client], list[str]]:
    """The clients to run, and a line for each peer that is skipped."""
    py = sys.executable
    found = [
        Client("floor", lambda p, n: [py, "-c", FLOOR, "turns", str(n)], _read_file_path, None),
        Client("agentcli", lambda p, n: [py, "-m", "agentcli", "run", "--yes", "--output-format", "json", p],
               _read_file_path, _agentcli_task,
               {"AGENTCLI_TASK_TOOL__MAX_CONCURRENT": str(max(fanout, 1)), "AGENTCLI_LLM__MAX_RETRIES": "0"}),
    ]
    skipped = []
    peers = [
        Client("claude", lambda p, n: ["claude", "-p", p, "--output-format", "json",
                                       "--dangerously-skip-permissions"], _read_file_path, _claude_task),
        Client("kimi", lambda p, n: ["kimi", "--print", "-p", p], _read_file_path, None),
        Client("opencode", lambda p, n: ["opencode", "run", p], lambda path: ToolCall(
            name="read", input={"filePath": path}), None),
    ]
    for peer in peers:
        if shutil.which(peer.name):
            found.append(peer)
        else:
            skipped.append(f"{peer.name}: not on PATH, skipped")
    return found, skipped


def script_for(scenario: str, client: Client, latency_ms: int, fanout: int) -> Script | None:
    """The server's script for one client and scenario (None: the client cannot run it)."""
    tail = [Step(match=Match(), reply=Reply(text="ok"), times=None, optional=True, name="other")]  # side requests
    if scenario == "turns":
        steps = [
            Step(name="main-0", match=Match(last_user_contains=MAIN_MARK), latency_ms=latency_ms,
                 reply=Reply(tool_calls=[client.read("notes.txt")])),
            Step(name="main-1", match=Match(last_user_is_tool_result=True, any_message_contains="42"),
                 latency_ms=latency_ms, reply=Reply(text="It says 42.")),
        ]
        return Script(steps=steps + tail)
    if client.name == "floor":
        if scenario != "fanout":
            return None
        calls: list[ToolCall] = []
    elif client.task is None:
        return None
    else:
        calls = [client.task(i) for i in range(1 if scenario == "task" else fanout)]
    n = 1 if scenario == "task" else fanout
    steps = [Step(name="main-0", match=Match(last_user_contains=MAIN_MARK), latency_ms=latency_ms,
                  reply=Reply(tool_calls=calls) if calls else Reply(text="delegating"))]
    steps += [Step(name=f"sub-{i}", match=Match(last_user_contains=f"sub task {i:04d}"), latency_ms=latency_ms,
                   reply=Reply(text=f"answer {i}")) for i in range(n)]
    steps.append(Step(name="main-1", match=Match(any_message_contains=MAIN_MARK), latency_ms=latency_ms,
                      reply=Reply(text="done")))
    return Script(steps=steps + tail)


@dataclass(slots=True)
class Run:
    """One process's figures (ms, MB); None where the scenario does not give it."""

    first: float | None = None
    gap: float | None = None
    exit: float | None = None
    wall: float | None = None
    cpu: float | None = None
    rss: float | None = None
    dispatch: float | None = None
    back: float | None = None
    efficiency: float | None = None


def _named(requests: list[RecordedRequest], script: Script) -> dict[str, list[RecordedRequest]]:
    out: dict[str, list[RecordedRequest]] = {}
    for r in sorted(requests, key=lambda r: r.received_at):
        name = script.steps[r.step_index].name if r.step_index is not None else "unmatched"
        out.setdefault(name or "", []).append(r)
    return out


def run_once(client: Client, scenario: str, script: Script, work: Path, latency_ms: int, fanout: int) -> Run | str:
    """Spawn the client against a fresh server; its figures, or a line saying why there are none."""
    work.mkdir(parents=True)
    (work / "notes.txt").write_text(FILE_TEXT)
    try:
        return _spawn(client, scenario, script, work, latency_ms, fanout)
    except RuntimeError as exc:  # the server saw the script not followed
        return f"{client.name} {scenario}: {str(exc).strip()[-300:]}"


def _spawn(client: Client, scenario: str, script: Script, work: Path, latency_ms: int, fanout: int) -> Run | str:
    prompt = f"{MAIN_MARK}: what does notes.txt say?"
    with server_process(script, work) as (base_url, requests):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work / "home"),
               "XDG_CONFIG_HOME": str(work / "c"), "XDG_DATA_HOME": str(work / "d"),
               "XDG_STATE_HOME": str(work / "s"), "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": base_url,
               "BENCH_PROMPT": prompt, **client.extra_env}
        argv = client.command(prompt, fanout)
        if client.name == "floor":
            argv = [*argv[:-2], scenario, str(fanout)]
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=work)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        end = time.monotonic()
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        return f"{client.name} {scenario}: exit {proc.returncode}: {err.decode(errors='replace').strip()[-300:]}"
    named = _named(requests, script)
    if "main-0" not in named or "main-1" not in named:
        return f"{client.name} {scenario}: the script's requests did not all arrive ({sorted(named)})"
    main0, main1 = named["main-0"][0], named["main-1"][-1]
    last_end = max(r.finished_at or r.received_at for r in requests)
    run = Run(first=(main0.received_at - start) * 1000, exit=(end - last_end) * 1000, wall=(end - start) * 1000,
              cpu=(usage.ru_utime + usage.ru_stime) * 1000, rss=usage.ru_maxrss / 1024)
    assert main0.finished_at is not None
    if scenario == "turns":
        run.gap = (main1.received_at - main0.finished_at) * 1000
    subs = [r for name, rs in named.items() if name.startswith("sub-") for r in rs]
    if scenario == "task" and subs and subs[0].finished_at is not None:
        run.dispatch = (subs[0].received_at - main0.finished_at) * 1000
        run.back = (main1.received_at - subs[0].finished_at) * 1000
    if scenario == "fanout":
        run.efficiency = (latency_ms / 1000) / (main1.received_at - main0.finished_at)
    return run


COLUMNS = [("start->1st req", "first", "ms"), ("per-turn gap", "gap", "ms"), ("answer->exit", "exit", "ms"),
           ("wall", "wall", "ms"), ("CPU", "cpu", "ms"), ("peak RSS", "rss", "MB"),
           ("Task dispatch", "dispatch", "ms"), ("Task return", "back", "ms"), ("fan-out eff", "efficiency", "")]


def _median(runs: list[Run], attr: str) -> float | None:
    values = [v for r in runs if (v := getattr(r, attr)) is not None]
    return statistics.median(values) if values else None


def table(results: dict[str, dict[str, list[Run]]]) -> str:
    """One row per client: the medians; wall, CPU and RSS are the `turns` scenario's."""
    sources = {"first": "turns", "gap": "turns", "exit": "turns", "wall": "turns", "cpu": "turns", "rss": "turns",
               "dispatch": "task", "back": "task", "efficiency": "fanout"}
    head = f"{'client':<10}" + "".join(f"{label:>15}" for label, _, _ in COLUMNS)
    lines = [head]
    for name, scenarios in results.items():
        cells = []
        for _, attr, unit in COLUMNS:
            value = _median(scenarios.get(sources[attr], []), attr)
            cells.append("-" if value is None else f"{value:.2f}" if not unit else f"{value:.0f} {unit}")
        lines.append(f"{name:<10}" + "".join(f"{c:>15}" for c in cells))
    return "\n".join(lines)


def _enter_netns() -> str:
    """Re-run this bench inside a loopback-only network namespace; a note when that is not possible."""
    if os.environ.get(IN_NETNS):
        return "network: inside a namespace with only loopback (unshare -rn)"
    unshare, ip = shutil.which("unshare"), shutil.which("ip") or "/usr/sbin/ip"
    if unshare is None:
        return "network: NOTE unshare not found: running in the host's network namespace"
    probe = subprocess.run([unshare, "-rn", ip, "link", "set", "lo", "up"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"network: NOTE unshare -rn not permitted here ({probe.stderr.strip()}): host namespace"
    inner = f'"{ip}" link set lo up && exec "$@"'
    code = subprocess.call([unshare, "-rn", "sh", "-c", inner, "sh", sys.executable, *sys.argv],
                           env={**os.environ, IN_NETNS: "1"})
    sys.exit(code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--latency-ms", type=int, default=300)
    parser.add_argument("--fanout", type=int, default=16)
    parser.add_argument("--no-netns", action="store_true", help="stay in the host's network namespace")
    args = parser.parse_args()
    note = "network: host namespace (--no-netns)" if args.no_netns else _enter_netns()
    found, skipped = clients(args.fanout)
    print(f"{note}; model latency {args.latency_ms} ms; fan-out {args.fanout}; medians of {args.runs} "
          "interleaved rounds")
    for line in skipped:
        print(f"  {line}")
    scenarios = ("turns", "task", "fanout")
    results: dict[str, dict[str, list[Run]]] = {c.name: {} for c in found}
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.runs + 1):
            order = found[round_ % len(found):] + found[:round_ % len(found)]
            for scenario in scenarios:
                for client in order:
                    script = script_for(scenario, client, args.latency_ms, args.fanout)
                    if script is None:
                        continue
                    work = Path(tmp) / f"{client.name}-{scenario}-{round_}"
                    got = run_once(client, scenario, script, work, args.latency_ms, args.fanout)
                    if isinstance(got, str):
                        problems.append(got)
                    elif round_:  # round 0 warms the file cache
                        results[client.name].setdefault(scenario, []).append(got)
    print(table(results))
    print("floor: the anthropic SDK alone (its fan-out: the same requests with asyncio.gather); '-': not applicable")
    for problem in dict.fromkeys(problems):
        print(f"  problem: {problem}")
    print(json.dumps({"latency_ms": args.latency_ms, "fanout": args.fanout, "runs": args.runs,
                      "medians": {n: {a: _median(s.get(src, []), a) for a, src in
                                      (("first", "turns"), ("gap", "turns"), ("exit", "turns"), ("wall", "turns"),
                                       ("cpu", "turns"), ("rss", "turns"), ("dispatch", "task"),
                                       ("back", "task"), ("efficiency", "fanout"))}
                                  for n, s in results.items()}}))


if __name__ == "__main__":
    main()
