"""Plugins through the real CLI: a marketplace (`tests/fixtures/plugins/marketplace`) is added and its plugins
installed with `agentcli plugins`; in `agentcli run` their command (`/commit-tools:describe`), agent
(`feature-dev:code-explorer`), skill (`frontend-design:frontend-design`), PreToolUse hook (`edit-guard`, a Python
script) and MCP server (`clock`: the real `mcp-server-time`) all work under their plugin's names. A project that is
not trusted enables nothing with its `enabledPlugins`, and an install without a terminal or `--yes` changes
nothing."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

MARKET = Path(__file__).parents[1] / "fixtures" / "plugins" / "marketplace"
PLUGINS = ("commit-tools", "feature-dev", "frontend-design", "edit-guard", "clock")
CLOCK = "mcp__plugin_clock_time__get_current_time"


def _env(tmp_path: Path, server: FakeLLMServer | None = None) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    venv_bin = str(Path(sys.executable).parent)  # where pip put mcp-server-time, as a person's PATH has it
    extra = {"HOME": str(home), "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    if server is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENTCLI_"))}
        env.update(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"),
                   XDG_STATE_HOME=str(tmp_path / "state"), **extra)
        return env
    return cli_env("anthropic", server, tmp_path, **extra)


def _install_all(tmp_path: Path) -> None:
    added = run_cli(["plugins", "marketplace", "add", str(MARKET)], _env(tmp_path))
    assert added.returncode == 0, added.stderr
    assert "added marketplace fixture-plugins: 5 plugin(s)" in added.stdout
    for name in PLUGINS:
        proc = run_cli(["plugins", "install", f"{name}@fixture-plugins", "--yes"], _env(tmp_path))
        assert proc.returncode == 0, proc.stderr
        assert f"installed {name}@fixture-plugins" in proc.stdout


def _run(tmp_path: Path, ws: Path, script: Script, *args: str) -> tuple[dict[str, Any], FakeLLMServer, str]:
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), *args], _env(tmp_path, server))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    server.assert_done()
    return last_json(proc.stdout), server, proc.stderr


def test_an_install_shows_what_it_arms_and_without_a_terminal_or_yes_changes_nothing(tmp_path: Path) -> None:
    assert run_cli(["plugins", "marketplace", "add", str(MARKET)], _env(tmp_path)).returncode == 0
    proc = run_cli(["plugins", "install", "edit-guard@fixture-plugins"], _env(tmp_path))
    assert proc.returncode == 1
    assert 'hook PreToolUse (Edit|Write|MultiEdit): python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"' in proc.stdout
    assert "not installed: run again with --yes" in proc.stdout
    listed = json.loads(run_cli(["plugins", "list", "--json"], _env(tmp_path)).stdout)
    assert listed["installed"] == [] and listed["loaded"] == []
    assert not list((tmp_path / "data" / "agentcli" / "plugins" / "staging").iterdir())  # the staged copy is gone


def test_the_marketplaces_command_agent_and_skill_work_under_their_plugins_names(tmp_path: Path) -> None:
    _install_all(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "parser.py").write_text("def parse(text):\n    return text.split()\n")
    explorer = "You map existing code for a developer"
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="focusing on: the parser"),
             reply=Reply(tool_calls=[
                 ToolCall(name="Skill", input={"skill": "frontend-design:frontend-design"}),
                 ToolCall(name="Task", input={"description": "Map the parser", "prompt": "How does parse work?",
                                              "subagent_type": "feature-dev:code-explorer"}),
             ])),
        Step(match=Match(system_contains=explorer, turn=0, tools_include=["Read"], tools_exclude=["Bash", "Write"]),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "parser.py"})])),
        Step(match=Match(system_contains=explorer, turn=1), reply=Reply(text="parse splits on whitespace.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="The parser splits words.")),
    ])
    result, server, _ = _run(tmp_path, ws, script, "/commit-tools:describe the parser")
    assert result["result"] == "The parser splits words."
    first = server.requests[0].body
    prompt = str(first["messages"][0]["content"])
    cache = tmp_path / "data" / "agentcli" / "plugins" / "cache" / "fixture-plugins"
    assert f"{cache / 'commit-tools' / '1.0.0'}/scripts" in prompt  # ${CLAUDE_PLUGIN_ROOT} in the command's body
    task_tool = next(t for t in first["tools"] if t["name"] == "Task")
    assert "feature-dev:code-explorer" in task_tool["description"]
    skill_tool = next(t for t in first["tools"] if t["name"] == "Skill")
    assert "frontend-design:frontend-design" in skill_tool["description"]
    answers = str(server.requests[-1].body["messages"][-1]["content"])
    assert "Pick one typographic scale" in answers  # the skill's body, loaded
    assert "parse splits on whitespace." in answers
    (task,) = result["tasks"]
    assert task["subagent_type"] == "feature-dev:code-explorer" and task["status"] == "completed"


def test_the_plugins_hook_blocks_a_write_and_its_mcp_server_answers(tmp_path: Path) -> None:
    pytest.importorskip("mcp_server_time")
    _install_all(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    script = Script(steps=[
        Step(match=Match(system_contains=f"- {CLOCK}: ", turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Write", input={"file_path": "api.generated.py", "content": "x = 1\n"}),
            ToolCall(name="ToolSearch", input={"query": "select:" + CLOCK})])),
        Step(match=Match(system_contains=MAIN, turn=1, tools_include=[CLOCK]),
             reply=Reply(tool_calls=[ToolCall(name=CLOCK, input={"timezone": "UTC"})])),
        Step(match=Match(system_contains=MAIN, turn=2, last_user_contains='"timezone": "UTC"'),
             reply=Reply(text="Refused, and it is a day in UTC.")),
    ])
    result, server, _ = _run(tmp_path, ws, script, "--yes", "write the generated file, then tell the time")
    assert result["result"] == "Refused, and it is a day in UTC."
    assert not (ws / "api.generated.py").exists(), "the plugin's PreToolUse hook blocked the write"
    blocked = server.requests[1].body["messages"][-1]["content"][0]
    assert blocked["is_error"] is True
    assert "edit-guard: api.generated.py is generated; change its source instead" in str(blocked["content"])
    assert "day_of_week" in str(server.requests[-1].body["messages"][-1])  # the real server's own answer


def test_an_untrusted_projects_enabled_plugins_enable_nothing(tmp_path: Path) -> None:
    _install_all(tmp_path)
    for name in PLUGINS:
        assert run_cli(["plugins", "disable", f"{name}@fixture-plugins"], _env(tmp_path)).returncode == 0
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    enabled = {f"{name}@fixture-plugins": True for name in PLUGINS}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": enabled}))
    script = Script(steps=[Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Nothing extra."))])
    _, server, stderr = _run(tmp_path, ws, script, "hello")
    body = json.dumps(server.requests[0].body)
    assert "feature-dev:code-explorer" not in body and "plugin_clock" not in body and "frontend-design" not in body
    assert f"plugins enabled in {ws / '.claude' / 'settings.json'} not loaded: the workspace is not trusted" in stderr
    listed = json.loads(run_cli(["plugins", "list", "--json", "--cwd", str(ws)], _env(tmp_path)).stdout)
    assert listed["loaded"] == []
    # trusted, the same settings turn them on
    script = Script(steps=[Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Now with plugins."))])
    _, server, _ = _run(tmp_path, ws, script, "--trust", "hello")
    assert "feature-dev:code-explorer" in json.dumps(server.requests[0].body)
