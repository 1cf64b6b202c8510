"""Where additional directories come from: agentcli's `[permissions] additional_directories` and Claude Code's
`additionalDirectories` (the person's always; a project's only once trusted), with one line for a skipped one."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.config.additional_dirs import resolve_additional_dirs
from agentcli.config.load import LoadedConfig, load_config
from agentcli.config.show import render_config


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class Setup:
    def __init__(self, tmp: Path) -> None:
        self.ws = (tmp / "ws").resolve()
        self.ws.mkdir()
        self.home = tmp / "home"
        self.env = {"XDG_CONFIG_HOME": str(tmp / "xdg"), "HOME": str(self.home)}
        self.user_file = tmp / "xdg" / "agentcli" / "config.toml"
        self.shared = (tmp / "shared").resolve()
        self.shared.mkdir()
        self.notes = (self.home / "notes").resolve()
        self.notes.mkdir(parents=True)

    def load(self, *, trusted: bool) -> LoadedConfig:
        return load_config(self.ws, env=self.env, trusted=trusted)


def test_user_settings_are_honoured_with_their_source(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    _write(s.user_file, '[permissions]\nadditional_directories = ["~/notes", "../shared"]\n')
    claude = _write(s.home / ".claude" / "settings.json",
                    json.dumps({"permissions": {"additionalDirectories": [str(s.shared), "/no/such/folder"]}}))
    loaded = s.load(trusted=False)
    dirs, skipped = loaded.additional_dirs
    assert [d.path for d in dirs] == [s.notes, s.shared]  # the second mention of shared adds nothing
    assert dirs[0].source == f"[permissions] additional_directories ({s.user_file})"
    assert skipped == [f"{claude}: additional directory /no/such/folder skipped: it does not exist"]
    shown = render_config(loaded)
    assert f"#   {s.notes}  (written ~/notes)  # [permissions] additional_directories ({s.user_file})" in shown
    assert f"#   skipped: {claude}: additional directory /no/such/folder skipped" in shown
    doc = json.loads(render_config(loaded, json=True))
    assert [d["path"] for d in doc["permissions.additional_directories.resolved"]["value"]] == [
        str(s.notes), str(s.shared)]


def test_untrusted_project_adds_none_and_is_named(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    project = _write(s.ws / ".agentcli" / "config.toml", '[permissions]\nadditional_directories = ["/"]\n')
    settings = _write(s.ws / ".claude" / "settings.json",
                      json.dumps({"permissions": {"additionalDirectories": [str(s.shared)]}}))
    loaded = s.load(trusted=False)
    assert loaded.additional_dirs == ([], [])
    warning = loaded.untrusted_warning() or ""
    assert f"permissions.additional_directories from {project}" in warning
    assert f"permissions.additionalDirectories from {settings}" in warning
    trusted = s.load(trusted=True)
    assert [d.path for d in trusted.additional_dirs[0]] == [Path("/"), s.shared]
    assert trusted.additional_dirs[0][1].source == str(settings)


def test_untrusted_project_may_keep_the_persons_folders(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    _write(s.user_file, f'[permissions]\nadditional_directories = ["{s.shared}", "{s.notes}"]\n')
    _write(s.ws / ".agentcli" / "config.toml", f'[permissions]\nadditional_directories = ["{s.shared}"]\n')
    loaded = s.load(trusted=False)
    assert [d.path for d in loaded.additional_dirs[0]] == [s.shared]  # narrowed, not widened
    assert loaded.untrusted_warning() is None


def test_a_file_or_missing_folder_is_one_line_and_the_workspace_adds_nothing(tmp_path: Path) -> None:
    ws = (tmp_path / "ws").resolve()
    (ws / "sub").mkdir(parents=True)
    (tmp_path / "file.txt").write_text("x")
    dirs, notes = resolve_additional_dirs(ws, [("../file.txt", "here"), ("../gone", "here"), ("sub", "here"),
                                               (".", "here"), ("", "here")])
    assert dirs == []
    assert notes == ["here: additional directory ../file.txt skipped: it is not a directory",
                     "here: additional directory ../gone skipped: it does not exist",
                     "here: additional directory '' skipped: not a path"]
