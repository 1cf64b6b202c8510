"""Which servers there are: built-ins found on PATH (or beside agentcli's Python), the first found per language,
`[lsp.servers]` tables over them, roots by marker files; `agentcli lsp list` and `config show` say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.config.schema import Settings
from agentcli.lsp import chosen, configured_servers, found_line, problems
from agentcli.lsp.specs import root_for, server_for
from tests.lsp.conftest import write


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH of its own holding `pyright-langserver` and `gopls` (never run here)."""
    folder = tmp_path / "bin"
    for name in ("pyright-langserver", "gopls"):
        program = write(folder / name, "#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    return folder


def test_the_first_found_python_server_is_used_and_a_table_changes_a_builtin(bin_dir: Path) -> None:
    settings = Settings(lsp={"servers": {"basedpyright": {"disabled": True},
                                         "gopls": {"env": {"GOFLAGS": "-mod=mod"}, "root_markers": ["go.mod"]}}})
    specs = configured_servers(settings)
    used = chosen(specs)
    assert used["pyright"].executable() == str(bin_dir / "pyright-langserver")
    assert "basedpyright" not in used and "pyrefly" not in used
    assert used["gopls"].env == {"GOFLAGS": "-mod=mod"} and used["gopls"].command == ("gopls",)
    chosen_for_py = server_for(specs, Path("/w/x.py"))
    assert chosen_for_py is not None and chosen_for_py.name == "pyright"
    assert server_for(specs, Path("/w/x.rb")) is None
    assert found_line(settings) == "[lsp] found: pyright (python), gopls (go)"
    assert found_line(Settings(lsp={"enabled": False})) == "[lsp] off (enabled = false)"


def test_an_added_server_needs_a_command_and_is_preferred_for_its_files(bin_dir: Path) -> None:
    settings = Settings(lsp={"servers": {"mine": {"command": ["gopls", "serve"], "extensions": [".py"]},
                                         "broken": {"extensions": [".rb"]}}})
    specs = configured_servers(settings)
    assert [s.name for s in specs][:1] == ["mine"] and "broken" not in [s.name for s in specs]
    assert problems(settings) == [
        "[lsp.servers.broken]: needs `command` and `extensions` (it is not a built-in server)"]
    picked = server_for(specs, Path("/w/x.py"))
    assert picked is not None and picked.name == "mine" and picked.argv() == [str(bin_dir / "gopls"), "serve"]


def test_a_root_is_the_nearest_folder_with_a_marker_inside_the_workspace(tmp_path: Path) -> None:
    gopls = next(s for s in configured_servers(Settings()) if s.name == "gopls")
    write(tmp_path / "svc" / "go.mod", "module svc\n")
    inner = write(tmp_path / "svc" / "pkg" / "a.go", "package pkg\n")
    assert root_for(gopls, inner, tmp_path) == tmp_path / "svc"
    assert root_for(gopls, write(tmp_path / "b.go", "package b\n"), tmp_path) == tmp_path


def test_lsp_list_and_config_show_say_which_are_found(bin_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    ws = tmp_path / "ws"
    ws.mkdir()
    listed = runner.invoke(app, ["lsp", "list", "--cwd", str(ws)])
    assert listed.exit_code == 0, listed.output
    lines = {line.split()[0]: line for line in listed.output.splitlines()}
    assert f"found: {bin_dir / 'gopls'}  (used)" in lines["gopls"]
    assert lines["ty"].endswith("not found") and "not found  [may run project code" in lines["typescript"]
    rows = json.loads(runner.invoke(app, ["lsp", "list", "--cwd", str(ws), "--json"]).output)["servers"]
    assert {row["name"] for row in rows if row["used"]} >= {"gopls"}
    shown = runner.invoke(app, ["config", "show", "--cwd", str(ws)])
    assert shown.exit_code == 0 and "# [lsp] found: " in shown.output and "gopls (go)" in shown.output


def test_a_server_that_may_run_the_projects_code_needs_trust_or_the_sandbox(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcli.lsp import LanguageServers

    folder = tmp_path / "bin"
    write(folder / "rust-analyzer", "#!/bin/sh\nexit 0\n").chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    source = write(tmp_path / "ws" / "src" / "main.rs", "fn main() {}\n")
    untrusted = LanguageServers(Settings(), {}, None, trusted=False)
    assert untrusted.slot_for(source, tmp_path / "ws", None) is None  # never started: build scripts would run
    trusted = LanguageServers(Settings(), {}, None, trusted=True)
    slot = trusted.slot_for(source, tmp_path / "ws", None)
    assert slot is not None and slot.spec.name == "rust-analyzer" and slot.conn is None  # made, not started


def test_enabled_false_starts_none_and_max_servers_caps_the_roots(tmp_path: Path, bin_dir: Path) -> None:
    from agentcli.lsp import LanguageServers

    first, second = write(tmp_path / "a" / "go.mod", "module a\n"), write(tmp_path / "b" / "go.mod", "module b\n")
    a_go, b_go = write(first.parent / "a.go", "package a\n"), write(second.parent / "b.go", "package b\n")
    off = LanguageServers(Settings(lsp={"enabled": False}), {})
    assert off.slot_for(a_go, tmp_path, None) is None
    capped = LanguageServers(Settings(lsp={"max_servers": 1}), {})
    slot = capped.slot_for(a_go, tmp_path, None)
    assert slot is not None and slot.root == first.parent and slot.spec.name == "gopls"
    assert capped.slot_for(a_go, tmp_path, None) is slot  # the same root: the same server
    assert capped.slot_for(b_go, tmp_path, None) is None  # a second root would be a second server
