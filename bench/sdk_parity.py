"""SDK parity: one set of Claude Agent SDK scenarios, run unchanged against agentcli and Claude Code's own binary.

    .venv/bin/python bench/sdk_parity.py [--cli PATH] [--only plain,interrupt]    # agentcli (default: this venv's)
    CC=/work/cc-traffic/venv/lib/python3.11/site-packages/claude_agent_sdk/_bundled/claude
    .venv/bin/python bench/sdk_parity.py --claude-code $CC                          # both

With `--claude-code` the script re-executes itself inside `unshare -rn` (user + network namespace, loopback
brought up, no other interface), or refuses with one line: the SDK, both CLIs and the scripted fake server
(`agentcli.testing.fake_llm`, in process) all run there, so Claude Code's binary reaches nothing but the fake.
Each scenario runs per CLI in a fresh temp dir (workspace, HOME, CLAUDE_CONFIG_DIR, XDG dirs). The fake scripts
are tolerant: steps match on turn / last_user_contains / tools_include; optional steps cover what differs
(Claude Code's `Agent` tool vs agentcli's `Task`, its `StructuredOutput` tool vs agentcli's answer in text); a
last catch-all answers any extra request. Printed per scenario and CLI: SDK message classes (repeats collapsed,
turns split by `|`, `(sub)` = a subagent's), each result's subtype/is_error/num_turns/terminal_reason/denials,
structured_output, model requests, the scenario's checks, wall time; then N/N per CLI and the differences.
Not a test: never run Claude Code from the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from itertools import groupby
from pathlib import Path
from typing import Any

import anyio
import claude_agent_sdk as sdk
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, SystemMessage, query

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Step, ToolCall

NETNS_MARK = "SDK_PARITY_IN_NETNS"
TIMEOUT = 90.0
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}},
          "required": ["answer", "score"]}


@dataclass
class Ctx:
    """What a scenario sees besides its options: the workspace, the fake server, and its own checks."""

    ws: Path
    server: FakeLLMServer
    turns: list[list[Any]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.failed.append(what)

    async def turn(self, stream: AsyncIterator[Any]) -> list[Any]:
        """Collect one turn's messages (the table shows them, also those of a turn cut short)."""
        self.turns.append([])
        async for message in stream:
            self.turns[-1].append(message)
        return self.turns[-1]

    def used(self, name: str) -> bool:
        return any(step.name == name and uses for step, uses in self.server.steps)


def result_of(messages: list[Any]) -> ResultMessage:
    found = [m for m in messages if isinstance(m, ResultMessage)]
    if not found:
        raise AssertionError("no ResultMessage")
    return found[-1]


def init_of(messages: list[Any]) -> dict[str, Any]:
    return next((m.data for m in messages if type(m) is SystemMessage and m.subtype == "init"), {})


def step(text: str = "", calls: list[ToolCall] | None = None, *, name: str | None = None, optional: bool = False,
         hold: str | None = None, **match: Any) -> Step:
    """A step answering a request that offers tools (not a bare probe) and matches `match`."""
    return Step(name=name, optional=optional, hold=hold, match=Match(no_tools=False, **match),
                reply=Reply(text=text, tool_calls=calls or []))


CATCH_ALL = Step(name="catch-all", optional=True, times=None, reply=Reply(text="catch-all reply"))
Body = Callable[[ClaudeAgentOptions, Ctx], Awaitable[None]]
Scenario = tuple[str, Callable[[Path], list[Step]], Body]  # name, the fake script for a workspace, the SDK code
SCENARIOS: list[Scenario] = []


def scenario(name: str, steps: Callable[[Path], list[Step]]) -> Callable[[Body], Body]:
    def register(body: Body) -> Body:
        SCENARIOS.append((name, lambda ws: [*steps(ws), CATCH_ALL], body))
        return body
    return register


# The scenarios: the same code for every CLI.


@scenario("plain", lambda ws: [step("Hello from the fake model.", last_user_contains="PLAIN-1")])
async def plain(opts: ClaudeAgentOptions, ctx: Ctx) -> None:
    got = await ctx.turn(query(prompt="PLAIN-1 say hello", options=opts))
    ctx.check(type(got[0]) is SystemMessage and got[0].subtype == "init", "init comes first")
    ctx.check(result_of(got).result == "Hello from the fake model.", "result is the answer")


