"""`agentcli plugins` on what goes wrong: a broken store file, a marketplace entry whose folder is missing, an
unknown plugin; each is one line and exit 1, never a traceback, and nothing is half-installed."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agentcli.cli.app import app

runner = CliRunner()
MARKET = Path(__file__).parents[1] / "fixtures" / "plugins"


def test_failures_are_one_line_and_leave_nothing(isolated_env: Path) -> None:
    added = runner.invoke(app, ["plugins", "marketplace", "add", str(MARKET / "wshobson-agents")])
    assert added.exit_code == 0, added.output
    assert "added marketplace claude-code-workflows" in added.output
    missing = runner.invoke(app, ["plugins", "install", "debugging-toolkit@claude-code-workflows", "--yes"])
    assert missing.exit_code == 1
    assert "debugging-toolkit: no such folder" in missing.output
    unknown = runner.invoke(app, ["plugins", "install", "nope@claude-code-workflows", "--yes"])
    assert unknown.exit_code == 1 and "has no plugin 'nope'" in unknown.output
    nowhere = runner.invoke(app, ["plugins", "install", "x@nowhere", "--yes"])
    assert nowhere.exit_code == 1 and "no marketplace named 'nowhere'" in nowhere.output
    state = isolated_env / ".local/share" / "agentcli" / "plugins" / "state.json"
    state.write_text("{not json")
    for args in (["plugins", "list"], ["plugins", "disable", "a@b"], ["plugins", "remove", "a@b"],
                 ["plugins", "marketplace", "list"]):
        broken = runner.invoke(app, args)
        assert broken.exit_code == 1, (args, broken.output)
        assert f"plugin store: {state} is not valid JSON (line 1" in broken.output
        assert "Traceback" not in broken.output
    assert state.read_text() == "{not json"  # nothing written over what the person may want back
    assert not list((state.parent / "staging").iterdir())


def test_validate_reads_a_marketplace_or_plugin_as_an_install_would(isolated_env: Path, tmp_path: Path) -> None:
    good = runner.invoke(app, ["plugins", "validate", str(MARKET / "marketplace")])
    assert good.exit_code == 0, good.output
    assert "marketplace fixture-plugins: 5 plugin(s)" in good.output and good.output.rstrip().endswith("valid")
    assert "edit-guard 1.0.0: brings 0 commands, 0 agents, 0 skills; runs 1 (hook commands and servers)" in good.output
    partial = runner.invoke(app, ["plugins", "validate", str(MARKET / "anthropics-skills")])
    assert partial.exit_code == 1
    assert "example-skills (no version): brings 0 commands, 0 agents, 1 skill" in partial.output
    assert "problem: plugin document-skills: skills: './skills/pdf' does not exist" in partial.output
    broken = tmp_path / "broken"
    (broken / ".claude-plugin").mkdir(parents=True)
    (broken / ".claude-plugin" / "plugin.json").write_text('{"name": "Bad Name"}')
    bad = runner.invoke(app, ["plugins", "validate", str(broken)])
    assert bad.exit_code == 1 and "is not lowercase letters, digits and hyphens" in bad.output
    assert "Traceback" not in bad.output
    assert not (isolated_env / ".local/share" / "agentcli" / "plugins").exists()  # nothing was kept
