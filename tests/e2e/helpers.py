"""Shared helpers for tests that run the real `agentcli` executable against the fake server."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentcli.testing.fake_llm import FakeLLMServer

MAIN = "You are agentcli"  # the main agent's system prompt starts with this
NO_IDENTITY = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}  # agentcli's fallback author


def agentcli_path() -> str:
    """This venv's `agentcli` console script (never Claude Code's binary, which the Agent SDK's wheel bundles)."""
    found = Path(sys.executable).with_name("agentcli")
    path = str(found) if found.exists() else shutil.which("agentcli")
    assert path, "the agentcli console script is not installed"
    return path


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` as a test author, with no config of the machine's; its stripped output."""
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", **NO_IDENTITY}).stdout.strip()


def git_workspace(tmp_path: Path, app: str) -> Path:
    """`tmp_path/ws`: a git repository on branch main whose one commit holds `app.py` with `app`."""
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "app.py").write_text(app)
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    return ws


def cli_env(api: str, server: FakeLLMServer, home: Path, **extra: str) -> dict[str, str]:
    """Environment for a CLI subprocess: fake server, isolated XDG dirs, no retries."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENTCLI_"))}
    env.update(XDG_DATA_HOME=str(home / "data"), XDG_STATE_HOME=str(home / "state"),
               XDG_CONFIG_HOME=str(home / "config"), AGENTCLI_LLM__MAX_RETRIES="0")
    if api == "anthropic":
        env.update(ANTHROPIC_API_KEY="sk-ant-e2e-secret", ANTHROPIC_BASE_URL=server.base_url)
    else:
        env.update(OPENAI_API_KEY="sk-e2e-secret", OPENAI_BASE_URL=server.base_url + "/v1",
                   AGENTCLI_MODELS__MAIN__PROVIDER="openai", AGENTCLI_MODELS__MAIN__MODEL="gpt-fake",
                   AGENTCLI_MODELS__LIGHT__PROVIDER="openai", AGENTCLI_MODELS__LIGHT__MODEL="gpt-fake-mini")
    env.update(extra)
    return env


def run_cli(args: list[str], env: dict[str, str], cwd: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `python -m agentcli ARGS` and capture its output."""
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


def last_json(stdout: str) -> dict[str, Any]:
    """The final JSON object a json-mode run printed."""
    result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return result


def db(home: Path) -> sqlite3.Connection:
    """The agentcli database a CLI run wrote under `home`."""
    return sqlite3.connect(home / "data" / "agentcli" / "agentcli.db")