@scenario("multiturn", lambda ws: [step(f"Answer {n}.", last_user_contains=f"MT-{n}") for n in (1, 2, 3)])
async def multiturn(opts: ClaudeAgentOptions, ctx: Ctx) -> None:
    results: list[ResultMessage] = []
    async with ClaudeSDKClient(options=opts) as client:
        for n in (1, 2, 3):
            await client.query(f"MT-{n} turn {n}")
            results.append(result_of(await ctx.turn(client.receive_response())))
    ctx.check([r.result for r in results] == ["Answer 1.", "Answer 2.", "Answer 3."], "three answers")
    ctx.check([r.num_turns for r in results] == [1, 1, 1], "num_turns is per turn")
    ctx.check(len({r.session_id for r in results}) == 1, "one session id")
    ctx.check(all(init_of(t) for t in ctx.turns), "init on every turn")


@scenario("permissions", lambda ws: [
    step(calls=[ToolCall(name="Write", id="toolu_write", input={"file_path": str(ws / "a.txt"), "content": "model\n"})],
         turn=0, last_user_contains="PERM-1"),
    step(calls=[ToolCall(name="Bash", id="toolu_bash", input={"command": "touch denied.txt"})],
         turn=1, last_user_is_tool_result=True),
    step("Done.", turn=2, last_user_contains="not on my watch"),
])
async def permissions(opts: ClaudeAgentOptions, ctx: Ctx) -> None:
    asked: list[str] = []

    async def decide(name: str, data: dict[str, Any], context: sdk.ToolPermissionContext) -> Any:
        asked.append(name)
        if name == "Write":
            return sdk.PermissionResultAllow(updated_input={**data, "content": "from the callback\n"})
        return sdk.PermissionResultDeny(message="not on my watch")

    async with ClaudeSDKClient(options=replace(opts, can_use_tool=decide)) as client:
        await client.query("PERM-1 write a file, then run a command")
        result = result_of(await ctx.turn(client.receive_response()))
    ctx.check(asked == ["Write", "Bash"], f"asked Write then Bash (asked {asked})")
    ctx.check((ctx.ws / "a.txt").exists() and (ctx.ws / "a.txt").read_text() == "from the callback\n", "updated_input")
    ctx.check(not (ctx.ws / "denied.txt").exists(), "the denied command did not run")
    ctx.check(result.subtype == "success" and result.result == "Done.", "the turn went on after the deny")
    ctx.check([d.get("tool_use_id") for d in result.permission_denials or []] == ["toolu_bash"], "one denial listed")


@scenario("interrupt", lambda ws: [
    step("never sent", name="slow", hold="slow", last_user_contains="INT-1"),
    step("Back again.", last_user_contains="INT-2"),
])
async def interrupt(opts: ClaudeAgentOptions, ctx: Ctx) -> None:
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("INT-1 a slow question")
        with anyio.fail_after(30):
            while not ctx.used("slow"):  # the model request is being held
                await anyio.sleep(0.05)
        await client.interrupt()
        first = result_of(await ctx.turn(client.receive_response()))
        await client.query("INT-2 after the interrupt")
        second = result_of(await ctx.turn(client.receive_response()))
    ctx.check(first.is_error and first.subtype == "error_during_execution", "interrupted turn is an error result")
    ctx.check(first.terminal_reason == "aborted_streaming", "terminal_reason aborted_streaming")
    ctx.check(second.subtype == "success" and second.result == "Back again.", "next turn answers")


@scenario("accept_edits", lambda ws: [
    step(calls=[ToolCall(name="Read", id="toolu_read", input={"file_path": str(ws / "notes.txt")})],
         turn=0, last_user_contains="EDIT-1"),
    step(calls=[ToolCall(name="Edit", id="toolu_edit", input={
        "file_path": str(ws / "notes.txt"), "old_string": "first line", "new_string": "edited line"})],
         turn=1, last_user_contains="first line"),
    step("Edited.", turn=2, last_user_is_tool_result=True),
])
async def accept_edits(opts: ClaudeAgentOptions, ctx: Ctx) -> None:
    async with ClaudeSDKClient(options=opts) as client:  # no can_use_tool: an edit that asked would be refused
        await client.set_permission_mode("acceptEdits")
        await client.query("EDIT-1 change the notes")
        got = await ctx.turn(client.receive_response())
    ctx.check(init_of(got).get("permissionMode") == "acceptEdits", "init says acceptEdits")
    ctx.check((ctx.ws / "notes.txt").read_text() == "edited line\n", "the edit ran without asking")
    ctx.check(result_of(got).result == "Edited.", "result is the answer")


