"""Claude Code's settings.json permissions read as agentcli's rules: the syntax, the files, trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.config.claude_settings import agentcli_rule, read_claude_permissions


@pytest.mark.parametrize(("written", "read"), [
    ("Bash", "Bash"),
    ("Bash(npm run test:*)", "Bash(npm run test:*)"),
    ("Bash(git * main)", "Bash(git * main)"),
    ("Read(./secrets/**)", "Read(secrets/**)"),
    ("Read(.env)", "Read(.env)"),
    ("Edit(/src/**/*.ts)", "Edit(/src/**/*.ts)"),
    ("Read(//ws/docs/**)", "Read(docs/**)"),
    ("Read(~/ws/notes.md)", "Read(notes.md)"),
    ("Read(//etc/passwd)", "Read(//etc/passwd)"),  # outside: matched against additional directories' files
    ("Edit(~/.bashrc)", "Edit(//.bashrc)"),  # home is / here
    ("WebFetch(domain:example.com)", "WebFetch(domain:example.com)"),
    ("mcp__github", "mcp__github"),
    ("mcp__github__create_issue", "mcp__github__create_issue"),
    ("mcp__github__*", "mcp__github"),
    ("Task(explore)", "Task(explore: *)"),
    ("Agent(code-reviewer)", "Task(code-reviewer: *)"),
])
def test_claude_rules_read_as_agentcli_rules(written: str, read: str) -> None:
    assert agentcli_rule(written, Path("/ws"), Path("/")) == (read, "")


@pytest.mark.parametrize(("written", "why"), [
    ("mcp__github__get_*", "no other wildcards"),
    ("Bash(", "not a rule"),
    ("WebFetch(domain:)", "names no host"),
])
def test_rules_agentcli_cannot_express_say_why(written: str, why: str) -> None:
    rule, reason = agentcli_rule(written, Path("/ws"), Path("/home/me"))
    assert rule is None and why in reason


def _write(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


def test_untrusted_project_gives_only_deny_and_names_what_it_would_widen(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    user = _write(home / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(ls:*)"], "ask": ["Bash"]}})
    shared = _write(ws / ".claude" / "settings.json", {"permissions": {
        "deny": ["Bash(rm:*)"], "allow": ["Bash"], "ask": [], "defaultMode": "bypassPermissions",
        "additionalDirectories": ["../other"]}})
    env = {"HOME": str(home)}
    found = read_claude_permissions(ws, trusted=False, env=env)
    assert [(r.kind, r.rule, r.source) for r in found.rules] == [
        ("ask", "Bash", str(user)), ("allow", "Bash(ls:*)", str(user)), ("deny", "Bash(rm:*)", str(shared))]
    assert found.mode is None
    assert found.ignored == [(str(shared), "allow"), (str(shared), "defaultMode"),
                             (str(shared), "additionalDirectories")]
    trusted = read_claude_permissions(ws, trusted=True, env=env)
    assert ("allow", "Bash") in [(r.kind, r.rule) for r in trusted.rules]
    assert (trusted.mode, trusted.mode_source) == ("auto", str(shared))
    assert trusted.notes == []
    assert found.directories == [] and trusted.directories == [("../other", str(shared))]


def test_local_settings_mode_wins_and_sources_limit_the_files(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _write(ws / ".claude" / "settings.json", {"permissions": {"defaultMode": "acceptEdits"}})
    local = _write(ws / ".claude" / "settings.local.json", {"permissions": {"defaultMode": "plan"}})
    found = read_claude_permissions(ws, trusted=True, env={"HOME": str(home)})
    assert (found.mode, found.mode_source) == ("readonly", str(local))
    only_project = read_claude_permissions(ws, trusted=True, env={"HOME": str(home)}, sources=frozenset({"project"}))
    assert only_project.mode == "accept_edits"


def test_broken_files_and_entries_are_one_note_each_never_fatal(tmp_path: Path) -> None:
    ws, claude_dir = tmp_path / "ws", tmp_path / "cc"
    user = _write(claude_dir / "settings.json", "{not json")
    shared = _write(ws / ".claude" / "settings.json", {"permissions": {
        "deny": "Bash", "allow": [3, "Read(//elsewhere/x)"], "defaultMode": "dontAsk"}})
    found = read_claude_permissions(ws, trusted=True, env={"CLAUDE_CONFIG_DIR": str(claude_dir)})
    assert [r.rule for r in found.rules] == ["Read(//elsewhere/x)"]
    assert found.notes == [
        f"permissions in {user} not read: not valid JSON (line 1: Expecting property name enclosed in double quotes)",
        f"{shared}: permissions.deny skipped: expected a list of rules",
        f"{shared}: permissions.allow entry 3 skipped: expected a rule string",
        f"{shared}: permissions.defaultMode 'dontAsk' not used: agentcli knows default, acceptEdits, plan, "
        "bypassPermissions",
    ]
