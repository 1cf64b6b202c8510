"""Settings changed in the TUI are kept in the user's config file (comments and other keys untouched, never a
project's file) and used by the next session: the theme (Ctrl+P → Change theme) and notifications (/notify)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from agentcli.config.write import SaveError, save_user_setting
from agentcli.paths import user_config_file
from agentcli.testing.fake_llm import FakeLLMServer, Script
from tests.ui.conftest import MakeApp, notes, submit, wait_for

USER_CONFIG = """# my settings
[ui]  # the TUI
notify = "off"   # quiet please

[models.main]
model = "claude-sonnet-4-5"
"""


def test_a_saved_setting_keeps_the_files_comments_and_other_keys() -> None:
    path = user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(USER_CONFIG)
    assert save_user_setting(("ui", "theme"), "nord") == path
    text = path.read_text()
    assert "# my settings" in text and "# quiet please" in text and "# the TUI" in text
    assert tomllib.loads(text) == {"ui": {"notify": "off", "theme": "nord"},
                                   "models": {"main": {"model": "claude-sonnet-4-5"}}}
    save_user_setting(("ui", "notify"), "bell")
    assert tomllib.loads(path.read_text())["ui"]["notify"] == "bell"
    assert [p.name for p in path.parent.iterdir()] == ["config.toml"]  # no temporary file left


def test_a_config_that_is_not_toml_is_left_alone_with_a_one_line_error() -> None:
    path = user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[ui\nnotify = ")
    with pytest.raises(SaveError) as caught:
        save_user_setting(("ui", "theme"), "nord")
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)
    assert path.read_text() == "[ui\nnotify = "


def test_a_new_config_file_is_created_private() -> None:
    path = save_user_setting(("ui", "theme"), "nord")
    assert tomllib.loads(path.read_text()) == {"ui": {"theme": "nord"}}
    assert os.stat(path.parent).st_mode & 0o077 == 0


async def test_the_theme_and_notifications_chosen_in_the_tui_are_saved_and_used_next_time(
    make_app: MakeApp, workspace: Path
) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(100, 30)) as pilot:
            default = app.theme
            chosen = next(name for name in app.available_themes if name != default and name != "textual-ansi")
            app.theme = chosen  # what Ctrl+P → Change theme does
            await wait_for(pilot, lambda: user_config_file().exists())
            await submit(pilot, "/notify off")
            await wait_for(pilot, lambda: app.notifier.mode == "off")
            await submit(pilot, "/notify loud")
            await wait_for(pilot, lambda: any("unknown choice 'loud'" in n for n in notes(app)))
        saved = tomllib.loads(user_config_file().read_text())
        assert saved == {"ui": {"theme": chosen, "notify": "off"}}
        assert not (workspace / ".agentcli").exists()  # never the project's file

        again = make_app(server)  # the next session reads the user config
        async with again.run_test(size=(100, 30)):
            assert again.theme == chosen and again.notifier.mode == "off"


async def test_an_unknown_theme_in_the_config_is_one_line_and_the_default_is_used(
    make_app: MakeApp, workspace: Path
) -> None:
    path = user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[ui]\ntheme = "no-such-theme"\n')
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: any("no-such-theme" in n for n in notes(app)))
            assert app.theme == "textual-dark"
    assert path.read_text() == '[ui]\ntheme = "no-such-theme"\n'  # not rewritten
