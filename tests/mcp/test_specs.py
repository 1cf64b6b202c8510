"""Where MCP servers are configured: .mcp.json, [mcp.servers.NAME], agent files' mcpServers; ${VAR} expansion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.config.load import load_config
from agentcli.mcp.manager import session_manager
from agentcli.mcp.specs import SpecError, agent_servers, expand, parse_server, read_mcp_json
from agentcli.subagents.definitions.agent_files import parse_agent_file


def test_claude_codes_mcp_json_reads_stdio_and_http_servers(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "${TZ:-UTC}"}},
        "docs": {"type": "http", "url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${TOK}"}},
        "plain": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"},
        "old": {"type": "sse", "url": "https://old.example/sse"},
        "bad__name": {"command": "x"},
        "nocmd": {"args": ["x"]},
    }}))
    specs, problems = read_mcp_json(tmp_path)
    by_name = {s.name: s for s in specs}
    assert list(by_name) == ["time", "docs", "plain"]
    assert by_name["time"].transport == "stdio" and by_name["time"].args == ("mcp-server-time",)
    assert by_name["time"].env == (("TZ", "${TZ:-UTC}"),)  # expanded when it starts, not when read
    assert by_name["docs"].transport == "http" and by_name["docs"].headers == (("Authorization", "Bearer ${TOK}"),)
    assert by_name["plain"].transport == "http"
    assert all(s.project and s.origin == str(tmp_path / ".mcp.json") for s in specs)
    assert len(problems) == 3 and all("\n" not in p for p in problems)
    assert "SSE transport is not supported" in problems[0]
    assert "may not contain '__'" in problems[1]
    assert "'nocmd'" in problems[2] and "needs a 'command'" in problems[2]


@pytest.mark.parametrize("text, problem", [
    ("{not json", "not valid JSON"),
    ('{"servers": {}}', 'expected an object with "mcpServers"'),
])
def test_a_broken_mcp_json_is_one_line(tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / ".mcp.json").write_text(text)
    specs, (line,) = read_mcp_json(tmp_path)
    assert specs == [] and problem in line and str(tmp_path) in line


def test_env_expansion() -> None:
    env = {"HOME": "/home/me", "EMPTY": ""}
    assert expand("${HOME}/x", env) == "/home/me/x"
    assert expand("${MISSING:-fallback}", env) == "fallback"
    assert expand("${EMPTY:-d}", env) == "d"
    assert expand("${MISSING:-}", env) == ""
    assert expand("$HOME and ${ not a var", env) == "$HOME and ${ not a var"
    with pytest.raises(SpecError, match=r"\$\{MISSING\} is not set"):
        expand("a${MISSING}b", env)


@pytest.mark.parametrize("name", ["", "a b", "x" * 33, "-lead", "a__b", "ünï", "a/b"])
def test_server_names_that_cannot_be_part_of_tool_names_are_refused(name: str) -> None:
    with pytest.raises(SpecError, match="MCP server"):
        parse_server(name, {"command": "x"}, origin="o", project=False)


def test_user_config_servers_and_the_untrusted_project_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "config"
    (home / "agentcli").mkdir(parents=True)
    (home / "agentcli" / "config.toml").write_text(
        '[mcp]\ncall_timeout_seconds = 5\n[mcp.servers.time]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n'
    )
    ws = tmp_path / "ws"
    (ws / ".agentcli").mkdir(parents=True)
    (ws / ".agentcli" / "config.toml").write_text('[mcp.servers.evil]\ncommand = "curl"\n')
    env = {"XDG_CONFIG_HOME": str(home)}
    untrusted = load_config(ws, env=env)
    assert list(untrusted.settings.mcp.servers) == ["time"]  # a project may not add a process
    assert any(key.startswith("mcp.servers.evil") for key in untrusted.ignored)
    trusted = load_config(ws, env=env, trusted=True)
    assert list(trusted.settings.mcp.servers) == ["time", "evil"]
    manager = session_manager(untrusted.settings.mcp, ws)
    assert list(manager.servers) == ["time"] and manager.call_timeout == 5


def test_the_persons_own_server_wins_over_the_projects_of_the_same_name(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": "evil"}}}))
    from agentcli.config.schema import McpSettings

    manager = session_manager(McpSettings.model_validate({"servers": {"time": {"command": "uvx"}}}), tmp_path)
    assert manager.servers["time"].spec.command == "uvx" and not manager.servers["time"].spec.project
    (problem,) = manager.problems
    assert "ignored: a server of that name is configured in" in problem


def test_agent_servers_names_and_inline_definitions() -> None:
    names, specs, warnings = agent_servers(
        ["github", {"clock": {"command": "uvx", "args": ["mcp-server-time"]}}, "bad__x", 3],
        origin="agent file a.md", project=True,
    )
    assert names == ("github", "clock")
    assert [s.name for s in specs] == ["clock"] and specs[0].project and specs[0].origin == "agent file a.md"
    assert len(warnings) == 2
    assert agent_servers({"clock": {"url": "https://x/mcp"}}, origin="o", project=False)[0] == ("clock",)
    assert agent_servers("nope", origin="o", project=False)[2] == [
        "'mcpServers' ignored: expected a list of server names or definitions"
    ]


def test_an_agent_file_keeps_mcp_tools_and_adds_its_servers(tmp_path: Path) -> None:
    path = tmp_path / "clock.md"
    path.write_text(
        "---\nname: clock\ndescription: Tells the time.\ntools: Read, mcp__time__get_current_time, ExitPlanMode\n"
        "disallowedTools: mcp__github\n"
        "mcpServers:\n  - github\n  - notes:\n      type: http\n      url: https://notes.example/mcp\n---\nBody\n"
    )
    agent = parse_agent_file(path, scope="project", file_format="claude")
    assert agent.tools == ("Read", "mcp__time__get_current_time", "mcp__github", "mcp__notes")
    assert agent.mcp_servers == ("github", "notes") and agent.mcp_specs[0].project
    assert agent.disallowed_tools == ("mcp__github",)
    assert agent.warnings == ("tools agentcli lacks were dropped: ExitPlanMode",)
    available = ["Read", "Bash", "mcp__time__get_current_time", "mcp__time__convert_time",
                 "mcp__github__create_issue", "mcp__notes__add", "mcp__notesx__add"]
    assert agent.allowed_tools(available) == ["Read", "mcp__time__get_current_time", "mcp__notes__add"]
