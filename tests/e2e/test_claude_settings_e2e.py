"""Claude Code's settings.json permission rules through the real CLI and the fake server: the person's deny rule
refuses Bash even with --yes, an untrusted project's deny rule narrows while its allow rule waits for trust, and
`config show` names the file of each rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli


def _settings(folder: Path, permissions: dict[str, Any], name: str = "settings.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps({"permissions": permissions}))
    return path


def _bash_refused(command: str, said: str) -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": command})])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="Permission denied"),
             reply=Reply(text=said)),
    ])


def test_a_deny_rule_of_the_persons_settings_json_refuses_bash_even_with_yes(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "keep.txt").write_text("precious\n")
    user = _settings(home / ".claude", {"deny": ["Bash(rm:*)"], "allow": ["Bash(ls:*)"]})
    with FakeLLMServer(_bash_refused("rm -f keep.txt", "The rule refused it.")) as server:
        proc = run_cli(["run", "--output-format", "json", "--yes", "--cwd", str(ws), "tidy up"],
                       cli_env("anthropic", server, home, HOME=str(home)))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert (ws / "keep.txt").exists(), "a denied command never runs, even with --yes"
    assert last_json(proc.stdout)["result"] == "The rule refused it."
    refused = server.requests[-1].body["messages"][-1]["content"][0]
    assert refused["is_error"] is True
    assert f"blocked by the rule 'Bash(rm:*)' in {user} permissions.deny" in str(refused["content"])


def test_claude_config_dir_is_where_the_persons_settings_are(tmp_path: Path) -> None:
    ws, home, elsewhere = tmp_path / "ws", tmp_path / "home", tmp_path / "claude-config"
    ws.mkdir()
    (ws / "keep.txt").write_text("precious\n")
    _settings(home / ".claude", {})  # the default place says nothing
    theirs = _settings(elsewhere, {"deny": ["Bash(rm *)", "ExitPlanMode"]})
    with FakeLLMServer(_bash_refused("rm -f keep.txt", "Refused.")) as server:
        proc = run_cli(["run", "--output-format", "json", "--yes", "--cwd", str(ws), "tidy up"],
                       cli_env("anthropic", server, home, HOME=str(home), CLAUDE_CONFIG_DIR=str(elsewhere)))
    assert proc.returncode == 0, proc.stderr
    assert (ws / "keep.txt").exists()
    note = f"{theirs}: permissions.deny rule 'ExitPlanMode' has no effect: agentcli has no ExitPlanMode tool"
    assert proc.stderr.count(note) == 1, proc.stderr  # named once, never fatal


def test_an_untrusted_projects_deny_narrows_and_its_allow_waits_for_trust(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    project = _settings(ws / ".claude",
                        {"deny": ["Bash(touch *)"], "allow": ["Bash"], "defaultMode": "bypassPermissions"})
    with FakeLLMServer(_bash_refused("touch made.txt", "Refused by the project.")) as server:
        env = cli_env("anthropic", server, home, HOME=str(home))
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "make a file"], env)
    assert proc.returncode == 0, proc.stderr
    assert not (ws / "made.txt").exists()
    refused = str(server.requests[-1].body["messages"][-1]["content"][0]["content"])
    assert f"blocked by the rule 'Bash(touch *)' in {project} permissions.deny" in refused
    warning = [line for line in proc.stderr.splitlines() if "untrusted workspace" in line]
    assert len(warning) == 1, proc.stderr
    assert f"permissions.allow, permissions.defaultMode from {project}" in warning[0]

    shown = run_cli(["config", "show", "--cwd", str(ws)], env)
    assert shown.returncode == 0, shown.stderr
    assert f"deny   Bash(touch *)  # {project}" in shown.stdout
    assert "allow  Bash" not in shown.stdout  # not armed until trusted
    assert 'mode = "ask"' in shown.stdout  # the project's bypassPermissions is not applied


def test_a_trusted_projects_rules_and_mode_apply_and_config_show_names_each_file(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    user = _settings(home / ".claude", {"deny": ["Read(./secrets/**)", "WebSearch", "mcp__github__get_*"]})
    local = _settings(ws / ".claude", {"allow": ["Bash(npm run test:*)"], "defaultMode": "plan"},
                      "settings.local.json")
    with FakeLLMServer(Script(steps=[])) as server:
        env = cli_env("anthropic", server, home, HOME=str(home))
    trusted = run_cli(["trust", str(ws)], env)
    assert trusted.returncode == 0, trusted.stderr
    shown = run_cli(["config", "show", "--cwd", str(ws)], env)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert f"deny   Read(./secrets/**)  (read as Read(secrets/**))  # {user}" in out
    assert f"allow  Bash(npm run test:*)  # {local}" in out
    assert 'mode = "readonly"' in out and f"# claude ({local})" in out
    assert f"not used: {user}: permissions.deny rule 'mcp__github__get_*' not used" in out
    as_json = json.loads(run_cli(["config", "show", "--json", "--cwd", str(ws)], env).stdout)
    assert {"kind": "allow", "rule": "Bash(npm run test:*)", "written": "Bash(npm run test:*)",
            "location": str(local)} in as_json["claude.permissions"]["value"]


def test_additional_directories_of_the_persons_settings_are_edited_with_yes(tmp_path: Path) -> None:
    """`additionalDirectories` in ~/.claude/settings.json: the model is told of the folder, its Edit there runs with
    --yes, and a Write outside both the workspace and that folder is refused."""
    ws, home, shared = tmp_path / "ws", tmp_path / "home", (tmp_path / "shared").resolve()
    ws.mkdir()
    shared.mkdir()
    (shared / "util.py").write_text("VALUE = 1\n")
    _settings(home / ".claude", {"additionalDirectories": [str(shared)]})
    elsewhere = tmp_path / "elsewhere.txt"
    script = Script(steps=[
        Step(match=Match(system_contains=f"Additional directories: {shared}", turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Edit", input={
                 "file_path": str(shared / "util.py"), "old_string": "VALUE = 1", "new_string": "VALUE = 2"})])),
        Step(match=Match(system_contains=MAIN, turn=1),
             reply=Reply(tool_calls=[ToolCall(name="Write", input={"file_path": str(elsewhere), "content": "x"})])),
        Step(match=Match(system_contains=MAIN, turn=2, last_user_contains="outside the workspace"),
             reply=Reply(text="Edited the shared folder; the other file is out of reach.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--yes", "--cwd", str(ws), "bump the value"],
                       cli_env("anthropic", server, home, HOME=str(home)))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert (shared / "util.py").read_text() == "VALUE = 2\n"
    assert not elsewhere.exists()
    edited = server.requests[1].body["messages"][-1]["content"][0]
    assert not edited.get("is_error"), edited
    refused = server.requests[2].body["messages"][-1]["content"][0]
    assert refused["is_error"] is True and f"additional directories ({shared})" in str(refused["content"])
