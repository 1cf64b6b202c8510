"""agentcli beside the bare SDK floor and any peer CLI installed here, against one scripted server.

Run: python bench/peers.py [--runs 5] [--latency-ms 300] [--fanout 16] [--clients a,b] [--no-netns]

Every client talks to the project's fake server (`python -m agentcli.testing.fake_llm`, its own process)
with --latency-ms before each model answer. The whole bench re-runs itself inside a network namespace that
has only loopback (`unshare -rn`, then `ip link set lo up`), so nothing can reach or be reached from the
network; where unshare is not permitted it says so and runs in the host's namespace.

Clients: `floor` (a bare script with the anthropic SDK: the same requests, no agent around them),
`agentcli` (this checkout's `python -m agentcli run`), and the peers `claude` (Claude Code), `kimi`
(kimi-cli) and `opencode` when they are on PATH (a line says which are skipped). Each round runs every
client once per scenario, in an order that rotates each round; medians over --runs rounds (one warm-up
round first, not counted). Each client has its own temporary HOME (XDG directories inside it), made in
the warm-up round and kept for its measured runs, as a user's would be; no user config is read or written.
Each run starts in a fresh working directory holding only notes.txt.

Installing the peers for a reproduction (outside the project; never a dependency of it)::

    mkdir -p /work/peers/bin && cd /work/peers
    npm install @anthropic-ai/claude-code opencode-ai        # `claude`, `opencode` (native binaries)
    python3.13 -m venv kimi-venv && kimi-venv/bin/pip install 'kimi-cli==1.51.0'
    ln -sf ../node_modules/.bin/claude ../node_modules/.bin/opencode ../kimi-venv/bin/kimi bin/
    PATH=/work/peers/bin:$PATH python bench/peers.py --runs 5 --fanout 16

kimi-cli needs Python >= 3.12 (3.12.1 trips over a typing bug in it: use 3.13); 1.52.0, its last
release, is a stub that only prints a notice pointing to its TypeScript successor, so pin 1.51.0.
How each peer is driven (all in print mode, against the fake server only):
- claude: `-p --output-format json --allowedTools Read,Agent` (`--dangerously-skip-permissions` is refused
  as root); ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY; CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, DISABLE_AUTOUPDATER,
  DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING; CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY = --fanout. Delegation is
  its `Agent` tool (subagent_type Explore; those subagents ask for claude-haiku-4-5). Side traffic: `HEAD /`
  (a reachability probe at start; 404 here). Without the non-essential-traffic switch it also asks the main
  model for a session title (no tools) beside its first request.
- kimi: `--quiet --config JSON -p` (print mode auto-approves tools), its native `kimi` provider (OpenAI chat
  completions) at the fake server; telemetry off, KIMI_CLI_NO_AUTO_UPDATE. Delegation is its `Agent` tool
  (subagent_type explore). No side traffic (a subagent answer under 200 characters would draw one more
  "too brief" request per subagent). Its `anthropic` provider fails with anthropic 2.x (`Cannot instantiate
  typing.Union`), so it is not used.
- opencode: `run --model anthropic/claude-sonnet-4-5`, the provider's baseURL and apiKey through
  OPENCODE_CONFIG_CONTENT; OPENCODE_DISABLE_MODELS_FETCH / _AUTOUPDATE / _LSP_DOWNLOAD / _SHARE /
  _DEFAULT_PLUGINS. Delegation is its `task` tool (subagent_type explore). Side traffic: a session-title
  request to claude-haiku-4-5 without tools, sent beside its first request. Some of its start-up work (tool
  and project set-up, ~0.5-0.8 s here) runs beside that first request, so it lands either before the first
  request or in the first per-turn gap, depending on timing: its wall time is the steadier figure.
Side requests are answered (after the same latency) by a catch-all step; they are listed per client and
scenario after the table and left out of every figure.

Scenarios and figures (from the server's clock, CLOCK_MONOTONIC, and the child's rusage, which includes
the processes it waited for). The first/last "main" request is the client's own agent loop: the request
that carries the prompt and offers the client's file-reading tool, and the one answering that tool call.
- turns: prompt -> a read tool call -> the answer (two model calls).
  start->1st request (spawn -> first main request), per-turn gap (end of the first answer -> the next
  request), answer->exit (end of the last main answer -> process exit), wall (spawn -> exit), CPU
  (user+system), peak RSS;
- task: one delegation call; hop latencies: dispatch (end of the parent's answer -> the subagent's request)
  and return (end of the subagent's answer -> the parent's next request);
- fanout: --fanout delegation calls in one answer, each subagent one model call; efficiency = one model
  call's latency / (end of the parent's answer -> its next request); fan 1st / last sub (end of the parent's
  answer -> the first / last subagent request) and fan return (end of the last subagent answer -> the parent's
  next request).
Under the table: start->1st request, wall and fan-out efficiency over the floor's in the same round (median of
the per-round ratios, steadier than the medians when other work shares the machine).
--base REF adds `agentcli@REF`: this checkout's code as of git commit REF (`git archive`, on PYTHONPATH), driven
the same way and interleaved with the others, so a change and its base are measured in one run;
--scenarios picks a subset (e.g. fanout).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from fake_server import server_process

from agentcli.testing.fake_llm import Match, RecordedRequest, Reply, Script, Step, ToolCall

IN_NETNS = "AGENTCLI_PEERS_NETNS"
MAIN_MARK = "PEERS-BENCH-MAIN"
FILE_TEXT = "the answer is 42\n"
SUB_ANSWER = ("Findings: notes.txt holds a single line, 'the answer is 42'. Nothing else in the work directory refers "
              "to it; no configuration, tests or scripts read it, so the value stands as the whole of the answer.")
"""A subagent's answer: over 200 characters, as kimi asks a subagent to expand a shorter one."""
TIMEOUT_S = 180

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
    """How to run one CLI non-interactively against a server, and the tools its agent loop offers."""

    name: str
    command: Callable[[str, str, str], list[str]]  # (scenario, prompt, base_url) -> argv
    read_tool: str
    read: Callable[[str], ToolCall]
    task: Callable[[int], ToolCall] | None  # None: no delegation
    env: Callable[[str], dict[str, str]] = field(default=lambda base_url: {})  # base_url -> extra environment
    version: list[str] | None = None  # argv printing its version


