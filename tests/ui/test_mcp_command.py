"""/mcp in the TUI: servers with where they are configured and their status; they start with the first message."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentcli.config import trust
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.ui.conftest import MAIN, SIZE, MakeApp, idle, notes, submit, wait_for

pytest.importorskip("mcp_server_time")


async def test_mcp_lists_servers_before_and_after_they_start(make_app: MakeApp, workspace: Path) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]},
    }}))
    trust.trust(workspace)
    load = ToolCall(name="ToolSearch", input={"query": "select:mcp__time__get_current_time"})
    steps = [Step(match=Match(system_contains=MAIN, turn=0, tools_exclude=["mcp__time__get_current_time"]),
                  reply=Reply(tool_calls=[load])),  # an MCP tool is deferred: named in ToolSearch's list
             Step(match=Match(system_contains=MAIN, turn=1, tools_include=["mcp__time__get_current_time"]),
                  reply=Reply(text="I have a clock now."))]
    with FakeLLMServer(Script(steps=steps)) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "/mcp")
            listing = notes(app)[-1]
            assert listing.startswith("MCP servers:")
            assert f"time (stdio, {workspace / '.mcp.json'}) configured" in listing
            await submit(pilot, "hello")
            await idle(pilot)
            await wait_for(pilot, lambda: "I have a clock now." in str(app.conversation.session.messages[-1].text()))
            await submit(pilot, "/mcp")
            listing = notes(app)[-1]
            assert "time (stdio" in listing and ") running" in listing
            assert "tools: mcp__time__get_current_time, mcp__time__convert_time" in listing
    server.assert_done()
