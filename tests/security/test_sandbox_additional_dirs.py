"""Additional directories are Bash's write roots too; a denied path inside one stays closed (deny wins); a
worktree's sandbox has none."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.tools import landlock
from agentcli.tools.sandbox import Mechanisms, Sandbox, SandboxSpec
from agentcli.tools.sandbox_rules import build_rules


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
