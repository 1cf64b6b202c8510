"""Custom slash commands (issue 28, item 2): discovery and namespaces, the vendored public corpus, broken files and
clashes, `$ARGUMENTS` / `$N`, and the message a command sends (`!`commands`` only trusted and approved, `@paths`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentcli.frontend.command_files import command_message
from agentcli.frontend.slash_commands import CommandSet, expand
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.ui.commands import COMMANDS

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "commands" / "wshobson"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".claude" / "commands").mkdir(parents=True)
    (home / ".claude" / "commands").mkdir(parents=True)
    return ws, home


def _load(ws: Path, home: Path) -> CommandSet:
    return CommandSet.load(ws, reserved=COMMANDS, home=home, env={})


def _ctx(ws: Path, policy: PermissionPolicy) -> ToolContext:
    return ToolContext(workspace=ws.resolve(), agent="main", session_id="s", permissions=policy,
                       file_locks=FileLocks())


def test_every_vendored_public_command_loads_with_its_namespace(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    shutil.copytree(CORPUS, ws / ".claude" / "commands", dirs_exist_ok=True)
    found = _load(ws, home)
    assert found.problems == []
    assert sorted(found.commands) == ["tools:onboard", "workflows:git-workflow", "workflows:multi-platform"]
    git = found.find("git-workflow")
    assert git is found.find("workflows:git-workflow") and not isinstance(git, list) and git is not None
    assert git.model == "claude-opus-4-1" and git.description == "Complete Git workflow using specialized agents:"
    assert git.label.endswith("(project:workflows)")
    text = expand(git, "main").text()
    assert text.startswith("Complete Git workflow") and text.endswith("Target branch: main")


def test_broken_and_clashing_files_are_one_line_each(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    folder = ws / ".claude" / "commands"
    (folder / "ok.md").write_text("Say hi to $ARGUMENTS\n")
    (folder / "empty.md").write_text("---\ndescription: nothing\n---\n\n")
    (folder / "bad.md").write_text("---\ndescription: [x\n---\nbody\n")
    (folder / "latin.md").write_bytes(b"caf\xe9\n")
    (folder / "help.md").write_text("my help\n")  # a built-in's name
    (folder / "two words.md").write_text("x\n")
    found = _load(ws, home)
    assert list(found.commands) == ["ok"]
    reasons = {Path(p.path).name: p.reason for p in found.problems}
    assert reasons["empty.md"] == "the command has no text after its front matter"
    assert reasons["bad.md"].startswith("bad YAML front matter")
    assert reasons["latin.md"] == "not UTF-8 text"
    assert reasons["help.md"] == "/help is a built-in command, which keeps its name; this file is not used"
    assert reasons["two words.md"].startswith("the file name cannot be a command name")
    assert all("\n" not in r for r in reasons.values())


def test_project_commands_shadow_the_persons_and_stems_can_be_ambiguous(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    (home / ".claude" / "commands" / "review.md").write_text("user review\n")
    (ws / ".claude" / "commands" / "review.md").write_text("project review\n")
    for space in ("frontend", "backend"):
        (ws / ".claude" / "commands" / space).mkdir()
        (ws / ".claude" / "commands" / space / "test.md").write_text(f"{space} tests\n")
    found = _load(ws, home)
    review = found.find("review")
    assert review is not None and not isinstance(review, list) and review.scope == "project"
    assert [c.scope for c in found.shadowed] == ["user"]
    both = found.find("test")
    assert isinstance(both, list) and sorted(c.qualified for c in both) == ["backend:test", "frontend:test"]
    assert set(found.completions()) == {"review", "frontend:test", "backend:test"}


def test_arguments_fill_their_placeholders_or_come_last(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    folder = ws / ".claude" / "commands"
    (folder / "fix.md").write_text("---\nargument-hint: [issue] [priority]\n---\nFix #$1 ($2, not $3): $ARGUMENTS\n")
    (folder / "plain.md").write_text("Summarise the repository.\n")
    found = _load(ws, home)
    fix, plain = found.commands["fix"], found.commands["plain"]
    assert fix.argument_hint == "[issue] [priority]"
    assert expand(fix, '123 "very high"').text() == 'Fix #123 (very high, not ): 123 "very high"'
    assert expand(plain, "briefly").text() == "Summarise the repository.\n\nARGUMENTS: briefly"
    assert expand(plain, "").text() == "Summarise the repository."


async def test_shell_lines_run_only_trusted_and_approved(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    (ws / "notes.txt").write_text("the notes\n")
    (ws / ".claude" / "commands" / "status.md").write_text(
        "---\nallowed-tools: Bash(echo:*)\n---\nState: !`echo from-the-shell $1`\nRead @notes.txt and $ARGUMENTS\n")
    command = _load(ws, home).commands["status"]
    assert command.allowed_tools == ("Bash(echo:*)",)

    untrusted = await command_message(command, "x", _ctx(ws, PermissionPolicy("auto")), trusted=False)
    assert "[not run: echo from-the-shell x]" in untrusted.prompt and "from-the-shell x\n" not in untrusted.prompt
    assert untrusted.refused == ["echo from-the-shell x"]
    assert "the workspace is not trusted" in untrusted.notes[0]

    asked = PermissionPolicy("ask", non_interactive=True)  # a one-shot without --yes: no one to approve
    refused = await command_message(command, "x", _ctx(ws, asked), trusted=True)
    assert refused.refused == ["echo from-the-shell x"] and "not run: Permission denied" in refused.notes[0]

    ran = await command_message(command, "x", _ctx(ws, PermissionPolicy("auto")), trusted=True)
    assert ran.refused == []
    assert '<person_command command="echo from-the-shell x" status="exit 0">\nfrom-the-shell x\n' in ran.prompt
    assert ran.prompt.endswith("Read @notes.txt and x")
    assert len(ran.extras) == 1 and "the notes" in ran.extras[0]  # @notes.txt attached through Read
    assert any(note.startswith("📎 notes.txt") for note in ran.notes)


def test_skills_are_commands_too_after_builtins_and_files(dirs: tuple[Path, Path]) -> None:
    from agentcli.subagents.definitions.skills import SkillCatalog

    ws, home = dirs
    for name, extra in (("notes", ""), ("hidden", "user-invocable: false\n"), ("review", ""), ("help", "")):
        folder = home / ".claude" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill.\n{extra}---\n"
                                         f"Do {name} for $ARGUMENTS.\n")
    (ws / ".claude" / "commands" / "review.md").write_text("The file's review.\n")
    skills = SkillCatalog.load(ws, home=home, env={}).skills.values()
    found = CommandSet.load(ws, reserved=COMMANDS, home=home, env={}, skills=skills)
    assert sorted(found.commands) == ["notes", "review"]
    notes, review = found.commands["notes"], found.commands["review"]
    assert notes.skill_folder == (home / ".claude" / "skills" / "notes").resolve() and review.skill_folder is None
    assert notes.label == "The notes skill. (user skill)"
    assert expand(notes, "the release").text() == "Do notes for the release."
