"""What scripted sessions would cost with Anthropic's prompt cache, simulated over the requests the fake server
received from the real CLI, in effective input tokens.

Run: python bench/cost.py [--baseline-python PYTHON ...] [--latency-ms 200] [--min-cache-tokens 1024] [--verbose]

Every session runs `python -m agentcli run` (this checkout's, and each `--baseline-python`'s, e.g. another
checkout's venv, so "before" and "after" are measured in the same run) against the fake server
(`python -m agentcli.testing.fake_llm`, its own process) in a fresh git workspace and a fresh home. Sessions:

- fanout: one prompt; the main agent answers with three parallel Task calls (general subagents: the
  main agent's model and every tool), each subagent makes one Grep or Read call and answers; the main
  agent answers. The same with explore subagents: `fanout-explore` on the main agent's model
  (`model: "main"`), `fanout-light` on the explore type's own (light), whose cache cannot be shared with
  the main agent's (a cache belongs to one model; requests sent at once share nothing either);
- session: ten prompts of one session (`--input-format stream-json`, as in the TUI), with reads, edits,
  commands and two delegations (explore on its own model, then general); `session-resumed`: the same ten
  prompts, each its own process (`run`, then `run -c`), so each renders the system prompt again (the git
  status it shows changes after an edit).
Targets (issue 23, item 7), this checkout over the one before it: fanout <= 0.5, session <= 0.86.

The simulation follows Anthropic's prompt caching rules over each request body as sent:
- a prompt is the blocks tools, system, messages in that order (each tool, system text block and message
  content block is one block); tokens = characters of a block's JSON / 4 (`cache_control` left out);
- a request's `cache_control` breakpoints write cache entries: the prefix up to each breakpoint, if it
  holds at least --min-cache-tokens (Anthropic: 1024 for Sonnet and Opus models);
- a request reads the longest prefix, ending at a block boundary at most 20 blocks before one of its
  breakpoints, that an earlier request of the same model wrote and that was ready: an entry is ready once
  the response that wrote it has finished (the fake server's clock; Anthropic: once it has started, so
  requests sent at the same time share nothing);
- cost: read x 0.1, written (read point -> last breakpoint) x 1.25, the rest of the input x 1, output
  (the scripted reply's text and tool calls, characters / 4) x 5, each in input-token prices.
The entries live for the whole run (the 5-minute lifetime is never reached here).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_server import server_process

from agentcli.testing.fake_llm import Match, RecordedRequest, Reply, Script, Step, ToolCall

WRITE, READ, OUTPUT = 1.25, 0.1, 5.0
CHARS_PER_TOKEN = 4
LOOKBACK = 20  # block boundaries Anthropic checks before a breakpoint
MAIN = "You are agentcli, a coding assistant"  # the main agent's system prompt starts with this

# --- the simulation ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a prompt: its JSON (without cache_control) and whether a breakpoint ends it."""

    text: str
    breakpoint: bool


def _plain(block: dict[str, Any]) -> tuple[str, bool]:
    mark = "cache_control" in block
    rest = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(rest, ensure_ascii=False, separators=(",", ":"), sort_keys=True), mark


def blocks_of(body: dict[str, Any]) -> list[Block]:
    """The prompt of an Anthropic Messages request, block by block, in cache order: tools, system, messages."""
    out: list[Block] = []
    for tool in body.get("tools") or []:
        out.append(Block(*_plain(tool)))
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for part in system:
        out.append(Block(*_plain(part)))
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for part in content or []:
            text, mark = _plain(part)
            out.append(Block(f"{message.get('role')}:{text}", mark))
    return out


@dataclass(slots=True)
class Cost:
    """Tokens of some requests, by how they are billed."""

    requests: int = 0
    uncached: float = 0.0
    written: float = 0.0
    read: float = 0.0
    output: float = 0.0

    @property
    def effective(self) -> float:
        """Input-token equivalents: what the tokens cost at input-token prices."""
        return self.uncached + WRITE * self.written + READ * self.read + OUTPUT * self.output

    def __iadd__(self, other: Cost) -> Cost:
        self.requests += other.requests
        self.uncached += other.uncached
        self.written += other.written
        self.read += other.read
        self.output += other.output
        return self


