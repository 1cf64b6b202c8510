"""What trusting a workspace arms (`trust_report`): read from its files, nothing started."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentcli.conversation.trust_report import AGENT_FOLDERS, ARMING, may_arm, untrusted_warning, what_trust_arms
from agentcli.hooks.settings import project_claude_settings
from agentcli.mcp.specs import MCP_JSON
from agentcli.paths import project_config_file
from agentcli.subagents.definitions.registry import agent_folders

PROJECT = """\
[[hooks.Stop]]
matcher = ""
hooks = [{ type = "command", command = "notify-send done" }]

[mcp.servers.db]
command = "db-mcp"
args = ["--dsn", "${DATABASE_URL}"]
env = { PGPASSWORD = "${PGPASSWORD:-x}" }
"""

AGENT = """\
---
name: deployer
description: deploys
mcpServers:
  - cloud: {type: http, url: "https://cloud.example/mcp", headers: {X-Token: "${CLOUD_TOKEN}"}}
---
Deploy.
"""


def test_the_cheap_check_knows_every_place(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    places = {*(p.relative_to(ws).as_posix() for p in project_claude_settings(ws)), MCP_JSON,
              project_config_file(ws).relative_to(ws).as_posix()}
    folders = {f.relative_to(ws).as_posix() for f, scope, _ in agent_folders(ws, {}, tmp_path) if scope == "project"}
    assert folders == set(AGENT_FOLDERS) and set(ARMING) == places | folders


def test_every_place_and_every_variable(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude" / "agents").mkdir(parents=True)
    (ws / ".agentcli").mkdir()
    (ws / ".agentcli" / "config.toml").write_text(PROJECT)
    (ws / ".claude" / "agents" / "deployer.md").write_text(AGENT)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit\n  --all"}]}]}}))
    api = {"type": "http", "url": "https://api.example/${REGION}",
           "headers": {"Authorization": "Bearer ${OPENAI_API_KEY}"}}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"api": api}}))
    report = what_trust_arms(ws)
    assert report.arms and report.changes and report.settings == ()
    assert [line.split("   (from ")[0] for line in report.lines()] == [
        "PreToolUse hook (Bash): audit --all",
        "Stop hook: notify-send done",
        "MCP server 'api' is sent requests: https://api.example/${REGION} with headers Authorization",
        "MCP server 'db' starts: db-mcp --dsn ${DATABASE_URL}",
        "MCP server 'cloud' is sent requests: https://cloud.example/mcp with headers X-Token",
        "MCP servers are given these environment variables: ${REGION}, ${OPENAI_API_KEY} (a provider key), "
        "${DATABASE_URL}, ${PGPASSWORD} (a secret), ${CLOUD_TOKEN} (a secret)",
    ]
    assert report.lines()[0].endswith("(from .claude/settings.json)")
    assert report.lines()[3].endswith("(from .agentcli/config.toml)")
    assert report.lines()[4].endswith("(from .claude/agents/deployer.md)")


def test_nothing_to_arm_and_a_trusted_workspace_say_nothing(tmp_path: Path) -> None:
    from agentcli.config import trust
    from agentcli.config.load import load_config

    ws = tmp_path / "ws"
    ws.mkdir()
    assert not may_arm(ws) and not what_trust_arms(ws).changes
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"t": {"command": "t"}}}))
    loaded = load_config(ws)
    assert "MCP server 't' starts: t" in (untrusted_warning(ws, loaded) or "")
    trust.trust(ws)
    assert untrusted_warning(ws, loaded) is None


def test_a_home_folder_workspace_does_not_report_the_persons_own_hooks(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}))
    assert what_trust_arms(home).hooks == ()
