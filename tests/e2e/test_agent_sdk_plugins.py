"""The real Claude Agent SDK loads plugins into agentcli as into Claude Code: `ClaudeAgentOptions(plugins=[{"type":
"local", "path": ...}])` becomes `--plugin-dir`; the init message lists them (and one that is missing in
`plugin_errors`), a plugin's agent runs as a subagent type under its plugin's name and its PreToolUse hook blocks a
write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import agentcli_path, cli_env

sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, SystemMessage, query  # noqa: E402

PLUGINS = Path(__file__).parents[1] / "fixtures" / "plugins" / "marketplace" / "plugins"
SDK_ROLE = "You are agentcli, a coding agent run by a program"
EXPLORER = "You map existing code for a developer"


def test_plugins_option_loads_the_plugins_agent_and_hook(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "parser.py").write_text("def parse(text):\n    return text.split()\n")
    script = Script(steps=[
        Step(match=Match(system_contains=SDK_ROLE, turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Write", input={"file_path": "schema.generated.json", "content": "{}"}),
            ToolCall(name="Task", input={"description": "Map the parser", "prompt": "How does parse work?",
                                         "subagent_type": "feature-dev:code-explorer"})])),
        Step(match=Match(system_contains=EXPLORER, turn=0), reply=Reply(text="parse splits on whitespace.")),
        Step(match=Match(system_contains=SDK_ROLE, turn=1, last_user_contains="parse splits on whitespace."),
             reply=Reply(text="Mapped; the generated file was refused.")),
    ])
    gone = tmp_path / "gone-plugin"
    plugins: list[Any] = [{"type": "local", "path": str(PLUGINS / "feature-dev")},
                          {"type": "local", "path": str(PLUGINS / "edit-guard")}, {"type": "local", "path": str(gone)}]

    async def body(opts: ClaudeAgentOptions) -> list[Any]:
        return [m async for m in query(prompt="Map the parser and write the schema", options=opts)]

    with FakeLLMServer(script) as server:
        opts = ClaudeAgentOptions(cli_path=agentcli_path(), cwd=str(ws), env=cli_env("anthropic", server, tmp_path),
                                  plugins=plugins, permission_mode="bypassPermissions")
        messages = anyio.run(body, opts)
        server.assert_done()
        refused = str(server.requests[-1].body["messages"][-1]["content"])
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["plugins"] == [
        {"name": "feature-dev", "path": str((PLUGINS / "feature-dev").resolve()), "version": "1.0.0"},
        {"name": "edit-guard", "path": str((PLUGINS / "edit-guard").resolve()), "version": "1.0.0"}]
    assert "feature-dev:code-explorer" in init.data["agents"]
    (error,) = init.data["plugin_errors"]  # Claude Code's field: a CI can fail on it
    assert {k: v for k, v in error.items() if k != "message"} == {
        "plugin": "inline[2]", "type": "path-not-found", "path": str(gone)}
    assert error["message"].startswith(f"plugin {gone}: not found") and "plugin_warnings" not in init.data
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Mapped; the generated file was refused."
    assert not (ws / "schema.generated.json").exists()
    assert "edit-guard: schema.generated.json is generated" in refused
