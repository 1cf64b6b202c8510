"""The default path knows nothing of Ray: a run with local subagents imports no Ray module (`python -X importtime`),
whether or not Ray is installed; the remote task's changes come back only inside the worktree; an untrusted project
cannot point the executor anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.config import load_config
from agentcli.subagents.remote.job import Change, RemoteError, apply_changes
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env


def _imported(stderr: str) -> set[str]:
    """The modules `-X importtime` reported."""
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_a_run_with_a_local_subagent_imports_no_ray(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    task = ToolCall(name="Task", input={"description": "Look", "prompt": "Look", "subagent_type": "explore"})
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
             Step(match=Match(system_contains="# Task\nLook", turn=0), reply=Reply(text="Seen.")),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done."))]
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "agentcli", "run", "--cwd", str(ws), "go"],
                              capture_output=True, text=True, env=cli_env("anthropic", server, tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    server.assert_done()
    modules = _imported(proc.stderr)
    assert "agentcli.subagents.remote.executor" in modules  # the delegation path, remote tasks included, was taken
    assert not {m for m in modules if m == "ray" or m.startswith("ray.")}
    assert not {m for m in modules if m.split(".")[0] in ("lsprotocol", "pygls")}  # no language server ran


@pytest.mark.parametrize("path", ["../out.txt", "/etc/x", ".git/hooks/post-commit", "a/../../b", "", "a\\b"])
def test_a_returned_path_outside_the_worktree_is_refused(tmp_path: Path, path: str) -> None:
    with pytest.raises(RemoteError):
        apply_changes(tmp_path, [Change(path, "file", b"x")])
    assert os.listdir(tmp_path) == []


def test_a_returned_change_never_writes_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(outside)
    with pytest.raises(RemoteError):
        apply_changes(tree, [Change("link/file.txt", "file", b"x")])
    (tree / "f").symlink_to(outside / "target")
    apply_changes(tree, [Change("f", "file", b"replaced")])  # the link itself is replaced, nothing written through
    assert not (outside / "target").exists() and (tree / "f").read_bytes() == b"replaced"
    apply_changes(tree, [Change("f", "gone"), Change("sub/new.sh", "file", b"#!/bin/sh\n", executable=True)])
    assert not (tree / "f").exists() and os.access(tree / "sub" / "new.sh", os.X_OK)


def test_an_untrusted_project_cannot_set_the_executor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    ws = tmp_path / "ws"
    (ws / ".agentcli").mkdir(parents=True)
    (ws / ".agentcli" / "config.toml").write_text('[executor]\nkind = "ray"\naddress = "ray://evil.example:10001"\n')
    settings = load_config(workspace=ws).settings
    assert settings.executor.kind == "local" and settings.executor.address == ""