@dataclass(slots=True)
class PromptCache:
    """The cache entries written so far: (model, prefix digest) -> when the entry is ready."""

    min_tokens: int
    entries: dict[tuple[str, str], float] = field(default_factory=dict)

    def charge(self, model: str, blocks: list[Block], sent_at: float, ready_at: float) -> Cost:
        """The input cost of one request sent at `sent_at`; its entries are ready from `ready_at` on."""
        digests, ends = [], []
        running, chars = hashlib.sha256(), 0
        for block in blocks:
            running.update(block.text.encode())
            running.update(b"\0")
            digests.append(running.hexdigest())
            chars += len(block.text)
            ends.append(chars / CHARS_PER_TOKEN)
        marks = [i for i, block in enumerate(blocks) if block.breakpoint]
        looked = {j for i in marks for j in range(max(0, i - LOOKBACK + 1), i + 1)}
        hit = max((j for j in looked if self.entries.get((model, digests[j]), float("inf")) <= sent_at), default=-1)
        read = ends[hit] if hit >= 0 else 0.0
        cached = [i for i in marks if ends[i] >= self.min_tokens]
        last = max(cached, default=-1)
        written = ends[last] - read if last > hit else 0.0
        for i in cached:
            key = (model, digests[i])
            self.entries[key] = min(self.entries.get(key, ready_at), ready_at)
        total = ends[-1] if ends else 0.0
        return Cost(1, total - read - written, written, read, 0.0)


def reply_tokens(step: Step) -> float:
    """The output tokens of a scripted reply: its thinking, text and tool calls (name and arguments)."""
    reply = step.reply
    chars = len(reply.thinking) + len(reply.text)
    chars += sum(len(call.name) + len(call.arguments_text()) for call in reply.tool_calls)
    return chars / CHARS_PER_TOKEN


def simulate(requests: Iterable[RecordedRequest], script: Script, min_tokens: int) -> dict[str, Cost]:
    """The cost of a run's requests, per agent kind ("main", "subagents") and in all ("total")."""
    cache = PromptCache(min_tokens)
    costs = {"main": Cost(), "subagents": Cost(), "total": Cost()}
    for request in sorted(requests, key=lambda r: r.received_at):
        body = request.body
        cost = cache.charge(str(body.get("model")), blocks_of(body), request.received_at,
                            request.finished_at or float("inf"))
        if request.step_index is not None:
            cost.output = reply_tokens(script.steps[request.step_index])
        system = json.dumps(body.get("system") or "")
        costs["main" if MAIN in system else "subagents"] += cost
        costs["total"] += cost
    return costs


# --- the scripted sessions -----------------------------------------------------------------------------

FILES = {
    "README.md": "# demo\n\nA small service: configuration loading, a login check and their tests.\n",
    "src/config.py": "import os\n\n\ndef load_config(path=None):\n    \"\"\"Settings from the environment.\"\"\"\n"
                     "    return {'debug': os.environ.get('DEBUG') == '1', 'path': path}\n",
    "src/auth.py": "from src.config import load_config\n\n\ndef login(user, password):\n"
                   "    cfg = load_config()\n    if cfg['debug']:\n        return True\n"
                   "    return user == 'admin' and password == 'secret'\n",
    "tests/test_auth.py": "from src.auth import login\n\n\ndef test_login():\n    assert login('admin', 'secret')\n",
}
ANSWER = ("Found it. load_config is defined at src/config.py:4 and reads DEBUG from the environment; "
          "src/auth.py:5 calls it on every login and lets anyone in when debug is on. tests/test_auth.py:4 "
          "covers the normal path only.")


def workspace(root: Path) -> Path:
    """A fresh git repository holding FILES, committed."""
    ws = root / "ws"
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "start"]):
        subprocess.run(cmd, cwd=ws, env=env, check=True, capture_output=True)
    return ws


def _task(description: str, prompt: str, subagent_type: str, model: str | None) -> ToolCall:
    args: dict[str, Any] = {"description": description, "prompt": prompt, "subagent_type": subagent_type}
    if model:
        args["model"] = model
    return ToolCall(name="Task", input=args)


class ScriptBuilder:
    """Steps for the main agent in the order it makes its requests (matched by its turn number)."""

    def __init__(self, latency_ms: int) -> None:
        self.latency_ms = latency_ms
        self.steps: list[Step] = []
        self.turn = 0

    def main(self, reply: Reply) -> None:
        self.steps.append(Step(match=Match(system_contains=MAIN, turn=self.turn), reply=reply,
                               latency_ms=self.latency_ms))
        self.turn += 1

    def subagent(self, description: str, call: ToolCall, answer: str) -> None:
        """A subagent's two requests: one tool call, then its answer."""
        mark = f"# Task\n{description}"
        self.steps.append(Step(match=Match(system_contains=mark, turn=0), reply=Reply(tool_calls=[call]),
                               latency_ms=self.latency_ms))
        self.steps.append(Step(match=Match(system_contains=mark, turn=1), reply=Reply(text=answer),
                               latency_ms=self.latency_ms))

    def script(self) -> Script:
        return Script(steps=self.steps)


