"""Output styles: the built-in ones, the person's and a trusted project's style files (an untrusted project's are not
read), how a style shapes the main agent's system prompt (the identity and the rules for untrusted data always
stay; agentcli's coding instructions only with `keep-coding-instructions`), and which style a session uses
(`[ui] output_style`, else Claude Code's `outputStyle`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.config import claude_output_style
from agentcli.prompts import Style, load_prompt, render_system_prompt, styled_role
from agentcli.subagents import OutputStyles


def _style(folder: Path, name: str, body: str, *, keep: bool | None = None, stem: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    keep_line = "" if keep is None else f"keep-coding-instructions: {str(keep).lower()}\n"
    path = folder / f"{stem or name.lower()}.md"
    path.write_text(f"---\nname: {name}\ndescription: The {name} style\n{keep_line}---\n{body}\n")
    return path


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    return ws, home, {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def test_built_in_styles_and_the_persons_and_a_trusted_projects_files_in_precedence(
        homes: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    ws, home, env = homes
    _style(home / ".claude" / "output-styles", "Pirate", "Talk like a pirate.")
    _style(tmp_path / "xdg" / "agentcli" / "output-styles", "Terse", "One line answers.")
    _style(ws / ".claude" / "output-styles", "Pirate", "The project's pirate.", stem="project-pirate")
    _style(ws / ".claude" / "output-styles", "Reviewer", "Review like a senior engineer.", keep=True)

    trusted = OutputStyles.load(ws, trusted=True, env=env)
    assert trusted.names() == ["default", "Pirate", "Reviewer", "Terse", "Explanatory", "Learning"]
    pirate = trusted.get("PIRATE")
    assert pirate is not None and pirate.instructions == "The project's pirate." and pirate.scope == "project"
    reviewer = trusted.get("reviewer")
    assert reviewer is not None and reviewer.keep_coding and reviewer.description == "The Reviewer style"
    explanatory = trusted.get("explanatory")
    assert explanatory is not None and explanatory.scope == "built-in" and explanatory.keep_coding

    untrusted = OutputStyles.load(ws, trusted=False, env=env)  # a project's style files are instructions
    assert untrusted.names() == ["default", "Pirate", "Terse", "Explanatory", "Learning"]
    assert untrusted.get("pirate").instructions == "Talk like a pirate."  # type: ignore[union-attr]
    assert untrusted.get("reviewer") is None and untrusted.get("default") is None


def test_a_broken_or_empty_style_file_is_skipped_with_its_reason(homes: tuple[Path, Path, dict[str, str]]) -> None:
    ws, home, env = homes
    folder = home / ".claude" / "output-styles"
    folder.mkdir(parents=True)
    (folder / "open.md").write_text("---\nname: Open\n")
    (folder / "empty.md").write_text("---\nname: Empty\n---\n\n")
    (folder / "plain.md").write_text("No front matter: the file name is its name.\n")
    found = OutputStyles.load(ws, trusted=False, env=env)
    assert [(Path(p.path).name, p.reason) for p in found.problems] == [
        ("empty.md", "the style has no instructions"), ("open.md", "the front matter is not closed by a '---' line")]
    assert found.get("plain") is not None


def test_a_style_replaces_the_role_but_never_the_rules_for_untrusted_data_or_the_facts(tmp_path: Path) -> None:
    plain = render_system_prompt(tmp_path, instructions=False).stable
    styled = render_system_prompt(tmp_path, instructions=False,
                                  style=Style("Pirate", "Talk like a pirate.", keep_coding=False)).stable
    identity = load_prompt("system.md").split("\n# How to work")[0].strip()
    assert styled.startswith(identity + "\n\n# Output style: Pirate\nTalk like a pirate.")
    assert "# How to work" in plain and "# How to work" not in styled  # the coding instructions left with it
    facts = plain[plain.index("# Untrusted data"):]
    assert styled.endswith(facts)  # the rules for untrusted data and the workspace facts, unchanged
    kept = styled_role(Style("Explanatory", "Explain.", keep_coding=True))
    assert kept.startswith(load_prompt("system.md").strip()) and kept.endswith("# Output style: Explanatory\nExplain.")
    assert styled_role(None) == load_prompt("system.md").strip()


def test_claude_codes_output_style_setting_the_projects_only_when_trusted(
        homes: tuple[Path, Path, dict[str, str]]) -> None:
    ws, home, env = homes
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"outputStyle": "Explanatory"}))
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.local.json").write_text(json.dumps({"outputStyle": "Learning"}))
    assert claude_output_style(ws, trusted=False, env=env) == "Explanatory"
    assert claude_output_style(ws, trusted=True, env=env) == "Learning"  # local over the person's
    assert claude_output_style(ws, trusted=True, env=env, sources=frozenset({"user"})) == "Explanatory"
    (home / ".claude" / "settings.json").write_text("{not json")
    assert claude_output_style(ws, trusted=False, env=env) == ""


def test_a_plugins_styles_are_named_by_it_and_a_projects_style_may_not_link_out(
        homes: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    from agentcli.plugins import read_plugin

    ws, _, env = homes
    plugin = tmp_path / "kit"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "kit", "outputStyles": "./more"}))
    _style(plugin / "output-styles", "Mentor", "Teach as you go.")
    _style(plugin / "more", "Brief", "Be brief.")
    secret = _style(tmp_path / "elsewhere", "Leak", "The person's private style.")
    (ws / ".claude" / "output-styles").mkdir(parents=True)
    (ws / ".claude" / "output-styles" / "leak.md").symlink_to(secret)
    found = OutputStyles.load(ws, trusted=True, env=env, plugins=[read_plugin(plugin, scope="user")])
    assert found.names() == ["default", "kit:Mentor", "kit:Brief", "Explanatory", "Learning"]
    mentor = found.get("kit:mentor")
    assert mentor is not None and mentor.scope == "plugin" and mentor.instructions == "Teach as you go."
    assert [p.reason.split(" (")[0] for p in found.problems] == ["a symlink that leaves its folder"]
