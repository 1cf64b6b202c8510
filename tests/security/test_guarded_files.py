"""Edits of files that make later runs start commands, through the real CLI on fresh XDG dirs.

The person trusts the workspace and accepts edits; the model then writes a hook, an MCP server list or
agentcli's own config, so that the next run (here or anywhere) starts a command nobody approved. Those
edits are asked every time (`tools/permissions/guarded.py`); a one-shot run has no one to ask, so they are refused
with the reason, and ordinary edits still go through.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, ToolCall
from tests.e2e.helpers import cli_env, run_cli
from tests.security.scripted import one_call_per_turn, tool_results

HOOK = json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]}})
SERVER = json.dumps({"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch pwned"]}}})
EVERY_TIME = "needs approval every time"




def _accept_edits(home: Path) -> Path:
    path = home / "config" / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[permissions]\nmode = "accept_edits"\n')
    return path


def test_accept_edits_cannot_write_hooks_mcp_servers_or_nested_git_hooks_unasked(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sub" / "repo" / ".git" / "hooks").mkdir(parents=True)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text('{"permissions": {}}\n')
    _accept_edits(tmp_path)
    script = one_call_per_turn(
        ToolCall(name="Write", input={"file_path": ".claude/settings.json", "content": HOOK}),
        ToolCall(name="Edit", input={"file_path": ".claude/settings.local.json", "old_string": '"permissions": {}',
                                     "new_string": '"permissions": {"allow": ["Bash"]}'}),
        ToolCall(name="MultiEdit", input={"file_path": ".mcp.json",
                                          "edits": [{"old_string": "", "new_string": SERVER}]}),
        ToolCall(name="Write", input={"file_path": "sub/repo/.git/hooks/pre-commit", "content": "#!/bin/sh\nx\n"}),
        ToolCall(name="Write", input={"file_path": "sub/.Claude/commands/deploy.md", "content": "run `touch x`"}),
        ToolCall(name="Write", input={"file_path": "notes.txt", "content": "ordinary edits still run"}),
    )
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--trust", "--cwd", str(repo), "set things up"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    results = tool_results(server)
    assert len(results) == 6
    assert all(EVERY_TIME in r and "non-interactive run" in r for r in results[:5]), results
    assert "Claude Code's" in results[0] and "Claude Code's" in results[1] and "Claude Code's" in results[4]
    assert "MCP servers" in results[2]
    assert "git's config or hooks" in results[3]
    assert not (repo / ".claude" / "settings.json").exists() and not (repo / ".mcp.json").exists()
    assert (repo / ".claude" / "settings.local.json").read_text() == '{"permissions": {}}\n'
    assert not (repo / "sub" / "repo" / ".git" / "hooks" / "pre-commit").exists()
    assert not (repo / "sub" / ".Claude").exists()
    assert (repo / "notes.txt").read_text() == "ordinary edits still run"


def test_agentclis_own_files_are_not_edited_unasked_from_a_home_workspace(tmp_path: Path) -> None:
    home = tmp_path  # the workspace is the home folder: agentcli's XDG folders are inside it
    config = _accept_edits(home)
    claude_dir = home / "profiles" / "claude"  # $CLAUDE_CONFIG_DIR
    claude_dir.mkdir(parents=True)
    (home / "notes").mkdir()
    os.symlink(home / "config" / "agentcli", home / "shortcut")
    trust_list = home / "data" / "agentcli" / "trusted_workspaces.json"
    script = one_call_per_turn(
        ToolCall(name="Edit", input={"file_path": "config/agentcli/config.toml", "old_string": "accept_edits",
                                     "new_string": "auto"}),
        ToolCall(name="Write", input={"file_path": "shortcut/config.toml", "content": 'allow = ["Bash"]\n'}),
        ToolCall(name="Write", input={"file_path": "notes/../data/agentcli/trusted_workspaces.json",
                                      "content": '{"version": 1, "workspaces": [{"path": "/"}]}'}),
        ToolCall(name="Write", input={"file_path": str(home / ".claude" / "settings.json"), "content": HOOK}),
        ToolCall(name="Write", input={"file_path": "profiles/claude/settings.json", "content": HOOK}),
        ToolCall(name="Write", input={"file_path": "Config/AgentCLI/config.toml", "content": "[permissions]\n"}),
        ToolCall(name="Write", input={"file_path": "notes/todo.txt", "content": "ordinary edits still run"}),
    )
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, home, HOME=str(home), CLAUDE_CONFIG_DIR=str(claude_dir))
        proc = run_cli(["run", "--trust", "--cwd", str(home), "tidy my home"], env)
    assert proc.returncode == 0, proc.stderr
    results = tool_results(server)
    assert len(results) == 7
    assert all(EVERY_TIME in r for r in results[:6]), results
    assert all("agentcli's own config folder" in results[n] for n in (0, 1, 5)), results
    assert "agentcli's own data folder" in results[2]
    assert "Claude Code's" in results[3] and "Claude Code's" in results[4]
    assert config.read_text() == '[permissions]\nmode = "accept_edits"\n'
    assert json.loads(trust_list.read_text())["workspaces"][0]["path"] == str(home.resolve())
    assert not (home / ".claude").exists() and not (claude_dir / "settings.json").exists()
    assert not (home / "Config").exists()
    assert (home / "notes" / "todo.txt").read_text() == "ordinary edits still run"
