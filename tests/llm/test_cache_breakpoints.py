"""Where the Anthropic adapter puts its cache breakpoints: after the read-only tools, after the last tool, after
the stable part of the system prompt, on the last message; never more than the API's four."""

from __future__ import annotations

import json
from typing import Any

from agentcli.llm.anthropic import request_params
from agentcli.llm.base import Message, ModelRequest, ToolResultBlock, ToolSpec, ToolUseBlock

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
STABLE = "You are a test agent.\n\n# Environment\n- Workspace: /w"
CURRENT = "\n\n# This session\n- Date: 2026-11-22\n- Git status at start:\n```\n(clean)\n```\n"


def _request(tools: list[ToolSpec], system_stable: int) -> ModelRequest:
    messages = [
        Message.user("hi"),
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="Read", input={})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="text")]),
    ]
    return ModelRequest(model="m", system=STABLE + CURRENT, messages=messages, tools=tools,
                        system_stable=system_stable)


def _marked(params: dict[str, Any]) -> int:
    return json.dumps(params).count('"cache_control"')


def test_four_breakpoints_at_most_and_where_they_sit() -> None:
    tools = [ToolSpec("Read", "r", SCHEMA), ToolSpec("Grep", "g", SCHEMA, cache_break=True),
             ToolSpec("Bash", "b", SCHEMA), ToolSpec("Task", "t", SCHEMA)]
    params = request_params(_request(tools, len(STABLE)))
    marked = [t["name"] for t in params["tools"] if "cache_control" in t]
    assert marked == ["Grep", "Task"]
    assert params["system"] == [
        {"type": "text", "text": STABLE, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": CURRENT},  # the date and git status follow the cached part
    ]
    assert "cache_control" in params["messages"][-1]["content"][-1]
    assert _marked(params) == 4
    assert _marked(request_params(_request(tools, len(STABLE)), caching=False)) == 0


def test_one_break_when_the_read_only_tools_are_all_there_is() -> None:
    tools = [ToolSpec("Read", "r", SCHEMA), ToolSpec("Grep", "g", SCHEMA, cache_break=True)]
    params = request_params(_request(tools, len(STABLE)))
    assert [t["name"] for t in params["tools"] if "cache_control" in t] == ["Grep"]
    assert _marked(params) == 3


def test_a_system_prompt_without_a_split_is_one_block() -> None:
    params = request_params(_request([ToolSpec("Bash", "b", SCHEMA)], 0))
    assert params["system"] == [{"type": "text", "text": STABLE + CURRENT, "cache_control": {"type": "ephemeral"}}]
    params = request_params(_request([], len(STABLE + CURRENT)))  # nothing after the stable part
    assert len(params["system"]) == 1 and "tools" not in params


def test_only_the_last_break_counts_when_several_tools_ask() -> None:
    tools = [ToolSpec("A", "a", SCHEMA, cache_break=True), ToolSpec("B", "b", SCHEMA, cache_break=True),
             ToolSpec("C", "c", SCHEMA)]
    params = request_params(_request(tools, len(STABLE)))
    assert [t["name"] for t in params["tools"] if "cache_control" in t] == ["B", "C"]
    assert _marked(params) == 4
