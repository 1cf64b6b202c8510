"""/plugins in the TUI (Pilot): the plugins the session loaded (here from Claude Code's settings and its own install
record), each with what it brings and every hook command and MCP server it arms; one enabled but installed nowhere is
named as not loaded; the plugin's command completes after `/`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Script
from tests.ui.conftest import MakeApp, notes, submit, wait_for

PLUGINS = Path(__file__).parents[1] / "fixtures" / "plugins" / "marketplace" / "plugins"


async def test_plugins_lists_what_is_loaded_and_what_it_arms(make_app: MakeApp, workspace: Path) -> None:
    claude = Path(os.environ["HOME"]) / ".claude"
    (claude / "plugins").mkdir(parents=True)
    installed = {f"{name}@fixture-plugins": [{"scope": "user", "installPath": str(PLUGINS / name)}]
                 for name in ("edit-guard", "commit-tools")}
    (claude / "plugins" / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": installed}))
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {
        "edit-guard@fixture-plugins": True, "commit-tools@fixture-plugins": True, "ghost@fixture-plugins": True}}))
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(140, 40)) as pilot:
            await submit(pilot, "/plugins")
            await wait_for(pilot, lambda: any("Plugins loaded in this session" in n for n in notes(app)))
            listing = next(n for n in notes(app) if "Plugins loaded in this session" in n)
            assert "edit-guard 1.0.0 (user: edit-guard@fixture-plugins): 0 commands, 0 agents, 0 skills" in listing
            assert 'hook PreToolUse (Edit|Write|MultiEdit): python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"' in listing
            assert "commit-tools 1.0.0 (user: commit-tools@fixture-plugins): 1 command, 0 agents, 0 skills" in listing
            assert "not loaded: plugin ghost@fixture-plugins is enabled but not installed" in listing
            assert "commit-tools:describe" in app.custom_commands.commands
