"""`agentcli plugins update` and `plugins marketplace update` through the real CLI: a git marketplace gets a new
version of a plugin with a new hook; the update fetches the marketplace again, shows the new hook marked new and
asks, keeps the person's on/off choice, leaves the replaced copy for running sessions; an unchanged plugin is
up to date; a plugin installed from its own folder updates from it; failures are one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.plugins import PluginStore
from tests.plugins.test_plugins import MARKET, _git_repo

runner = CliRunner()
GIT_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null"}


def _commit(repo: Path, message: str) -> None:
    for args in (["add", "-A"], ["commit", "-qm", message]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                       capture_output=True, env={**GIT_ENV, "HOME": str(repo.parent)})


def _bump_edit_guard(root: Path) -> None:
    """edit-guard 1.1.0: a second hook, a PostToolUse one."""
    plugin = root / "plugins" / "edit-guard"
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({**manifest, "version": "1.1.0"}))
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())
    hooks["hooks"]["PostToolUse"] = [{"matcher": "Write", "hooks": [
        {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/audit.py"}]}]
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    (plugin / "hooks" / "audit.py").write_text("print('audited')\n")


def test_update_fetches_again_marks_what_is_new_and_keeps_the_choice(isolated_env: Path, tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "market-repo", MARKET)
    assert runner.invoke(app, ["plugins", "marketplace", "add", repo.as_uri()]).exit_code == 0
    for plugin in ("edit-guard", "feature-dev"):
        installed = runner.invoke(app, ["plugins", "install", f"{plugin}@fixture-plugins", "--yes"])
        assert installed.exit_code == 0, installed.output
    assert runner.invoke(app, ["plugins", "disable", "edit-guard@fixture-plugins"]).exit_code == 0
    store = PluginStore()
    old_place = store.installed()["edit-guard@fixture-plugins"]

    same = runner.invoke(app, ["plugins", "update"])
    assert same.exit_code == 0, same.output
    assert "edit-guard@fixture-plugins is up to date (1.0.0)" in same.output
    assert "feature-dev@fixture-plugins is up to date (1.0.0)" in same.output

    _bump_edit_guard(repo)
    _commit(repo, "edit-guard 1.1.0")
    refused = runner.invoke(app, ["plugins", "update", "edit-guard@fixture-plugins"])  # no terminal, no --yes
    assert refused.exit_code == 1, refused.output
    assert "(new) hook PostToolUse (Write): python3 ${CLAUDE_PLUGIN_ROOT}/hooks/audit.py" in refused.output
    assert "    hook PreToolUse (Edit|Write|MultiEdit): python3" in refused.output  # armed before: not marked
    assert "not updated: run again with --yes" in refused.output
    assert store.installed()["edit-guard@fixture-plugins"] == old_place
    assert not list((store.root / "staging").iterdir())

    updated = runner.invoke(app, ["plugins", "update", "edit-guard@fixture-plugins", "--yes"])
    assert updated.exit_code == 0, updated.output
    assert "updated edit-guard@fixture-plugins: 1.0.0 -> 1.1.0" in updated.output
    new_place = store.installed()["edit-guard@fixture-plugins"]
    assert new_place.name == "1.1.0" and (new_place / "hooks" / "audit.py").is_file()
    assert old_place.is_dir()  # a session started before the update still runs its hooks from there
    assert store.enabled()["edit-guard@fixture-plugins"] is False  # the person turned it off; it stays off

    again = runner.invoke(app, ["plugins", "update", "edit-guard@fixture-plugins"])
    assert again.exit_code == 0 and "is up to date (1.1.0)" in again.output
    assert runner.invoke(app, ["plugins", "remove", "edit-guard@fixture-plugins"]).exit_code == 0
    assert not old_place.exists() and not new_place.exists()


def test_a_plugin_of_its_own_updates_from_its_folder_and_failures_are_one_line(isolated_env: Path,
                                                                              tmp_path: Path) -> None:
    folder = tmp_path / "guard"
    subprocess.run(["cp", "-r", str(MARKET / "plugins" / "edit-guard"), str(folder)], check=True)
    assert runner.invoke(app, ["plugins", "install", str(folder), "--yes"]).exit_code == 0
    first = PluginStore().installed()["edit-guard@local"]
    (folder / "hooks" / "guard.py").write_text("print('changed, same version')\n")
    updated = runner.invoke(app, ["plugins", "update", "edit-guard@local", "--yes"])
    assert updated.exit_code == 0, updated.output
    assert "updated edit-guard@local: 1.0.0 -> 1.0.0" in updated.output
    place = PluginStore().installed()["edit-guard@local"]
    assert (place / "hooks" / "guard.py").read_text() == "print('changed, same version')\n"
    assert place != first and place.name.startswith("1.0.0-")  # a folder of its own: the first copy is in use
    assert (first / "hooks" / "guard.py").read_text() != "print('changed, same version')\n"

    manifest = folder / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace('"edit-guard"', '"other-name"'))
    renamed = runner.invoke(app, ["plugins", "update", "edit-guard@local", "--yes"])
    assert renamed.exit_code == 1
    assert "edit-guard@local: not updated: edit-guard@local: its manifest now names it 'other-name'" in renamed.output
    for args, line in ((["plugins", "update", "nope@local"], "nope@local: not updated: nope@local is not installed"),
                       (["plugins", "marketplace", "update", "nowhere"], "no marketplace named 'nowhere'")):
        failed = runner.invoke(app, args)
        assert failed.exit_code == 1 and line in failed.output and "Traceback" not in failed.output, failed.output


def test_a_marketplace_that_renames_itself_is_not_updated(isolated_env: Path, tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "market-repo", MARKET)
    assert runner.invoke(app, ["plugins", "marketplace", "add", repo.as_uri()]).exit_code == 0
    same = runner.invoke(app, ["plugins", "marketplace", "update"])
    assert same.exit_code == 0 and "updated marketplace fixture-plugins: 5 plugin(s)" in same.output
    index = repo / ".claude-plugin" / "marketplace.json"
    index.write_text(index.read_text().replace('"fixture-plugins"', '"other-plugins"', 1))
    _commit(repo, "renamed")
    renamed = runner.invoke(app, ["plugins", "marketplace", "update", "fixture-plugins"])
    assert renamed.exit_code == 1
    assert "now names itself 'other-plugins'; not updated" in renamed.output
    assert list(PluginStore().marketplaces()) == ["fixture-plugins"]
