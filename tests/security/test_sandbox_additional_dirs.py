"""Additional directories are Bash's write roots too; a denied path inside one stays closed (deny wins); a
worktree's sandbox has none."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.sandbox import landlock
from agentcli.tools.sandbox.policy import Mechanisms, Sandbox, SandboxSpec
from agentcli.tools.sandbox.rules import build_rules
from agentcli.tools.shell.bash import BashArgs, BashTool


def test_additional_directories_are_write_roots_but_not_in_a_worktree(tmp_path: Path) -> None:
    ws, extra = tmp_path / "ws", tmp_path / "shared"
    ws.mkdir()
    extra.mkdir()
    sandbox = Sandbox(SandboxSpec(ws), Mechanisms(0, "none"))
    try:
        assert os.path.realpath(extra) not in sandbox.write_roots()
        sandbox.add_write_roots([extra])
        roots = sandbox.write_roots()
        assert roots[:2] == [os.path.realpath(ws), os.path.realpath(extra)]
        tree = sandbox.rooted(tmp_path / "tree")
        try:
            assert os.path.realpath(extra) not in tree.write_roots()
        finally:
            tree.close()
        sandbox.add_write_roots([])
        assert os.path.realpath(extra) not in sandbox.write_roots()
    finally:
        sandbox.close()


def test_a_denied_folder_inside_an_additional_directory_gets_no_write_grant(tmp_path: Path) -> None:
    extra = tmp_path / "home"
    (extra / ".ssh").mkdir(parents=True)
    (extra / "src").mkdir()
    rules = build_rules([str(extra)], [str(extra / ".ssh")])
    writes = [g.path for g in rules.grants if g.rights & landlock.WRITE_FILE and g.is_dir]
    assert str(extra / "src") in writes
    assert not any(path == str(extra) or path.startswith(str(extra / ".ssh")) for path in writes)


@pytest.mark.skipif(landlock.abi_version() == 0, reason="no Landlock on this kernel")
def test_a_command_writes_in_an_additional_directory_but_not_under_its_denied_paths(tmp_path: Path,
                                                                                    isolated_env: Path) -> None:
    """The home folder as an additional directory: a command writes there, never in ~/.ssh (deny wins)."""
    home = isolated_env
    (home / ".ssh").mkdir(exist_ok=True)
    (home / "src").mkdir()  # the home folder is split around ~/.ssh: its existing entries are granted
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    sandbox = Sandbox(SandboxSpec(ws))
    try:
        sandbox.add_write_roots([home.resolve()])
        ctx = ToolContext(workspace=ws, agent="main", session_id="s", permissions=PermissionPolicy("auto"),
                          file_locks=FileLocks(), sandbox=sandbox)
        command = f"echo ok > {home}/src/made.txt; echo pwned > {home}/.ssh/authorized_keys; echo x > {tmp_path}/out"
        result = asyncio.run(BashTool().run(BashArgs(command=command), ctx))
    finally:
        sandbox.close()
    assert (home / "src" / "made.txt").read_text() == "ok\n", result.content
    assert not (home / ".ssh" / "authorized_keys").exists(), result.content
    assert not (tmp_path / "out").exists()