def _delegate(name: str, subagent_type: str) -> Callable[[int], ToolCall]:
    def call(i: int) -> ToolCall:
        return ToolCall(name=name, input={"description": f"Bench task {i:04d}", "prompt": f"sub task {i:04d}",
                                          "subagent_type": subagent_type})
    return call


def _kimi_config(base_url: str) -> str:
    return json.dumps({
        "default_model": "bench", "telemetry": False,
        "models": {"bench": {"provider": "fake", "model": "kimi-bench", "max_context_size": 200000}},
        "providers": {"fake": {"type": "kimi", "base_url": f"{base_url}/v1", "api_key": "sk-bench"}},
    })


def _opencode_config(base_url: str) -> str:
    return json.dumps({"autoupdate": False, "share": "disabled", "provider": {
        "anthropic": {"options": {"baseURL": f"{base_url}/v1", "apiKey": "sk-bench"}}}})


def all_clients(fanout: int) -> list[Client]:
    """Every client this bench knows how to drive (peers whether installed or not)."""
    py = sys.executable

    def read_path(path: str) -> ToolCall:
        return ToolCall(name="Read", input={"file_path": path})

    return [
        Client("floor", lambda sc, p, base: [py, "-c", FLOOR, sc, str(fanout)], "Read", read_path, None),
        Client("agentcli", lambda sc, p, base: [py, "-m", "agentcli", "run", "--yes", "--output-format", "json", p],
               "Read", read_path, _delegate("Task", "explore"),
               lambda base: {"AGENTCLI_TASK_TOOL__MAX_CONCURRENT": str(max(fanout, 1)),
                             "AGENTCLI_LLM__MAX_RETRIES": "0"}),
        Client("claude", lambda sc, p, base: ["claude", "-p", p, "--output-format", "json",
                                               "--allowedTools", "Read,Agent"],
               "Read", read_path, _delegate("Agent", "Explore"),
               lambda base: {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                             "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
                             "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY": str(max(fanout, 1))},
               ["claude", "--version"]),
        Client("kimi", lambda sc, p, base: ["kimi", "--quiet", "--config", _kimi_config(base), "-p", p],
               "ReadFile", lambda path: ToolCall(name="ReadFile", input={"path": path}), _delegate("Agent", "explore"),
               lambda base: {"KIMI_CLI_NO_AUTO_UPDATE": "1"},
               ["kimi", "--version"]),
        Client("opencode", lambda sc, p, base: ["opencode", "run", "--model", "anthropic/claude-sonnet-4-5", p],
               "read", lambda path: ToolCall(name="read", input={"filePath": path}), _delegate("task", "explore"),
               lambda base: {"OPENCODE_CONFIG_CONTENT": _opencode_config(base), "OPENCODE_DISABLE_MODELS_FETCH": "1",
                             "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                             "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1"},
               ["opencode", "--version"]),
    ]


def base_client(fanout: int, ref: str, tree: Path) -> Client:
    """agentcli as of `ref` (a `git archive` of it in `tree`), run by this interpreter and its packages: the same
    driving as `agentcli`, so a change and its base are measured side by side in one run."""
    own = next(c for c in all_clients(fanout) if c.name == "agentcli")
    subprocess.run(f"git archive --format=tar {ref} | tar -x -C {tree}", shell=True, check=True,
                   cwd=Path(__file__).resolve().parent)
    return Client(f"agentcli@{ref}", own.command, own.read_tool, own.read, own.task,
                  lambda base: {**own.env(base), "PYTHONPATH": str(tree)})


def clients(fanout: int, only: set[str] | None) -> tuple[list[Client], list[str]]:
    """The clients to run, and a line for each peer that is skipped."""
    found, skipped = [], []
    for client in all_clients(fanout):
        if only is not None and client.name not in only:
            continue
        if client.version is not None and shutil.which(client.name) is None:
            skipped.append(f"{client.name}: not on PATH, skipped")
        else:
            found.append(client)
    return found, skipped


def script_for(scenario: str, client: Client, latency_ms: int, fanout: int) -> Script | None:
    """The server's script for one client and scenario (None: the client cannot run it).

    Steps are matched on content: the main requests by the prompt's mark and the client's read tool, each
    subagent by its own prompt; anything else (titles, probes) falls to the catch-all `side` step."""
    side = Step(name="side", match=Match(), latency_ms=latency_ms, reply=Reply(text="Bench notes"),
                times=None, optional=True)
    main0 = Match(last_user_contains=MAIN_MARK, tools_include=[client.read_tool], last_user_is_tool_result=False)
    if scenario == "turns":
        steps = [
            Step(name="main-0", match=main0, latency_ms=latency_ms, reply=Reply(tool_calls=[client.read("notes.txt")])),
            Step(name="main-1", match=Match(last_user_is_tool_result=True, any_message_contains="42",
                                            tools_include=[client.read_tool]),
                 latency_ms=latency_ms, reply=Reply(text="It says 42.")),
        ]
        return Script(steps=[*steps, side])
    if client.name == "floor":
        if scenario != "fanout":
            return None
        calls: list[ToolCall] = []
    elif client.task is None:
        return None
    else:
        calls = [client.task(i) for i in range(1 if scenario == "task" else fanout)]
    n = 1 if scenario == "task" else fanout
    steps = [Step(name="main-0", match=main0, latency_ms=latency_ms,
                  reply=Reply(tool_calls=calls) if calls else Reply(text="delegating"))]
    steps += [Step(name=f"sub-{i}", match=Match(last_user_contains=f"sub task {i:04d}", last_user_is_tool_result=False),
                   latency_ms=latency_ms, reply=Reply(text=f"{i}. {SUB_ANSWER}")) for i in range(n)]
    steps.append(Step(name="main-1", match=Match(any_message_contains=MAIN_MARK, tools_include=[client.read_tool]),
                      latency_ms=latency_ms, reply=Reply(text="done")))
    return Script(steps=[*steps, side])


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
    fan_first: float | None = None  # fanout: end of the parent's answer -> the first / last subagent request
    fan_last: float | None = None
    fan_back: float | None = None  # fanout: end of the last subagent answer -> the parent's next request
    side: collections.Counter[str] = field(default_factory=collections.Counter)
    round: int = 0


def _named(requests: list[RecordedRequest], script: Script) -> dict[str, list[RecordedRequest]]:
    out: dict[str, list[RecordedRequest]] = {}
    for r in sorted(requests, key=lambda r: r.received_at):
        name = script.steps[r.step_index].name if r.step_index is not None else "unmatched"
        out.setdefault(name or "", []).append(r)
    return out


def _side_label(r: RecordedRequest) -> str:
    """What a request outside the scripted conversation was: endpoint, model and tools offered."""
    if r.step_index is None:
        return f"{r.method} {r.path} -> {r.status}"
    body = r.body if isinstance(r.body, dict) else {}
    tools = len(body.get("tools") or [])
    return f"{r.method} {r.path} model={body.get('model')} " + (f"{tools} tools" if tools else "no tools")


def run_once(
    client: Client, scenario: str, script: Script, work: Path, home: Path, latency_ms: int, fanout: int
) -> Run | str:
    """Spawn the client in `work` with `home` as its HOME against a fresh server; its figures, or why none."""
    work.mkdir(parents=True)
    (work / "notes.txt").write_text(FILE_TEXT)
    return _spawn(client, scenario, script, work, home, latency_ms, fanout)


def _base_env(home: Path, base_url: str) -> dict[str, str]:
    """A clean environment: PATH, HOME and XDG directories under `home`, the fake server's URL and a fake key."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache"),
            "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": base_url}


def _spawn(
    client: Client, scenario: str, script: Script, work: Path, home: Path, latency_ms: int, fanout: int
) -> Run | str:
    prompt = f"{MAIN_MARK}: what does notes.txt say?"
    err_file = work / "stderr.txt"
    with server_process(script, work, strict=False) as (base_url, requests):
        env = {**_base_env(home, base_url), "BENCH_PROMPT": prompt, **client.env(base_url)}
        argv = client.command(scenario, prompt, base_url)
        with err_file.open("wb") as err:
            start = time.monotonic()
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env,
                                    cwd=work, start_new_session=True)
            watchdog = threading.Timer(TIMEOUT_S, os.killpg, (proc.pid, signal.SIGKILL))
            watchdog.start()
            _, status, usage = os.wait4(proc.pid, 0)
            end = time.monotonic()
            watchdog.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        with contextlib.suppress(ProcessLookupError):  # anything the client left running in its session
            os.killpg(proc.pid, signal.SIGKILL)
    tail = err_file.read_text(errors="replace").strip()[-300:]
    if proc.returncode != 0:
        return f"{client.name} {scenario}: exit {proc.returncode}: {tail}"
    named = _named(requests, script)
    n_subs = {"turns": 0, "task": 1}.get(scenario, fanout)
    missing = [n for n in ["main-0", "main-1", *(f"sub-{i}" for i in range(n_subs))] if n not in named]
    if missing:
        return f"{client.name} {scenario}: requests for {missing[:4]} never arrived ({len(requests)} requests)"
    main0, main1 = named["main-0"][0], named["main-1"][-1]
    assert main0.finished_at is not None and main1.finished_at is not None
    run = Run(first=(main0.received_at - start) * 1000, exit=(end - main1.finished_at) * 1000,
              wall=(end - start) * 1000, cpu=(usage.ru_utime + usage.ru_stime) * 1000, rss=usage.ru_maxrss / 1024,
              side=collections.Counter(_side_label(r) for r in named.get("side", []) + named.get("unmatched", [])))
    if scenario == "turns":
        run.gap = (main1.received_at - main0.finished_at) * 1000
    subs = [r for name, rs in named.items() if name.startswith("sub-") for r in rs]
    if scenario == "task" and subs[0].finished_at is not None:
        run.dispatch = (subs[0].received_at - main0.finished_at) * 1000
        run.back = (main1.received_at - subs[0].finished_at) * 1000
    if scenario == "fanout":
        run.efficiency = (latency_ms / 1000) / (main1.received_at - main0.finished_at)
        run.fan_first = (min(r.received_at for r in subs) - main0.finished_at) * 1000
        run.fan_last = (max(r.received_at for r in subs) - main0.finished_at) * 1000
        run.fan_back = (main1.received_at - max(r.finished_at or 0.0 for r in subs)) * 1000
    return run


COLUMNS = [("start->1st req", "first", "ms"), ("per-turn gap", "gap", "ms"), ("answer->exit", "exit", "ms"),
           ("wall", "wall", "ms"), ("CPU", "cpu", "ms"), ("peak RSS", "rss", "MB"),
           ("Task dispatch", "dispatch", "ms"), ("Task return", "back", "ms"), ("fan-out eff", "efficiency", ""),
           ("fan 1st sub", "fan_first", "ms"), ("fan last sub", "fan_last", "ms"), ("fan return", "fan_back", "ms")]
COLUMNS_BY_ATTR = [(attr, label) for label, attr, _ in COLUMNS]
SOURCES = {"first": "turns", "gap": "turns", "exit": "turns", "wall": "turns", "cpu": "turns", "rss": "turns",
           "dispatch": "task", "back": "task", "efficiency": "fanout", "fan_first": "fanout", "fan_last": "fanout",
           "fan_back": "fanout"}


def _median(runs: list[Run], attr: str) -> float | None:
    values = [v for r in runs if (v := getattr(r, attr)) is not None]
    return statistics.median(values) if values else None


def table(results: dict[str, dict[str, list[Run]]]) -> str:
    """One row per client: the medians; wall, CPU and RSS are the `turns` scenario's."""
    width = max(10, *(len(name) + 1 for name in results))
    head = f"{'client':<{width}}" + "".join(f"{label:>15}" for label, _, _ in COLUMNS)
    lines = [head]
    for name, scenarios in results.items():
        cells = []
        for _, attr, unit in COLUMNS:
            value = _median(scenarios.get(SOURCES[attr], []), attr)
            cells.append("-" if value is None else f"{value:.2f}" if not unit else f"{value:.0f} {unit}")
        lines.append(f"{name:<{width}}" + "".join(f"{c:>15}" for c in cells))
    return "\n".join(lines)


def side_traffic(results: dict[str, dict[str, list[Run]]]) -> list[str]:
    """Per client and scenario: the requests outside the scripted conversation, median count per run."""
    lines = []
    for name, scenarios in results.items():
        for scenario, runs in scenarios.items():
            labels = sorted({label for r in runs for label in r.side})
            counts = [f"{statistics.median(r.side[label] for r in runs):g}x {label}" for label in labels]
            if counts:
                lines.append(f"  {name} {scenario}: " + "; ".join(counts))
    return lines


def floor_ratios(results: dict[str, dict[str, list[Run]]]) -> list[str]:
    """Per client: start->1st request and wall over the floor's in the same round, median of those ratios
    (steadier than a ratio of medians when other work shares the machine)."""
    lines = []
    for attr, scenario in (("first", "turns"), ("wall", "turns"), ("efficiency", "fanout")):
        floor = {r.round: r for r in results.get("floor", {}).get(scenario, [])}
        parts = []
        for name, scenarios in results.items():
            ratios = [v / f for r in scenarios.get(scenario, []) if name != "floor" and r.round in floor
                      and (v := getattr(r, attr)) is not None and (f := getattr(floor[r.round], attr))]
            if ratios:
                parts.append(f"{name} {statistics.median(ratios):.2f}")
        if parts:
            lines.append(f"  {dict(COLUMNS_BY_ATTR)[attr]} / floor's, paired by round: " + ", ".join(parts))
    return lines


def versions(found: list[Client]) -> str:
    """Each client's version, as it reports it."""
    out = [f"agentcli {version('agentcli')}", f"floor: anthropic SDK {version('anthropic')}"]
    with tempfile.TemporaryDirectory() as home:
        env = _base_env(Path(home), "http://127.0.0.1:9")
        for client in found:
            if client.version is not None:
                got = subprocess.run(client.version, capture_output=True, text=True, env=env, timeout=60)
                out.append(f"{client.name} {(got.stdout.strip().splitlines() or ['?'])[0]}")
    return "; ".join(out)


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
    parser.add_argument("--clients", default=None, help="comma-separated subset, e.g. floor,agentcli,claude")
    parser.add_argument("--no-netns", action="store_true", help="stay in the host's network namespace")
    parser.add_argument("--base", default=None, help="also run agentcli as of this git commit (`agentcli@REF`)")
    parser.add_argument("--scenarios", default="turns,task,fanout", help="comma-separated subset of the scenarios")
    args = parser.parse_args()
    note = "network: host namespace (--no-netns)" if args.no_netns else _enter_netns()
    found, skipped = clients(args.fanout, set(args.clients.split(",")) if args.clients else None)
    print(f"{note}; model latency {args.latency_ms} ms; fan-out {args.fanout}; medians of {args.runs} "
          "interleaved rounds")
    print(f"versions: {versions(found)}")
    for line in skipped:
        print(f"  {line}")
    scenarios = tuple(args.scenarios.split(","))
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.base:
            (Path(tmp) / "base").mkdir()
            found.append(base_client(args.fanout, args.base, Path(tmp) / "base"))
        results: dict[str, dict[str, list[Run]]] = {c.name: {} for c in found}
        for round_ in range(args.runs + 1):
            order = found[round_ % len(found):] + found[:round_ % len(found)]
            for scenario in scenarios:
                for client in order:
                    script = script_for(scenario, client, args.latency_ms, args.fanout)
                    if script is None:
                        continue
                    work, home = Path(tmp) / f"{client.name}-{scenario}-{round_}", Path(tmp) / f"home-{client.name}"
                    got = run_once(client, scenario, script, work, home, args.latency_ms, args.fanout)
                    if isinstance(got, str):
                        problems.append(got)
                    elif round_:  # round 0 warms the file cache and the client's HOME
                        got.round = round_
                        results[client.name].setdefault(scenario, []).append(got)
    print(table(results))
    print("floor: the anthropic SDK alone (its fan-out: the same requests with asyncio.gather); '-': not applicable"
          " or no run completed (see problems)")
    print("\n".join(floor_ratios(results)))
    print("side requests per run (median; answered by the catch-all step, left out of the figures):")
    print("\n".join(side_traffic(results)) or "  none")
    for problem in dict.fromkeys(problems):
        print(f"  problem: {problem}")
    print(json.dumps({"latency_ms": args.latency_ms, "fanout": args.fanout, "runs": args.runs,
                      "medians": {n: {a: _median(s.get(src, []), a) for a, src in SOURCES.items()}
                                  for n, s in results.items()}}))


if __name__ == "__main__":
    main()
