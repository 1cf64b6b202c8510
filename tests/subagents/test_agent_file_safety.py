"""Agent-file parsing against hostile input: anchors and aliases, size caps, non-scalars, names, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from agentcli.subagents.definitions.agent_files import (
    MAX_FILE_BYTES,
    AgentFileError,
    AgentType,
    name_problem,
    parse_agent_file,
)
from agentcli.subagents.definitions.front_matter import lenient_front_matter, parse_front_matter
from agentcli.subagents.definitions.registry import AgentRegistry


def test_anchor_is_refused_before_anything_is_constructed(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []
    original = yaml.SafeLoader.construct_document

    def spy(self: yaml.SafeLoader, node: yaml.Node) -> object:
        built.append(node)
        return original(self, node)

    monkeypatch.setattr(yaml.SafeLoader, "construct_document", spy)
    with pytest.raises(AgentFileError, match=r"^refused YAML: anchors \(&x\) are not allowed in agent files$"):
        parse_front_matter("name: a\ndescription: &x [1, 2]\ntools: *x\n")
    assert built == []
    parse_front_matter("name: a\ndescription: fine\n")
    assert len(built) == 1  # the spy works: plain YAML is constructed


def test_lenient_reread_uses_the_same_loader() -> None:
    with pytest.raises(AgentFileError, match=r"anchors \(&l\)"):
        lenient_front_matter("name: x\ntools: &l [Read]\n")
    # The strict read fails on the unquoted ': ', the lenient one on the anchor: skipped, never expanded.
    with pytest.raises(AgentFileError, match=r"^refused YAML: anchors \(&l\)"):
        parse_front_matter("name: x\ndescription: Use when: always\ntools: &l [Read, Read]\nmodel: *l\n")


def test_deep_nesting_is_a_reason_not_a_crash() -> None:
    with pytest.raises(AgentFileError):
        parse_front_matter("name: " + "[" * 5000 + "]" * 5000)


def test_file_is_read_with_a_bounded_read(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"---\nname: big\ndescription: d\n---\n" + b"x" * MAX_FILE_BYTES)
    with pytest.raises(AgentFileError, match=f"larger than {MAX_FILE_BYTES} bytes"):
        parse_agent_file(path, scope="project", file_format="claude")


def test_scalar_mapping_keys_become_strings() -> None:
    data, _ = parse_front_matter("name: a\ndescription: d\n1: one\n")
    assert data == {"name": "a", "description": "d", "1": "one"}


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("code-reviewer", True),
        ("Reviewer 2 (strict)", True),
        ("x" * 64, True),
        ("x" * 65, False),
        ("a\x1b[31m", False),
        ("a\u202eb", False),
        ("a\u2028b", False),
        ("<system>", False),
        ("a`b`", False),
    ],
)
def test_name_problem(name: str, ok: bool) -> None:
    assert (name_problem(name) is None) is ok


def test_opencode_name_from_the_file_stem_is_checked_too(tmp_path: Path) -> None:
    path = tmp_path / "a<b.md"
    path.write_text("---\ndescription: d\n---\nBody\n")
    with pytest.raises(AgentFileError, match=r"^refused agent name: the name contains '<'"):
        parse_agent_file(path, scope="project", file_format="opencode")


def test_read_only_type_with_task_is_read_only_in_the_registry(tmp_path: Path) -> None:
    folder = tmp_path / ".agentcli" / "agents"
    folder.mkdir(parents=True)
    (folder / "lead.md").write_text("---\nname: lead\ndescription: Delegates.\ntools: Read, Grep, Task\n---\nx\n")
    reg = AgentRegistry.load(tmp_path, env={}, home=tmp_path / "home")
    lead = reg.types["lead"]
    assert lead.read_only and lead.as_dict()["read_only"] is True
    assert not AgentType("w", "d", "p", tools=("Read", "Task", "Bash")).read_only


def test_user_folder_symlinks_are_the_users_own(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "mine.md").write_text("---\nname: mine\ndescription: From my dotfiles.\n---\nx\n")
    (home / ".claude" / "agents").mkdir(parents=True)
    os.symlink(dotfiles / "mine.md", home / ".claude" / "agents" / "mine.md")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    reg = AgentRegistry.load(workspace, env={}, home=home)
    assert "mine" in reg.types and reg.problems == []


def test_workspace_that_is_the_home_dir_keeps_the_users_symlinks(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "dotfiles").mkdir(parents=True)
    (home / "dotfiles" / "mine.md").write_text("---\nname: mine\ndescription: From my dotfiles.\n---\nx\n")
    (home / ".claude" / "agents").mkdir(parents=True)
    os.symlink(home / "dotfiles" / "mine.md", home / ".claude" / "agents" / "mine.md")
    reg = AgentRegistry.load(home, env={}, home=home)
    assert "mine" in reg.types and reg.problems == []


def test_project_symlink_out_of_the_folder_is_skipped_even_inside_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude" / "agents").mkdir(parents=True)
    (ws / "notes.md").write_text("---\nname: notes\ndescription: Not an agent file.\n---\nx\n")
    os.symlink(ws / "notes.md", ws / ".claude" / "agents" / "notes.md")
    reg = AgentRegistry.load(ws, env={}, home=tmp_path / "home")
    assert "notes" not in reg.types
    (problem,) = reg.problems
    assert problem.reason.startswith("a symlink that leaves the agent folder")