def fanout_script(latency_ms: int, kind: str, model: str | None) -> Script:
    b = ScriptBuilder(latency_ms)
    jobs = [("Find config loader", grep_call("def load_config")), ("Find login check", read_call("src/auth.py")),
            ("Find the login tests", grep_call("def test_"))]
    b.main(Reply(text="I'll look in three places at once.",
                 tool_calls=[_task(d, f"{d}: say where it is, as path:line, and what it does.", kind, model)
                             for d, _ in jobs]))
    for description, call in jobs:
        b.subagent(description, call, ANSWER)
    b.main(Reply(text="Configuration comes from src/config.py:4; login (src/auth.py:5) trusts debug mode. " * 2))
    return b.script()


def grep_call(pattern: str) -> ToolCall:
    return ToolCall(name="Grep", input={"pattern": pattern, "output_mode": "content"})


def read_call(path: str) -> ToolCall:
    return ToolCall(name="Read", input={"file_path": path})


PROMPTS = [
    "What does this project do?",
    "Where is the configuration loaded, and who uses it?",
    "Add a docstring to login in src/auth.py.",
    "Run the tests.",
    "Plan and make the change: login must not trust debug mode.",
    "Show me the diff.",
    "Is the password compared safely?",
    "Use hmac.compare_digest for the password.",
    "Run the tests again.",
    "Summarize what we changed today.",
]


def session_script(latency_ms: int) -> Script:
    """Ten prompts; prompt 2 delegates to explore, prompt 5 to general."""
    b = ScriptBuilder(latency_ms)
    edit = ToolCall(name="Edit", input={"file_path": "src/auth.py", "old_string": "def login(user, password):\n",
                                        "new_string": "def login(user, password):\n    \"\"\"Check a login.\"\"\"\n"})
    fix = ToolCall(name="Edit", input={"file_path": "src/auth.py",
                                       "old_string": "    if cfg['debug']:\n        return True\n",
                                       "new_string": ""})
    compare = ToolCall(name="Edit", input={"file_path": "src/auth.py", "old_string": "password == 'secret'",
                                           "new_string": "hmac.compare_digest(password, 'secret')"})
    bash = ToolCall(name="Bash", input={"command": "git status --short && ls tests", "description": "Check the tree"})
    diff = ToolCall(name="Bash", input={"command": "git diff --stat", "description": "Show the diff"})
    turns: list[list[ToolCall | tuple[str, str, ToolCall]]] = [
        [read_call("README.md")],
        [("Find config users", "explore", grep_call("load_config"))],
        [edit],
        [bash],
        [("Remove the debug bypass", "general", fix)],
        [diff],
        [read_call("src/auth.py")],
        [compare],
        [bash],
        [],
    ]
    for calls in turns:
        if not calls:
            b.main(Reply(text="We documented login, removed its debug bypass and compare passwords in constant time."))
            continue
        for call in calls:
            if isinstance(call, tuple):
                description, kind, sub_call = call
                b.main(Reply(text="Delegating.", tool_calls=[_task(description, f"{description}. Report as path:line.",
                                                                    kind, None)]))
                b.subagent(description, sub_call, ANSWER)
            else:
                b.main(Reply(text="Let me check.", tool_calls=[call]))
        b.main(Reply(text="Done: " + ANSWER[:160]))
    return b.script()


# --- running the CLI -----------------------------------------------------------------------------------


def cli_env(home: Path, base_url: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_CONFIG_HOME": str(home / "c"),
            "XDG_DATA_HOME": str(home / "d"), "XDG_STATE_HOME": str(home / "s"),
            "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": base_url, "AGENTCLI_LLM__MAX_RETRIES": "0"}


def run_session(python: str, name: str, script: Script, root: Path) -> list[RecordedRequest]:
    """Run one session with `python -m agentcli` against a fresh server; the requests the server received."""
    root.mkdir(parents=True)
    ws, home = workspace(root), root / "home"
    with server_process(script, root) as (base_url, requests):
        env = cli_env(home, base_url)
        base = [python, "-m", "agentcli", "run", "--yes", "--cwd", str(ws)]
        if name == "session":
            lines = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": p}}) + "\n"
                            for p in PROMPTS)
            cmds: list[tuple[list[str], str | None]] = [
                ([*base, "--input-format", "stream-json", "--output-format", "stream-json"], lines)]
        elif name == "session-resumed":
            cmds = [([*base, *(["-c"] if i else []), "--output-format", "json", p], None)
                    for i, p in enumerate(PROMPTS)]
        else:
            cmds = [([*base, "--output-format", "json", "Where do configuration and login live?"], None)]
        for cmd, stdin in cmds:
            proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, cwd=ws, timeout=300)
            if proc.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd[:4])}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return requests


