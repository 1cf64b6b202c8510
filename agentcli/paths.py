"""XDG locations for config, data and state."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP = "agentcli"


def _xdg(env: Mapping[str, str], var: str, fallback: str) -> Path:
    value = env.get(var, "")
    base = Path(value) if value and Path(value).is_absolute() else Path.home() / fallback
    return base / APP


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/agentcli` (default `~/.config/agentcli`)."""
    return _xdg(os.environ if env is None else env, "XDG_CONFIG_HOME", ".config")


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_DATA_HOME/agentcli` (default `~/.local/share/agentcli`)."""
    return _xdg(os.environ if env is None else env, "XDG_DATA_HOME", ".local/share")


def worktrees_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_DATA_HOME/agentcli-worktrees`: the git worktrees of isolated tasks. Beside the data folder, not in it:
    the Bash sandbox hides that folder from commands, and a subagent's commands work in its worktree."""
    return data_dir(env).with_name(f"{APP}-worktrees")


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/agentcli` (default `~/.local/state/agentcli`): logs."""
    return _xdg(os.environ if env is None else env, "XDG_STATE_HOME", ".local/state")


def user_config_file(env: Mapping[str, str] | None = None) -> Path:
    """The user config layer."""
    return config_dir(env) / "config.toml"


def project_config_file(workspace: Path) -> Path:
    """The project config layer."""
    return workspace / ".agentcli" / "config.toml"


def ensure_private_dir(path: Path) -> Path:
    """Create one of agentcli's own dirs (and missing parents) owner-only (0700); returns `path`.

    Parents that already exist are left alone; `path` itself, when it exists with group or other
    access, is tightened to 0700 (agentcli keeps sessions, logs and trust decisions there).
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    except OSError:
        pass  # not ours to change (e.g. a read-only mount); using it is still the caller's call
    return path
