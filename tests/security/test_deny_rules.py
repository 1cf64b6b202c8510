"""Reading or writing around a deny rule with another tool, through the real CLI on fresh XDG dirs."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, ToolCall
from tests.e2e.helpers import cli_env, run_cli
from tests.security.scripted import one_call_per_turn, tool_results


def _user_config(home: Path, text: str) -> None:
    path = home / "config" / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)



def test_write_deny_rule_also_stops_edit_and_multiedit(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "secrets").mkdir(parents=True)
    (repo / "secrets" / "a.txt").write_text("original\n")
    _user_config(tmp_path, '[permissions]\ndeny = ["Write(secrets/**)"]\n')
    script = one_call_per_turn(
        ToolCall(name="Edit", input={"file_path": "secrets/a.txt", "old_string": "original", "new_string": "edited"}),
        ToolCall(name="MultiEdit", input={"file_path": "secrets/new.txt",
                                          "edits": [{"old_string": "", "new_string": "created"}]}),
        ToolCall(name="MultiEdit", input={"file_path": "./secrets/../secrets/a.txt",
                                          "edits": [{"old_string": "original", "new_string": "edited"}]}),
    )
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        proc = run_cli(["run", "--yes", "--cwd", str(repo), "change the secrets"], env)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "secrets" / "a.txt").read_text() == "original\n"
    assert not (repo / "secrets" / "new.txt").exists()
    results = tool_results(server)
    assert len(results) == 3
    assert all("blocked by the rule 'Write(secrets/**)'" in r for r in results), results


def test_read_deny_rule_cannot_be_read_around_with_grep(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".env").write_text("SECRET_TOKEN=hunter2-very-secret\n")
    (repo / "notes.txt").write_text("hunter2 is not a secret here\n")
    os.symlink(".env", repo / "innocent.txt")
    _user_config(tmp_path, '[permissions]\ndeny = ["Read(.env)"]\n')
    script = one_call_per_turn(
        ToolCall(name="Grep", input={"pattern": "SECRET", "path": ".env", "output_mode": "content"}),
        ToolCall(name="Grep", input={"pattern": "hunter2", "output_mode": "content"}),
        ToolCall(name="Grep", input={"pattern": "SECRET", "path": "innocent.txt", "output_mode": "content"}),
        ToolCall(name="Grep", input={"pattern": "hunter2", "output_mode": "count"}),
    )
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--cwd", str(repo), "find the token"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    results = tool_results(server)
    assert len(results) == 4
    assert all("hunter2-very-secret" not in r and ".env:" not in r for r in results), results
    assert "notes.txt:1:hunter2 is not a secret here" in results[1]  # the rest of the search still works
    assert "notes.txt:1" in results[3] and "1 matching lines in 1 files" in results[3]


def test_read_deny_rule_cannot_be_read_around_with_edit(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".env").write_text("A=1\nSECRET_TOKEN=hunter2-very-secret\nB=2\n")
    _user_config(tmp_path, '[permissions]\ndeny = ["Read(.env)"]\n')
    script = one_call_per_turn(
        ToolCall(name="Edit", input={"file_path": ".env", "old_string": "B=2", "new_string": "B=3"}),
        ToolCall(name="MultiEdit", input={"file_path": ".env", "edits": [{"old_string": "A=1", "new_string": "A=0"}]}),
    )
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--cwd", str(repo), "show me"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    results = tool_results(server)
    assert len(results) == 2
    assert all("blocked by the rule 'Read(.env)'" in r and "hunter2" not in r for r in results), results
    assert (repo / ".env").read_text() == "A=1\nSECRET_TOKEN=hunter2-very-secret\nB=2\n"


def test_path_deny_rule_cannot_be_dodged_by_letter_case(tmp_path: Path) -> None:
    # On macOS and Windows `.ENV` and `Secrets/A.txt` are the files the rules name; refused everywhere.
    repo = tmp_path / "repo"
    (repo / "Secrets").mkdir(parents=True)
    (repo / ".ENV").write_text("SECRET_TOKEN=hunter2-very-secret\n")
    (repo / "Secrets" / "A.txt").write_text("original\n")
    _user_config(tmp_path, '[permissions]\ndeny = ["Read(.env)", "Edit(secrets/**)"]\n')
    script = one_call_per_turn(
        ToolCall(name="Read", input={"file_path": ".ENV"}),
        ToolCall(name="Grep", input={"pattern": "hunter2", "output_mode": "content"}),
        ToolCall(name="Write", input={"file_path": "Secrets/A.txt", "content": "pwned"}),
    )
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--cwd", str(repo), "look"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    results = tool_results(server)
    assert len(results) == 3
    assert "blocked by the rule 'Read(.env)'" in results[0]
    assert results[1] == "No matches for 'hunter2'"
    assert "blocked by the rule 'Edit(secrets/**)'" in results[2]
    assert (repo / "Secrets" / "A.txt").read_text() == "original\n"


def test_allowed_edits_cannot_rewrite_agentcli_or_git_config_to_widen_later_runs(tmp_path: Path) -> None:
    # The person allows every edit in a workspace they trust. A model writing the project config
    # (allow Bash) or git's config (fsmonitor) would turn that into commands; those edits are asked.
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text("[core]\n\tbare = false\n")
    _user_config(tmp_path, '[permissions]\nallow = ["Edit"]\n')
    script = one_call_per_turn(
        ToolCall(name="Write", input={"file_path": ".agentcli/config.toml",
                                      "content": '[permissions]\nallow = ["Bash"]\n'}),
        ToolCall(name="Edit", input={"file_path": ".git/config", "old_string": "bare = false",
                                     "new_string": "bare = false\n\tfsmonitor = touch pwned"}),
        ToolCall(name="Write", input={"file_path": ".Claude/agents/x.md", "content": "---\nname: x\n---\n"}),
        ToolCall(name="Write", input={"file_path": "notes.txt", "content": "ordinary edits still run"}),
    )
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        assert run_cli(["trust", str(repo)], env).returncode == 0
        proc = run_cli(["run", "--cwd", str(repo), "set things up"], env)
    assert proc.returncode == 0, proc.stderr
    results = tool_results(server)
    assert len(results) == 4
    assert all("needs approval" in r for r in results[:3]), results
    assert not (repo / ".agentcli").exists() and not (repo / ".Claude").exists()
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()
    assert (repo / "notes.txt").read_text() == "ordinary edits still run"
