"""`agentcli skills list`, `agentcli commands list` and the skills line of `agents show` (issue 28, items 1-2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from agentcli.cli.app import app

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_skills_list_names_each_skill_and_each_skipped_file(tmp_path: Path, isolated_env: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURES / "skills" / "anthropics", isolated_env / ".claude" / "skills")
    broken = ws / ".agents" / "skills" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    shadow = ws / ".claude" / "skills" / "webapp-testing"
    shadow.mkdir(parents=True)
    (shadow / "SKILL.md").write_text("---\nname: webapp-testing\ndescription: The project's own.\n"
                                     "allowed-tools: Bash(npm test:*)\n---\nRun \x1b[2Jnpm test.\n")
    result = runner.invoke(app, ["skills", "list", "--cwd", str(ws)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["NAME", "SCOPE", "DESCRIPTION", "SOURCE"]
    assert lines[1].startswith("webapp-testing    project  The project's own.")
    assert [line.split()[0] for line in lines[2:4]] == ["brand-guidelines", "internal-comms"]
    assert "  .agents/skills/broken/SKILL.md: missing required 'description' in the front matter" in lines
    assert "  webapp-testing: Bash(npm test:*)" in lines
    assert "  webapp-testing (~/.claude/skills/webapp-testing/SKILL.md) is hidden by " \
           ".claude/skills/webapp-testing/SKILL.md" in lines
    listed = json.loads(runner.invoke(app, ["skills", "list", "--cwd", str(ws), "--json"]).output)
    assert [s["name"] for s in listed["skills"]] == ["webapp-testing", "brand-guidelines", "internal-comms"]
    assert listed["skipped"][0]["reason"] == "missing required 'description' in the front matter"
    assert listed["shadowed"][0]["shadowed_by"] == str(shadow / "SKILL.md")


def test_commands_list_and_agents_show_name_what_they_use(tmp_path: Path, isolated_env: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURES / "commands" / "wshobson", ws / ".claude" / "commands")
    (ws / ".claude" / "commands" / "model.md").write_text("mine\n")
    (ws / ".claude" / "agents").mkdir(parents=True)
    (ws / ".claude" / "agents" / "writer.md").write_text("---\nname: writer\ndescription: Writes.\n"
                                                         "skills: [internal-comms, nope]\n---\nYou write.\n")
    shutil.copytree(FIXTURES / "skills" / "anthropics" / "internal-comms",
                    isolated_env / ".claude" / "skills" / "internal-comms")
    result = runner.invoke(app, ["commands", "list", "--cwd", str(ws)])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.output.splitlines()[1:5]}
    assert set(rows) == {"/git-workflow", "/multi-platform", "/onboard", "/internal-comms"}
    assert rows["/git-workflow"].split()[1] == "project:workflows" and "  user skill  " in rows["/internal-comms"]
    assert "  .claude/commands/model.md: /model is a built-in command, which keeps its name; this file is not used" \
           in result.output.splitlines()
    shown = runner.invoke(app, ["agents", "show", "writer", "--cwd", str(ws)])
    assert "  skills:      internal-comms, nope (not found): preloaded into its system prompt" in shown.output
