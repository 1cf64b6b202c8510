"""The TypeScript Claude Agent SDK's scenarios, the Python half: for each one the fake model's script, the hold the
SDK code waits on, and the checks on what the model was sent; `run` serves the script on the scripted fake server
(`agentcli.testing.fake_llm`, in this process) and runs the SDK code (`run.mjs`, by name) with node against a CLI.

The same scenarios run against agentcli in tests/e2e/test_agent_sdk_ts.py and against both agentcli and the Claude
Code the SDK ships in bench/sdk_parity_ts.py, so the scripts are tolerant of either: steps match on the prompt's
marker, the turn, the system prompt or the tools offered; optional steps cover what differs (Claude Code's `Agent`
tool is agentcli's `Task`, its `StructuredOutput` tool agentcli's answer in text); a last catch-all answers any
other request (a title, a probe) so a CLI is never left waiting.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.testing.fake_llm import FakeLLMServer, Match, RecordedRequest, Reply, Step, ToolCall

TS_DIR = Path(__file__).resolve().parent
SDK_DIR = TS_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk"
PLUGIN = TS_DIR.parents[1] / "fixtures" / "plugins" / "marketplace" / "plugins" / "feature-dev"
INSTALL = f"npm ci --omit=optional --prefix {TS_DIR}"  # the SDK without its bundled Claude Code binary
NODE_INSTALL = "apt-get install -y nodejs npm"  # Debian's Node.js (20 or newer) and npm
TIMEOUT = 120.0


def step(text: str = "", calls: list[ToolCall] | None = None, *, name: str | None = None, optional: bool = False,
         hold: str | None = None, **match: Any) -> Step:
    """A step answering a request that offers tools (not a bare probe) and matches `match`."""
    return Step(name=name, optional=optional, hold=hold, match=Match(no_tools=False, **match),
                reply=Reply(text=text, tool_calls=calls or []))


CATCH_ALL = Step(name="catch-all", optional=True, times=None, reply=Reply(text="catch-all reply"))
Checks = Callable[[list[RecordedRequest], Path], list[str]]


@dataclass(frozen=True)
class Scenario:
    """One scenario: its name (the function in run.mjs), the fake model's script for a workspace, the hold whose
    request the SDK code waits for, and checks on the requests the model received."""

    name: str
    steps: Callable[[Path], list[Step]]
    hold: str | None = None
    checks: Checks = field(default=lambda requests, ws: [])


def system_text(request: RecordedRequest) -> str:
    """A request's system prompt as text (Anthropic's string or blocks)."""
    system = request.body.get("system") if isinstance(request.body, dict) else None
    if isinstance(system, list):
        return "\n".join(str(block.get("text", "")) for block in system if isinstance(block, dict))
    return str(system or "")


def tool_names(request: RecordedRequest) -> list[str]:
    return [str(tool.get("name")) for tool in request.body.get("tools") or []]


def _reviewer_offered_only_read(requests: list[RecordedRequest], ws: Path) -> list[str]:
    offered = [tool_names(r) for r in requests if "REVIEWER-SYS" in system_text(r)]
    if not offered:
        return ["the reviewer made no model request"]
    return [f"the reviewer was offered {names}, not exactly ['Read']" for names in offered if names != ["Read"]]


def _delegate(name: str) -> ToolCall:
    return ToolCall(name=name, id="toolu_task", input={"subagent_type": "reviewer", "description": "Review the notes",
                                                       "prompt": "Review notes.txt", "run_in_background": False})


def _found(tool: str, marker: str) -> list[Step]:
    """Claude Code and agentcli both list MCP tools only by name until ToolSearch fetched them: that call first."""
    return [step(calls=[ToolCall(name="ToolSearch", id="toolu_search", input={"query": f"select:{tool}"})],
                 name="via-ToolSearch", optional=True, any_message_contains=marker, tools_include=["ToolSearch"],
                 tools_exclude=[tool])]


SCHEMA_ANSWER = {"answer": "forty-two", "score": 42}

SCENARIOS: list[Scenario] = [
    Scenario("plain", lambda ws: [step("Hello from the fake model.", last_user_contains="PLAIN-1")]),
    Scenario("system_prompt", lambda ws: [
        step("The custom role is in place.", system_contains="CUSTOM-ROLE", last_user_contains="SYS-1")]),
    Scenario("append_system_prompt", lambda ws: [
        step("The appended note is in place.", system_contains="APPENDED-NOTE", last_user_contains="APPEND-1")]),
    Scenario("multiturn", lambda ws: [step(f"Answer {n}.", last_user_contains=f"MT-{n}") for n in (1, 2, 3)]),
    Scenario("permissions", lambda ws: [
        step(calls=[ToolCall(name="Write", id="toolu_write",
                             input={"file_path": str(ws / "a.txt"), "content": "model\n"})],
             turn=0, last_user_contains="PERM-1"),
        step(calls=[ToolCall(name="Bash", id="toolu_bash", input={"command": "touch denied.txt"})],
             turn=1, last_user_is_tool_result=True),
        step("Done.", turn=2, last_user_contains="not on my watch"),
    ]),
    Scenario("interrupt", lambda ws: [
        step("never sent", name="slow", hold="slow", last_user_contains="INT-1"),
        step("Back again.", last_user_contains="INT-2"),
    ], hold="slow"),
    Scenario("accept_edits", lambda ws: [
        step(calls=[ToolCall(name="Read", id="toolu_read", input={"file_path": str(ws / "notes.txt")})],
             turn=0, last_user_contains="EDIT-1"),
        step(calls=[ToolCall(name="Edit", id="toolu_edit", input={
            "file_path": str(ws / "notes.txt"), "old_string": "first line", "new_string": "edited line"})],
             turn=1, last_user_contains="first line"),
        step("Edited.", turn=2, last_user_is_tool_result=True),
    ]),
    Scenario("hook_deny", lambda ws: [
        step("Trying.", [ToolCall(name="Bash", id="toolu_hooked", input={"command": "touch hooked.txt"})],
             turn=0, last_user_contains="HOOK-1"),
        step("Blocked, then.", turn=1, last_user_contains="Blocked by the program"),
    ]),
    Scenario("sdk_mcp", lambda ws: [
        *_found("mcp__calc__add", "MCP-1"),
        step(calls=[ToolCall(name="mcp__calc__add", id="toolu_add", input={"a": 2, "b": 3})],
             any_message_contains="MCP-1", tools_include=["mcp__calc__add"]),
        step("2 + 3 = 5.", last_user_contains="sum=5"),
    ]),
    Scenario("stdio_mcp", lambda ws: [
        *_found("mcp__time__get_current_time", "TIME-1"),
        step(calls=[ToolCall(name="mcp__time__get_current_time", id="toolu_time", input={"timezone": "UTC"})],
             any_message_contains="TIME-1", tools_include=["mcp__time__get_current_time"]),
        step("It is now in UTC.", last_user_contains="datetime"),
    ]),
    Scenario("plugins_initialize", lambda ws: [
        step(calls=[ToolCall(name="Task", id="toolu_plugin_task", input={
            "subagent_type": "feature-dev:code-explorer", "description": "Map the parser", "prompt": "Map it"})],
             turn=0, last_user_contains="PLUG-1", name="delegate"),
        step("parse splits words.", system_contains="You map existing code for a developer", name="explorer"),
        step("The explorer mapped it.", turn=1, last_user_contains="parse splits words."),
    ]),
    Scenario("sdk_agent", lambda ws: [
        step("Asking the reviewer.", [_delegate("Agent")], name="via-Agent", optional=True,  # Claude Code's name
             turn=0, last_user_contains="AGENT-1", tools_include=["Agent"]),
        step("Asking the reviewer.", [_delegate("Task")], name="via-Task", optional=True,  # agentcli's
             turn=0, last_user_contains="AGENT-1", tools_include=["Task"]),
        step(calls=[ToolCall(name="Read", id="toolu_sub_read", input={"file_path": str(ws / "notes.txt")})],
             system_contains="REVIEWER-SYS", last_user_is_tool_result=False),
        step("The notes look fine.", system_contains="REVIEWER-SYS", last_user_contains="first line"),
        step("Reviewed: fine.", turn=1, last_user_contains="The notes look fine."),
    ], checks=_reviewer_offered_only_read),
    Scenario("json_schema", lambda ws: [
        step(calls=[ToolCall(name="StructuredOutput", id="toolu_so", input=SCHEMA_ANSWER)],
             name="via-tool", optional=True, turn=0, tools_include=["StructuredOutput"]),  # Claude Code's way
        step(json.dumps(SCHEMA_ANSWER), name="via-text", optional=True, turn=0, last_user_contains="JSON-1"),
        step("Done.", name="after-tool", optional=True, last_user_is_tool_result=True),
    ]),
    Scenario("deny_interrupt", lambda ws: [
        step(calls=[ToolCall(name="Bash", id="toolu_stop", input={"command": "touch stopped.txt"})],
             turn=0, last_user_contains="STOP-1"),
        step("Here again.", last_user_contains="STOP-2"),
    ]),
    Scenario("rewind_files", lambda ws: [
        step(calls=[ToolCall(name="Read", id="toolu_read", input={"file_path": str(ws / "notes.txt")})],
             turn=0, last_user_contains="REW-1"),
        step(calls=[
            ToolCall(name="Write", id="toolu_write", input={"file_path": str(ws / "sub" / "dir" / "new.txt"),
                                                            "content": "new\n"}),
            ToolCall(name="Edit", id="toolu_edit", input={"file_path": str(ws / "notes.txt"),
                                                          "old_string": "first line", "new_string": "edited line"}),
            ToolCall(name="Bash", id="toolu_bash", input={"command": "printf 'made\\n' > made.txt && rm data.bin"}),
        ], turn=1, last_user_contains="first line"),
        step("Changed.", turn=2, last_user_is_tool_result=True),
    ]),
    Scenario("resume_fork", lambda ws: [
        step("Remembered: teal.", turn=0, last_user_contains="RES-1"),
        step("It was teal.", last_user_contains="RES-2", any_message_contains="Remembered: teal."),
    ]),
]
BY_NAME = {s.name: s for s in SCENARIOS}


@dataclass
class Outcome:
    """What one run of a scenario gave: the failed checks (the SDK's and the requests'), what the SDK saw, the
    model requests, the wall time."""

    failed: list[str]
    turns: list[list[str]]
    results: list[dict[str, Any]]
    stderr: list[str]
    requests: list[RecordedRequest]
    wall: float
    catch_all: int = 0  # requests no step of the scenario answered (a title, a probe): the catch-all did
    data: dict[str, Any] = field(default_factory=dict)  # what the scenario handed over (`ctx.data` in run.mjs)

    @property
    def passed(self) -> bool:
        return not self.failed


def missing() -> str | None:
    """Why the scenarios cannot run here (no node, the SDK not installed) with the command that fixes it, or None."""
    if shutil.which("node") is None:
        return f"node is not installed: {NODE_INSTALL}, then {INSTALL}"
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    major = version.lstrip("v").split(".")[0]
    if not major.isdigit() or int(major) < 18:
        return f"node {version or '(unknown version)'} is too old for the SDK (18.14 or newer): {NODE_INSTALL}"
    if not (SDK_DIR / "package.json").is_file():
        return f"the TypeScript Claude Agent SDK is not installed: {INSTALL}"
    return None


def cli_env(root: Path, url: str) -> dict[str, str]:
    """A CLI's environment: its own HOME and config folders under `root`, the fake server, no retries, no traffic
    but the model's (Claude Code's switches included)."""
    home = root / "home"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (root / "tmp").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_", "OPENAI_", "CLAUDE"))}
    return {**env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "TMPDIR": str(root / "tmp"),
            **{f"XDG_{d}_HOME": str(home / d.lower()) for d in ("CONFIG", "DATA", "STATE", "CACHE")},
            "ANTHROPIC_API_KEY": "sk-ant-ts-fake", "ANTHROPIC_BASE_URL": url, "AGENTCLI_LLM__MAX_RETRIES": "0",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


def run(scenario: Scenario, cli: str, root: Path) -> Outcome:
    """Run `scenario` with the SDK against `cli` (an executable), in a workspace under `root`."""
    ws = root / "ws"
    ws.mkdir(parents=True)
    (ws / "notes.txt").write_text("first line\n")
    steps = [*scenario.steps(ws), CATCH_ALL]
    with FakeLLMServer(steps) as server:
        config = {"scenario": scenario.name, "cli": cli, "cwd": str(ws), "env": cli_env(root, server.base_url),
                  "extra": {"python": sys.executable, "plugin": str(PLUGIN)}}
        started = time.monotonic()
        out, err = _node(config, server, scenario.hold, root)
        wall = time.monotonic() - started
        requests = server.requests
    outcome = _read(out, err)
    failed = list(outcome.get("failed", [])) + scenario.checks(requests, ws)
    caught = sum(1 for r in requests if r.step_index == len(steps) - 1)
    return Outcome(failed, outcome.get("turns", []), outcome.get("results", []), outcome.get("stderr", []),
                   requests, wall, caught, outcome.get("data") or {})


def _node(config: dict[str, Any], server: FakeLLMServer, hold: str | None, root: Path) -> tuple[str, str]:
    """Run run.mjs in its own process group (ended whole if it overruns, the CLI it started with it); its stdout
    and stderr. Its stdin stays open for the "held" line."""
    with open(root / "node.out", "w+") as out, open(root / "node.err", "w+") as err:
        node = subprocess.Popen(["node", str(TS_DIR / "run.mjs"), json.dumps(config)], cwd=TS_DIR, text=True,
                                stdin=subprocess.PIPE, stdout=out, stderr=err, start_new_session=True)
        if hold:
            threading.Thread(target=_tell_held, args=(server, hold, node), daemon=True).start()
        overran = ""
        try:
            node.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(node.pid, signal.SIGKILL)
            node.wait()
            overran = f"node ran past {TIMEOUT:.0f} s and was stopped\n"
        finally:
            if hold:
                server.release(hold)
            if node.stdin is not None:
                with contextlib.suppress(OSError):
                    node.stdin.close()
        out.seek(0)
        err.seek(0)
        return out.read(), overran + err.read()


def _tell_held(server: FakeLLMServer, hold: str, node: subprocess.Popen[str]) -> None:
    """Write "held" to the SDK code once the fake model holds a request on `hold` (waited for, never guessed)."""
    try:
        server.wait_until(lambda s: any(st.hold == hold and uses for st, uses in s.steps), timeout=TIMEOUT)
        assert node.stdin is not None
        node.stdin.write("held\n")
        node.stdin.flush()
    except (TimeoutError, OSError, ValueError):
        return  # the scenario's own checks say what did not happen


def _read(out: str, err: str) -> dict[str, Any]:
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        tail = " | ".join(err.strip().splitlines()[-3:])
        return {"failed": [f"the SDK code printed no outcome (node: {tail or 'no output'})"]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result