@scenario("hook_deny", lambda ws: [
    step("Trying.", [ToolCall(name="Bash", id="toolu_hooked", input={"command": "touch hooked.txt"})],
         turn=0, last_user_contains="HOOK-1"),
    step("Blocked, then.", turn=1, last_user_contains="Blocked by the program"),
])
async def hook_deny(opts: ClaudeAgentOptions, ctx: Ctx) -> None:
    seen: list[dict[str, Any]] = []

    async def guard(data: Any, tool_use_id: str | None, context: Any) -> Any:
        seen.append(dict(data))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "Blocked by the program"}}

    hooks: Any = {"PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[guard])]}
    async with ClaudeSDKClient(options=replace(opts, hooks=hooks)) as client:
        await client.query("HOOK-1 touch a file")
        result = result_of(await ctx.turn(client.receive_response()))
    ctx.check([(d.get("tool_name"), d.get("tool_use_id")) for d in seen] == [("Bash", "toolu_hooked")],
              "the hook saw the Bash call")
    ctx.check(bool(seen) and Path(seen[0].get("transcript_path", "")).is_file(), "transcript_path is a file")
    ctx.check(not (ctx.ws / "hooked.txt").exists(), "the blocked command did not run")
    ctx.check(result.result == "Blocked, then.", "the model read the hook's reason")
    ctx.check(len(result.permission_denials or []) == 1, "the block counts as a denial")


@scenario("sdk_mcp", lambda ws: [
    step(calls=[ToolCall(name="mcp__calc__add", id="toolu_add", input={"a": 2, "b": 3})],
         turn=0, last_user_contains="MCP-1"),
    step("2 + 3 = 5.", turn=1, last_user_contains="sum=5"),
])
async def sdk_mcp(opts: ClaudeAgentOptions, ctx: Ctx) -> None:
    calls: list[dict[str, Any]] = []

    @sdk.tool("add", "Add two integers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    calc = sdk.create_sdk_mcp_server("calc", "1.2.3", [add])
    async with ClaudeSDKClient(options=replace(opts, mcp_servers={"calc": calc},
                                               allowed_tools=["mcp__calc__add"])) as client:
        await client.query("MCP-1 add 2 and 3")
        got = await ctx.turn(client.receive_response())
        status = await client.get_mcp_status()
    ctx.check(calls == [{"a": 2, "b": 3}], "the program's tool ran once")
    ctx.check("mcp__calc__add" in init_of(got).get("tools", []), "init lists mcp__calc__add")
    ctx.check(result_of(got).result == "2 + 3 = 5.", "result is the answer")
    servers: Any = status.get("mcpServers") or [{}]
    ctx.check((servers[0].get("name"), servers[0].get("status")) == ("calc", "connected"), "mcp_status: connected")


def _delegate(name: str) -> ToolCall:
    return ToolCall(name=name, id="toolu_task", input={"subagent_type": "reviewer", "description": "Review the notes",
                                                       "prompt": "Review notes.txt", "run_in_background": False})


@scenario("sdk_agent", lambda ws: [
    step("Asking the reviewer.", [_delegate("Agent")], name="via-Agent", optional=True,  # Claude Code's API name
         turn=0, last_user_contains="AGENT-1", tools_include=["Agent"]),
    step("Asking the reviewer.", [_delegate("Task")], name="via-Task", optional=True,  # agentcli's
         turn=0, last_user_contains="AGENT-1", tools_include=["Task"]),
    step(calls=[ToolCall(name="Read", id="toolu_sub_read", input={"file_path": str(ws / "notes.txt")})],
         system_contains="REVIEWER-SYS", last_user_is_tool_result=False),
    step("The notes look fine.", system_contains="REVIEWER-SYS", last_user_contains="first line"),
    step("Reviewed: fine.", turn=1, last_user_contains="The notes look fine."),
])
async def sdk_agent(opts: ClaudeAgentOptions, ctx: Ctx) -> None:
    reviewer = sdk.AgentDefinition(description="Reviews notes", prompt="REVIEWER-SYS You review.", tools=["Read"],
                               model="inherit")
    got = await ctx.turn(query(prompt="AGENT-1 have the reviewer look at the notes",
                               options=replace(opts, agents={"reviewer": reviewer})))
    ctx.check("reviewer" in init_of(got).get("agents", []), "init lists the reviewer")
    started = [m for m in got if isinstance(m, sdk.TaskStartedMessage)]
    ctx.check([m.tool_use_id for m in started] == ["toolu_task"], "task_started names the call")
    done = [m.status for m in got if isinstance(m, sdk.TaskNotificationMessage)]
    ctx.check(done == ["completed"], f"task_notification completed (got {done})")
    ctx.check(any(getattr(m, "parent_tool_use_id", None) == "toolu_task" for m in got), "subagent messages streamed")
    ctx.check(result_of(got).result == "Reviewed: fine.", "result is the answer")


@scenario("json_schema", lambda ws: [
    step(calls=[ToolCall(name="StructuredOutput", id="toolu_so", input={"answer": "forty-two", "score": 42})],
         name="via-tool", optional=True, turn=0, tools_include=["StructuredOutput"]),  # Claude Code's way
    step('{"answer": "forty-two", "score": 42}', name="via-text", optional=True,  # agentcli's
         turn=0, last_user_contains="JSON-1"),
    step("Done.", name="after-tool", optional=True, last_user_is_tool_result=True),
])
async def json_schema(opts: ClaudeAgentOptions, ctx: Ctx) -> None:
    got = await ctx.turn(query(prompt="JSON-1 what is the answer?",
                               options=replace(opts, output_format={"type": "json_schema", "schema": SCHEMA})))
    result = result_of(got)
    ctx.check(result.subtype == "success" and not result.is_error, "success")
    ctx.check(result.structured_output == {"answer": "forty-two", "score": 42}, "structured_output")
    ctx.check(json.loads(result.result or "null") == result.structured_output, "result is the JSON")


# Running and reporting.


@dataclass
class Row:
    passed: bool
    wall: float
    fields: dict[str, str]  # what is compared between CLIs
    notes: list[str]  # failed checks and the CLI's last stderr lines


def kind(message: Any) -> str:
    name = f"System:{message.subtype}" if type(message) is SystemMessage else type(message).__name__
    return name.removesuffix("Message") + ("(sub)" if getattr(message, "parent_tool_use_id", None) else "")


def sequence(turns: list[list[Any]]) -> str:
    runs = [[(k, len(list(g))) for k, g in groupby(kind(m) for m in turn)] for turn in turns]
    return " | ".join(" ".join(k if n == 1 else f"{k}×{n}" for k, n in turn) for turn in runs)


def describe(ctx: Ctx) -> dict[str, str]:
    results = [m for t in ctx.turns for m in t if isinstance(m, ResultMessage)]
    outcome = [f"{r.subtype}/{r.is_error}/{r.num_turns}/{r.terminal_reason}/{len(r.permission_denials or [])}"
               for r in results]
    structured = [json.dumps(r.structured_output) for r in results if r.structured_output is not None]
    requests, steps = ctx.server.requests, [s for s, _ in ctx.server.steps]
    catch = sum(1 for r in requests if r.step_index is not None and steps[r.step_index].name == "catch-all")
    unmatched = sorted({r.path for r in requests if r.step_index is None})
    extra = (f" (+{catch} catch-all)" if catch else "") + (f" (unmatched: {', '.join(unmatched)})" if unmatched else "")
    return {"messages": sequence(ctx.turns), "results": " ; ".join(outcome) or "-",
            "structured_output": " ; ".join(structured) or "-", "requests": f"{len(requests)}{extra}",
            "checks": "; ".join(ctx.failed) or "all passed"}


def cli_env(root: Path, url: str) -> dict[str, str]:
    home = root / "home"
    (home / ".claude").mkdir(parents=True)
    (root / "tmp").mkdir()
    return {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "TMPDIR": str(root / "tmp"),
            **{f"XDG_{d}_HOME": str(home / d.lower()) for d in ("CONFIG", "DATA", "STATE", "CACHE")},
            "ANTHROPIC_API_KEY": "sk-ant-parity-fake", "ANTHROPIC_BASE_URL": url, "AGENTCLI_LLM__MAX_RETRIES": "0",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


async def run_one(sc: Scenario, cli: str) -> Row:
    name, script, body = sc
    with tempfile.TemporaryDirectory(prefix=f"sdk-parity-{name}-") as tmp:
        root = Path(tmp).resolve()
        (ws := root / "ws").mkdir()
        (ws / "notes.txt").write_text("first line\n")
        steps = script(ws)
        with FakeLLMServer(steps) as server:
            ctx = Ctx(ws, server)
            opts = ClaudeAgentOptions(cli_path=cli, cwd=str(ws), env=cli_env(root, server.base_url),
                                      stderr=ctx.stderr.append)
            start = time.monotonic()
            try:
                with anyio.fail_after(TIMEOUT):
                    await body(opts, ctx)
            except Exception as exc:  # a failed scenario is a row, not the end of the run
                ctx.failed.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200])
            finally:
                for held in {s.hold for s in steps if s.hold}:
                    server.release(held)
            wall, fields = time.monotonic() - start, describe(ctx)
    notes = [f"failed: {f}" for f in ctx.failed] + [f"stderr: {line[:160]}" for line in ctx.stderr[-5:]]
    return Row(not ctx.failed, wall, fields, notes)


def print_rows(name: str, rows: dict[str, Row]) -> None:
    w = max(len(c) for c in rows)
    print(f"\n== {name}\n  {'cli':<{w}}  check  wall    results: subtype/is_error/num_turns/terminal_reason/denials"
          "  | structured_output | model requests")
    for cli, row in rows.items():
        f = row.fields
        print(f"  {cli:<{w}}  {'PASS' if row.passed else 'FAIL'}   {row.wall:5.1f}s  {f['results']}  "
              f"| {f['structured_output']} | {f['requests']}")
    for cli, row in rows.items():
        print(f"  {cli:<{w}}  messages: {row.fields['messages']}")
        for line in row.notes if not row.passed else []:
            print(f"  {cli:<{w}}  {line}")


def only_loopback() -> bool:
    """Whether this process's network namespace has no interface but `lo`."""
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    return {line.split(":")[0].strip() for line in lines} == {"lo"}


def enter_loopback_namespace(script: Path | None = None) -> None:
    """Return only inside a loopback-only network namespace; else re-exec `script` (this one by default) with the
    same arguments into one, or exit with one line."""
    if only_loopback():
        return
    if os.environ.get(NETNS_MARK):
        sys.exit("sdk_parity: still not in a loopback-only network namespace; refusing to run Claude Code")
    if not (shutil.which("unshare") and shutil.which("ip")) or subprocess.run(
            ["unshare", "-rn", "true"], capture_output=True, check=False).returncode != 0:
        sys.exit("sdk_parity: cannot make a loopback-only network namespace (unshare -rn); refusing to run Claude Code")
    os.environ[NETNS_MARK] = "1"
    argv = [sys.executable, str((script or Path(__file__)).resolve()), *sys.argv[1:]]
    os.execvp("unshare", ["unshare", "-rn", "bash", "-c", 'ip link set lo up && exec "$@"', "bash", *argv])


def default_cli() -> str:
    found = Path(sys.executable).with_name("agentcli")
    return str(found) if found.exists() else shutil.which("agentcli") or "agentcli"


async def run_all(clis: dict[str, str], chosen: list[Scenario]) -> None:
    table: dict[str, dict[str, Row]] = {}
    for sc in chosen:
        table[sc[0]] = {label: await run_one(sc, path) for label, path in clis.items()}
        print_rows(sc[0], table[sc[0]])
    print("\n== summary")
    for label in clis:
        print(f"  {label}: {sum(rows[label].passed for rows in table.values())}/{len(table)} scenarios passed")
    if len(clis) < 2:
        return
    first, second = list(clis)
    print(f"\n== differences ({first} vs {second}; wall time not compared)")
    for name, rows in table.items():
        a, b = rows[first].fields, rows[second].fields
        diffs = [key for key in a if a[key] != b[key]]
        print(f"  {name}:" + ("" if diffs else " none"))
        for key in diffs:
            print(f"    {key}:\n      {first}: {a[key]}\n      {second}: {b[key]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=default_cli(), help="agentcli's console script (default: this venv's)")
    parser.add_argument("--claude-code", metavar="PATH", help="Claude Code's binary (run only in a loopback netns)")
    parser.add_argument("--only", help="comma-separated scenario names: " + ",".join(s[0] for s in SCENARIOS))
    args = parser.parse_args()
    chosen = [s for s in SCENARIOS if not args.only or s[0] in args.only.split(",")]
    if args.claude_code:
        if not os.access(args.claude_code, os.X_OK):
            sys.exit(f"sdk_parity: {args.claude_code} is not an executable file")
        enter_loopback_namespace()
    for key in list(os.environ):  # the CLIs see only the environment cli_env gives (plus PATH and the like)
        if key.startswith(("ANTHROPIC_", "AGENTCLI_", "OPENAI_", "CLAUDE")):
            del os.environ[key]
    clis = {"agentcli": args.cli, **({"claude-code": args.claude_code} if args.claude_code else {})}
    print(f"sdk_parity: {', '.join(f'{k}={v}' for k, v in clis.items())}; scenarios: {len(chosen)}"
          + ("; loopback-only network namespace" if only_loopback() else ""), flush=True)
    anyio.run(run_all, clis, chosen)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
