"""Subagents share the main agent's prompt-cache prefix, checked on the request bodies the fake server received
from the real CLI: every subagent's tool list is a byte-identical prefix of the main agent's, the Task tool's
description is the same at every depth, and a cache breakpoint ends the read-only tools."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentcli.subagents.messaging.tools import ListAgentsTool, SendMessageTool
from agentcli.subagents.task_tool import TASK_TOOL_CLASSES
from agentcli.testing.fake_llm import FakeLLMServer, Match, RecordedRequest, Reply, Script, Step, ToolCall
from agentcli.tools import ToolSearchTool
from agentcli.tools.base import listing_rank
from agentcli.tools.registry import ALL_TOOLS, READ_ONLY_TOOLS
from tests.e2e.helpers import MAIN, cli_env, run_cli

#: Every tool class the main agent is given here, by name (their traits decide the order and the break).
CLASSES = {cls.name: cls for cls in (*ALL_TOOLS.values(), *TASK_TOOL_CLASSES.values(), SendMessageTool,
                                     ListAgentsTool, ToolSearchTool)}


def _task(description: str, subagent_type: str) -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": f"do: {description}",
                                        "subagent_type": subagent_type})


def _sub(description: str) -> str:
    return f"# Task\n{description}"


def _system(body: dict[str, Any]) -> str:
    return "".join(str(block.get("text", "")) for block in body.get("system") or [])


def _first(server: FakeLLMServer, mark: str) -> RecordedRequest:
    return next(r for r in server.requests if mark in _system(r.body))


def _wire(tools: list[dict[str, Any]]) -> str:
    """The tools as they went on the wire (the server parsed the body; key order is kept)."""
    return json.dumps(tools, ensure_ascii=False)


def _has(body: dict[str, Any]) -> set[str]:
    """The tools an agent has: those listed, and the deferred ones its system prompt names (ToolSearch loads them)."""
    deferred = _system(body).split("# Deferred tools\n", 1)[-1] if "# Deferred tools\n" in _system(body) else ""
    return {t["name"] for t in body["tools"]} | set(re.findall(r"^- ([\w-]+): ", deferred, re.MULTILINE))


def _task_description(body: dict[str, Any]) -> str:
    return next(str(t["description"]) for t in body["tools"] if t["name"] == "Task")


def test_subagent_tool_lists_are_prefixes_of_the_main_agents(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    agents = ws / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    (agents / "worker.md").write_text("---\nname: worker\ndescription: A worker with every tool.\n---\nWork.\n")
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Check the general", "general"), _task("Find the loader", "explore")])),
        Step(match=Match(system_contains=_sub("Check the general"), turn=0),
             reply=Reply(tool_calls=[_task("Nested worker job", "worker")])),
        Step(match=Match(system_contains=_sub("Nested worker job"), turn=0), reply=Reply(text="worker done")),
        Step(match=Match(system_contains=_sub("Check the general"), turn=1), reply=Reply(text="general done")),
        Step(match=Match(system_contains=_sub("Find the loader"), turn=0), reply=Reply(text="explore done")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="all done")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "go"],
                       cli_env("anthropic", server, tmp_path, AGENTCLI_TASK_TOOL__MAX_DEPTH="3"))
        assert proc.returncode == 0, proc.stderr
        main = _first(server, MAIN).body
        general = _first(server, _sub("Check the general")).body
        worker = _first(server, _sub("Nested worker job")).body
        explore = _first(server, _sub("Find the loader")).body
    server.assert_done()
    tools = main["tools"]

    # A subagent with every tool (general at depth 1, a file-defined type at depth 2) sends the main agent's
    # list byte for byte, Task included; a read-only type sends its read-only head, byte for byte.
    for body in (general, worker):
        assert _wire(body["tools"]) == _wire(tools)
    assert _wire(explore["tools"]) == _wire(tools[: len(explore["tools"])])
    assert set(READ_ONLY_TOOLS) <= _has(explore)
    assert not any(CLASSES[t["name"]].mutating for t in explore["tools"])

    # One Task description at every depth (what a caller may not use is refused when it calls).
    assert _task_description(main) == _task_description(general) == _task_description(worker)
    assert "- general (inherit, can edit and run commands)" in _task_description(worker)

    # The breakpoints: after the read-only head (the read-only tools and those every agent has, what the
    # explore subagent was given), after the last tool, after the stable part of the system prompt (the date
    # and git status come after it), on the last message: four, the API's limit.
    head = sum(1 for t in tools if listing_rank(CLASSES[t["name"]]) <= 1)
    assert head == len(explore["tools"]) and tools[head - 1]["name"] == "ToolSearch"
    assert {t["name"] for t in tools[:head]} == {t["name"] for t in explore["tools"]}
    assert [i for i, t in enumerate(tools) if "cache_control" in t] == [head - 1, len(tools) - 1]
    stable, current = main["system"]
    assert "cache_control" in stable and "cache_control" not in current
    assert "Date:" in current["text"] and "Git status" in current["text"] and "Date:" not in stable["text"]
    for body in (main, general, worker, explore):
        assert json.dumps(body).count('"cache_control"') <= 4
