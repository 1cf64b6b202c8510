"""/skills and custom slash commands in the TUI (issue 28, items 1-2): the listing, completion and /help, a clash
with a built-in reported, and a command's expansion sent as the person's message."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from agentcli.ui.completion import command_candidates
from tests.ui.conftest import MAIN, SIZE, MakeApp, idle, notes, submit, wait_for


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


async def test_skills_listing_and_a_custom_command_turn(make_app: MakeApp, workspace: Path, home: Path) -> None:
    skill = workspace / ".claude" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release-notes\ndescription: Writes release notes.\n---\nSteps.\n")
    (workspace / ".claude" / "skills" / "broken").mkdir()
    (workspace / ".claude" / "skills" / "broken" / "SKILL.md").write_text("no front matter\n")
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Review a file\nargument-hint: [file]\n---\n"
                                        "Review @$1 for bugs.\n")
    (commands / "help.md").write_text("not the built-in\n")
    step = Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="Review @src/auth.py for bugs."),
                reply=Reply(text="It compares with a literal."))
    with FakeLLMServer(Script(steps=[step])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            offered = [c.label for c in command_candidates("re", app.prompt.commands)]
            assert offered == ["/resume", "/rewind", "/redo", "/review", "/release-notes"]
            await submit(pilot, "/skills")
            listing = notes(app)[-1]
            assert "  release-notes (project): Writes release notes." in listing
            assert "skipped: " in listing and "no YAML front matter" in listing
            await submit(pilot, "/help")
            text = notes(app)[-1]
            assert "  /review Review a file [file] (project)" in text
            assert "help.md: /help is a built-in command, which keeps its name; this file is not used" in text
            await submit(pilot, "/review src/auth.py")
            await idle(pilot)
            await wait_for(pilot, lambda: len(app.conversation.session.messages) >= 2)
            first = app.conversation.session.messages[0]
            assert first.text().startswith("Review @src/auth.py for bugs.")
            assert "/review src/auth.py" in notes(app)
    server.assert_done()