SESSIONS = ("fanout", "fanout-explore", "fanout-light", "session", "session-resumed")
TARGETS = {"fanout": 0.5, "session": 0.86}  # issue 23, item 7: this checkout / the one before it


def script_of(name: str, latency_ms: int) -> Script:
    if name == "fanout":
        return fanout_script(latency_ms, "general", None)
    if name == "fanout-explore":
        return fanout_script(latency_ms, "explore", "main")
    if name == "fanout-light":
        return fanout_script(latency_ms, "explore", None)
    return session_script(latency_ms)


def checkouts(baselines: list[str]) -> Iterator[tuple[str, str]]:
    yield "agentcli", sys.executable
    for python in baselines:
        yield Path(python).absolute().parents[2].name, python  # CHECKOUT/.venv/bin/python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-python", metavar="PYTHON", action="append", default=[],
                        help="also run `PYTHON -m agentcli` (another checkout's venv); repeatable")
    parser.add_argument("--latency-ms", type=int, default=200, help="the fake model's time to answer each request")
    parser.add_argument("--min-cache-tokens", type=int, default=1024,
                        help="the shortest prefix a breakpoint caches (Anthropic: 1024 for Sonnet and Opus)")
    parser.add_argument("--sessions", default=",".join(SESSIONS), help=f"which of {', '.join(SESSIONS)}")
    parser.add_argument("--verbose", action="store_true", help="every request's figures")
    args = parser.parse_args()
    names = [s for s in args.sessions.split(",") if s]
    results: dict[str, dict[str, dict[str, Cost]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, python in checkouts(args.baseline_python):
            for name in names:
                script = script_of(name, args.latency_ms)
                requests = run_session(python, name, script, Path(tmp) / label / name)
                results.setdefault(name, {})[label] = simulate(requests, script, args.min_cache_tokens)
                if args.verbose:
                    print_requests(label, name, requests, script, args.min_cache_tokens)
    print(f"effective input tokens (uncached x1, cache write x{WRITE}, cache read x{READ}, output x{OUTPUT}; "
          f"tokens = chars/{CHARS_PER_TOKEN}; min cached prefix {args.min_cache_tokens})")
    print(f"  {'session':<16} {'checkout':<14} {'agents':<10} {'reqs':>4} {'uncached':>9} {'written':>9} "
          f"{'read':>9} {'output':>7} {'effective':>10}")
    for name, by_label in results.items():
        for label, costs in by_label.items():
            for kind, c in costs.items():
                print(f"  {name:<16} {label:<14} {kind:<10} {c.requests:>4} {c.uncached:>9.0f} {c.written:>9.0f} "
                      f"{c.read:>9.0f} {c.output:>7.0f} {c.effective:>10.0f}")
    if args.baseline_python:
        print("ratios, this checkout / baseline (effective tokens, whole session):")
        for name, by_label in results.items():
            ours = by_label["agentcli"]["total"].effective
            for label, costs in by_label.items():
                if label != "agentcli":
                    target = f"  (target <= {TARGETS[name]})" if name in TARGETS else ""
                    print(f"  {name:<16} / {label:<14} {ours / costs['total'].effective:6.3f}{target}")


def print_requests(label: str, name: str, requests: list[RecordedRequest], script: Script, min_tokens: int) -> None:
    cache = PromptCache(min_tokens)
    print(f"{label} {name}:")
    for r in sorted(requests, key=lambda r: r.received_at):
        blocks = blocks_of(r.body)
        c = cache.charge(str(r.body.get("model")), blocks, r.received_at, r.finished_at or float("inf"))
        who = "main" if MAIN in json.dumps(r.body.get("system") or "") else "sub"
        marks = [i for i, b in enumerate(blocks) if b.breakpoint]
        print(f"  #{r.seq:<3} {who:<4} {r.body.get('model')!s:<18} blocks {len(blocks):>3} marks {marks!s:<20} "
              f"uncached {c.uncached:>7.0f} written {c.written:>7.0f} read {c.read:>7.0f}")


if __name__ == "__main__":
    main()
