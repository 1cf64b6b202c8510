"""`agentcli mcp list` through the real CLI: a streamable-HTTP server from the user config, a broken one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENTCLI_"))}
    env.update(XDG_DATA_HOME=str(home / "data"), XDG_STATE_HOME=str(home / "state"),
               XDG_CONFIG_HOME=str(home / "config"), **extra)
    return env


def test_mcp_list_starts_each_server_and_says_where_it_is_configured(
    tmp_path: Path, http_server: tuple[str, str]
) -> None:
    url, token = http_server
    config = tmp_path / "config" / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f'[mcp.servers.notes]\ntype = "http"\nurl = "{url}"\n'
        'headers = { Authorization = "Bearer ${NOTES_TOKEN}" }\n'
        '[mcp.servers.ghost]\ncommand = "agentcli-no-such-command-xyz"\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    env = _env(tmp_path, NOTES_TOKEN=token)
    proc = subprocess.run([sys.executable, "-m", "agentcli", "mcp", "list", "--cwd", str(ws)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"notes (http, {config}) running"
    assert lines[1] == "  tools: mcp__notes__shout"
    assert lines[2].startswith(f"ghost (stdio, {config}) failed: failed to start:")
    assert "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "agentcli", "mcp", "list", "--json", "--cwd", str(ws)],
                          capture_output=True, text=True, env=env, timeout=120)
    rows = {row["name"]: row for row in json.loads(proc.stdout)["servers"]}
    assert rows["notes"]["status"] == "running" and rows["notes"]["target"] == url
    assert token not in proc.stdout  # headers are never listed


def test_mcp_list_without_servers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    proc = subprocess.run([sys.executable, "-m", "agentcli", "mcp", "list", "--cwd", str(ws)],
                          capture_output=True, text=True, env=_env(tmp_path), timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("No MCP servers configured")
