"""`/plugin` in the TUI (Pilot): a marketplace added, a plugin installed after the screen that shows what it runs
(refused: nothing kept), the installed plugin joining the running session (its command completes, its agent type
is told to the model with the next prompt, and the main agent's tool list keeps its shape)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from agentcli.plugins import PluginStore
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from agentcli.ui.app import AgentApp
from agentcli.ui.widgets.picker import ListPicker
from agentcli.ui.widgets.plugin_consent import PluginConsentScreen
from tests.ui.conftest import MAIN, MakeApp, idle, notes, submit, wait_for

MARKETPLACE = Path(__file__).parents[1] / "fixtures" / "plugins" / "marketplace"


def _said(app: AgentApp, text: str) -> bool:
    return any(text in note for note in notes(app))


async def _first_turn(pilot: Pilot[Any], server: FakeLLMServer) -> None:
    """A turn before the plugin: the main agent is built and its first request sent."""
    await submit(pilot, "hi")
    await wait_for(pilot, lambda: len(server.requests) == 1)
    await idle(pilot)


async def _add_marketplace(pilot: Pilot[Any], app: AgentApp, folder: Path) -> None:
    await submit(pilot, f"/plugin marketplace add {folder}")
    await wait_for(pilot, lambda: _said(app, "added marketplace fixture-plugins: 5 plugin(s)"))


async def _asked(pilot: Pilot[Any], app: AgentApp) -> list[str]:
    """The lines of the dialog that asks about a plugin, once it shows."""
    await wait_for(pilot, lambda: isinstance(app.screen, PluginConsentScreen))
    assert isinstance(app.screen, PluginConsentScreen)
    return app.screen.lines


async def test_install_shows_what_the_plugin_runs_and_a_refusal_keeps_nothing(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(140, 44)) as pilot:
            await _add_marketplace(pilot, app, MARKETPLACE)
            await submit(pilot, "/plugin install edit-guard@fixture-plugins")
            body = "\n".join(await _asked(pilot, app))
            assert body.startswith("edit-guard@fixture-plugins 1.0.0: A PreToolUse hook")
            assert 'hook PreToolUse (Edit|Write|MultiEdit): python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"' in body
            await pilot.press("n")
            await wait_for(pilot, lambda: _said(app, "not installed: edit-guard@fixture-plugins"))
            assert "edit-guard@fixture-plugins" not in PluginStore().installed()
            assert not app.conversation.plugins.plugins


async def test_an_installed_plugin_joins_the_running_session(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Hello.")),
        Step(match=Match(system_contains=MAIN, turn=1,
                         last_user_contains="subagent types for Task's subagent_type: feature-dev:code-explorer"),
             reply=Reply(text="I can use it.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=(140, 44)) as pilot:
            await _first_turn(pilot, server)
            await _add_marketplace(pilot, app, MARKETPLACE)
            for name in ("feature-dev", "commit-tools"):
                await submit(pilot, f"/plugin install {name}@fixture-plugins")
                assert "It runs no hooks, no MCP servers and no language servers." in await _asked(pilot, app)
                await pilot.press("y")
                await wait_for(pilot, lambda name=name: _said(app, f"{name}@fixture-plugins joined this session"))
            on = {"feature-dev@fixture-plugins": True, "commit-tools@fixture-plugins": True}
            assert PluginStore().enabled() == on
            assert "commit-tools:describe" in app.custom_commands.commands
            assert any(name.endswith("describe") for name in app.prompt.commands)  # `/` completes it
            assert "feature-dev:code-explorer" in app.conversation.registry.types
            await submit(pilot, "which agents now?")
            await wait_for(pilot, lambda: len(server.requests) == 2)
            await idle(pilot)
    first, second = server.requests
    assert json.dumps(second.body["tools"]) == json.dumps(first.body["tools"])  # the cached prefix is kept
    assert second.body["system"] == first.body["system"]
    sent = json.dumps(second.body["messages"][-1])
    assert "The person turned on the plugin(s) feature-dev in this session" in sent


async def test_plugin_errors_are_one_line(make_app: MakeApp, tmp_path: Path) -> None:
    claude = Path(os.environ["HOME"]) / ".claude"
    claude.mkdir(parents=True)
    (claude / "settings.json").write_text(json.dumps({"extraKnownMarketplaces": {
        "fixture-plugins": {"source": {"source": "directory", "path": str(MARKETPLACE)}}}}))
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(140, 44)) as pilot:
            await submit(pilot, "/plugin install nothing@nowhere")
            await wait_for(pilot, lambda: _said(app, "/plugin install: no marketplace named 'nowhere'"))
            await submit(pilot, "/plugin install ghost@fixture-plugins")  # adds the marketplace, then fails
            await wait_for(pilot, lambda: _said(app, "/plugin install: marketplace fixture-plugins has no plugin"))
            assert _said(app, f"adding marketplace fixture-plugins ({MARKETPLACE}) from {claude / 'settings.json'}")
            await submit(pilot, "/plugin enable ghost@fixture-plugins")
            await wait_for(pilot, lambda: _said(app, "/plugin enable: ghost@fixture-plugins is not installed"))
            await submit(pilot, f"/plugin install {tmp_path / 'missing'}")
            await wait_for(pilot, lambda: any(n.startswith("/plugin install:") and "missing" in n for n in notes(app)))
            await submit(pilot, "/plugin frobnicate")
            await wait_for(pilot, lambda: _said(app, "/plugin: unknown subcommand 'frobnicate'"))


async def test_a_plugins_mcp_server_joins_from_the_next_turn_after_the_tools_sent_before(
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mcp_server_time")
    venv_bin = str(Path(sys.executable).parent)  # where pip put mcp-server-time, as a person's PATH has it
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Hello.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Now I have a clock.")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=(140, 44)) as pilot:
            await _first_turn(pilot, server)
            await submit(pilot, f"/plugin install {MARKETPLACE / 'plugins' / 'clock'}")
            assert "  MCP server plugin_clock_time: mcp-server-time --local-timezone UTC" in await _asked(pilot, app)
            await pilot.press("y")
            await wait_for(pilot, lambda: _said(app, "joined this session"))
            await submit(pilot, "what time is it?")
            await wait_for(pilot, lambda: len(server.requests) == 2, timeout=60)
            await idle(pilot)
    first, second = ([{k: v for k, v in tool.items() if k != "cache_control"} for tool in request.body["tools"]]
                     for request in server.requests)  # the cache breakpoint moves to the last tool
    assert second[:len(first)] == first  # the list sent before stays a prefix: the cache still serves it
    assert "mcp__plugin_clock_time__get_current_time" in [tool["name"] for tool in second[len(first):]]


async def test_update_shows_what_is_new_and_remove_forgets_the_plugin(make_app: MakeApp, tmp_path: Path) -> None:
    market = tmp_path / "market"
    shutil.copytree(MARKETPLACE, market)
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(140, 44)) as pilot:
            await _add_marketplace(pilot, app, market)
            await submit(pilot, "/plugin install commit-tools@fixture-plugins")
            await _asked(pilot, app)
            await pilot.press("y")
            await wait_for(pilot, lambda: _said(app, "commit-tools@fixture-plugins joined this session"))
            await submit(pilot, "/plugin update commit-tools@fixture-plugins")
            await wait_for(pilot, lambda: _said(app, "commit-tools@fixture-plugins is up to date (1.0.0)"))
            plugin = market / "plugins" / "commit-tools"
            manifest = plugin / ".claude-plugin" / "plugin.json"
            manifest.write_text(manifest.read_text().replace('"1.0.0"', '"1.1.0"'))
            (plugin / "hooks").mkdir()
            (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [
                {"hooks": [{"type": "command", "command": "echo done"}]}]}}))
            await submit(pilot, "/plugin update")
            lines = await _asked(pilot, app)
            assert "  (new) hook Stop: echo done" in lines and lines[0].startswith("commit-tools@fixture-plugins 1.1.0")
            await pilot.press("y")
            await wait_for(pilot, lambda: _said(app, "updated commit-tools@fixture-plugins: 1.0.0 -> 1.1.0"))
            assert PluginStore().enabled() == {"commit-tools@fixture-plugins": True}  # on, as it was
            await submit(pilot, "/plugin remove commit-tools@fixture-plugins")
            await wait_for(pilot, lambda: _said(app, "removed commit-tools@fixture-plugins"))
            assert PluginStore().installed() == {}
            await submit(pilot, "/plugin remove commit-tools@fixture-plugins")
            await wait_for(pilot, lambda: _said(app, "/plugin remove: commit-tools@fixture-plugins is not installed"))


async def test_browse_lists_the_marketplaces_plugins_and_installs_the_one_picked(make_app: MakeApp) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(140, 44)) as pilot:
            await submit(pilot, "/plugin browse")
            await wait_for(pilot, lambda: _said(app, "No marketplaces added (/plugin marketplace add SOURCE)."))
            await _add_marketplace(pilot, app, MARKETPLACE)
            await submit(pilot, "/plugin browse fixture-plugins")
            await wait_for(pilot, lambda: isinstance(app.screen, ListPicker))
            options = app.screen.query_one(OptionList)
            ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
            assert ids == [f"{name}@fixture-plugins" for name in
                           ("clock", "commit-tools", "edit-guard", "feature-dev", "frontend-design")]
            await pilot.press("down", "enter")  # commit-tools
            assert "commit-tools@fixture-plugins 1.0.0" in (await _asked(pilot, app))[0]
            await pilot.press("y")
            await wait_for(pilot, lambda: _said(app, "commit-tools@fixture-plugins joined this session"))
            await submit(pilot, "/plugin browse")
            await wait_for(pilot, lambda: isinstance(app.screen, ListPicker))
            label = str(app.screen.query_one(OptionList).get_option_at_index(1).prompt)
            assert label.endswith("[installed, on]")
            await pilot.press("down", "enter")
            await wait_for(pilot, lambda: _said(app, "commit-tools@fixture-plugins is installed already"))
