"""Which files an edit is asked for every time (`tools.guarded`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcli.tools.permissions.guarded import guarded_reason


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / "cfg"),
            "XDG_DATA_HOME": str(tmp_path / "home" / "data"), "XDG_STATE_HOME": str(tmp_path / "home" / "state")}


@pytest.mark.parametrize("rel", [
    ".agentcli/config.toml", ".claude/settings.json", ".claude/settings.local.json", ".claude/commands/x.md",
    ".claude/skills/s/SKILL.md", ".claude/hooks/h.sh", ".claude/agents/a.md", ".mcp.json", ".opencode/agent/a.md",
    ".git/config", ".git/hooks/pre-commit", "sub/repo/.git/hooks/pre-commit", "sub/.git", "sub/.mcp.json",
    "sub/.agentcli/config.toml", ".GIT/hooks/post-checkout", "Sub/.Claude/Settings.json", "a/./b/../.git/config",
])
def test_agentclis_peers_and_gits_files_in_the_workspace(tmp_path: Path, env: dict[str, str], rel: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert guarded_reason(rel, ws, env).endswith("which can make later runs start commands")


@pytest.mark.parametrize("rel", ["notes.txt", "src/git.py", "AGENTS.md", "CLAUDE.md", ".github/workflows/ci.yml",
                                 "docs/.gitignore", ".gitattributes", "mcp.json", ".envrc", "."])
def test_ordinary_files_are_not_guarded(tmp_path: Path, env: dict[str, str], rel: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert guarded_reason(rel, ws, env) == ""


def test_the_persons_own_files_wherever_the_workspace_is(tmp_path: Path, env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    (home / "cfg" / "agentcli").mkdir(parents=True)
    os.symlink(home / "cfg" / "agentcli", home / "link")
    env["CLAUDE_CONFIG_DIR"] = str(home / "profiles" / "claude")
    cases = {
        "cfg/agentcli/config.toml": "agentcli's own config folder",
        "link/config.toml": "agentcli's own config folder",  # through a symlink
        "x/../CFG/AgentCLI/config.toml": "agentcli's own config folder",  # `..` and letter case
        str(home / "data" / "agentcli" / "trusted_workspaces.json"): "agentcli's own data folder",
        "state/agentcli/agentcli.log": "agentcli's own state folder",
        ".claude/settings.json": "Claude Code's user folder",
        str(home / "profiles" / "claude" / "settings.json"): "$CLAUDE_CONFIG_DIR",
        ".gitconfig": "git's user config",
        "cfg/git/config": "git's user config",
        "cfg/opencode/agents/a.md": "opencode's user config folder",
    }
    for target, what in cases.items():
        assert what in guarded_reason(target, home, env), target
    # A workspace inside agentcli's config folder: everything in it is the person's config.
    assert "agentcli's own config folder" in guarded_reason("agents/x.md", home / "cfg" / "agentcli", env)
    assert guarded_reason("cfg/other/config.toml", home, env) == ""
    # Outside the workspace: the file tools refuse it themselves, nothing to ask.
    assert guarded_reason(str(home / ".claude" / "settings.json"), tmp_path / "ws", env) == ""
