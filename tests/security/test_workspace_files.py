"""A repository's own files acting when agentcli starts in it, through the real CLI on fresh XDG dirs."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from tests.e2e.helpers import cli_env, run_cli

PERSON_KEY = "sk-ant-e2e-secret"  # what cli_env sets for the anthropic API
MEMORY_LIMIT = 1024**3  # address space of the agentcli process in the huge-file test


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=a@example.com", "-c", "user.name=a", *args],
                   check=True, capture_output=True)


def _hello(server_text: str = "hello.") -> Script:
    return Script(steps=[Step(match=Match(turn=0), reply=Reply(text=server_text))])


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_repository_git_config_cannot_run_commands_when_agentcli_starts(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / ".gitattributes").write_text("*.txt filter=evil\n*.md filter=ev.il\n*.py filter=a=b\n")
    for name in ("a.txt", "b.md", "c.py"):
        (repo / name).write_text("content\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    marks = tmp_path / "marks"
    marks.mkdir()
    # As in a downloaded archive with its .git folder: the index's stat data no longer matches.
    (repo / ".git" / "index").unlink()
    _git(repo, "read-tree", "HEAD")
    with (repo / ".git" / "config").open("a") as config:
        config.write(f"""
[core]
\tfsmonitor = "touch {marks}/fsmonitor; echo"
[filter "evil"]
\tclean = "touch {marks}/clean; cat"
\tprocess = "touch {marks}/process"
[filter "ev.il"]
\tclean = "touch {marks}/dotted; cat"
[filter "a=b"]
\tclean = "touch {marks}/equals; cat"
""")
    with FakeLLMServer(_hello()) as server:
        proc = run_cli(["run", "--cwd", str(repo), "hi"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(marks)) == []  # nothing the repository configured ran
    system = str(server.requests[0].body["system"])
    assert "## master" in system or "## main" in system  # git status still reached the prompt


def test_instruction_files_symlinked_outside_the_workspace_are_not_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    private = tmp_path / "private_notes.txt"
    private.write_text("PRIVATE-CONTENT-0001\n")
    os.symlink(private, repo / "AGENTS.md")
    os.symlink("/proc/self/environ", repo / "CLAUDE.md")
    with FakeLLMServer(_hello()) as server:
        proc = run_cli(["run", "--cwd", str(repo), "hi"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    system = str(server.requests[0].body["system"])
    assert "PRIVATE-CONTENT-0001" not in system and PERSON_KEY not in system
    assert "[AGENTS.md not read: it is a symlink to a file outside the workspace]" in system
    assert "[CLAUDE.md not read: it is a symlink to a file outside the workspace]" in system


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_huge_instruction_file_is_read_only_up_to_its_cap(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with (repo / "AGENTS.md").open("wb") as handle:
        handle.truncate(2 * MEMORY_LIMIT)  # sparse: read whole, it would not fit in the process
    with FakeLLMServer(_hello()) as server:
        proc = subprocess.run([sys.executable, "-m", "agentcli", "run", "--cwd", str(repo), "hi"],
                              capture_output=True, text=True, env=cli_env("anthropic", server, tmp_path),
                              timeout=120, preexec_fn=_limit_memory)
    assert proc.returncode == 0, proc.stderr
    assert "[... AGENTS.md cut at 20000 characters]" in str(server.requests[0].body["system"])


@pytest.mark.parametrize("kind", ["named pipe", "symlink to /dev/zero", "huge file"])
def test_project_config_that_would_hang_or_fill_memory_is_one_line(tmp_path: Path, kind: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".agentcli").mkdir(parents=True)
    config = repo / ".agentcli" / "config.toml"
    if kind == "named pipe":
        os.mkfifo(config)
    elif kind == "symlink to /dev/zero":
        os.symlink("/dev/zero", config)
    else:
        config.write_text("# padding\n" * 200_000)  # 2 MB of comments: valid TOML, but no config is that big
    with FakeLLMServer(Script()) as server:
        proc = run_cli(["run", "--cwd", str(repo), "hi"], cli_env("anthropic", server, tmp_path), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"agentcli: invalid config: cannot read {config}: "
        + ("larger than 1024 KiB" if kind == "huge file" else "not a regular file")
    ]
    assert server.requests == []


@pytest.mark.parametrize("name", [".mcp.json", ".claude/settings.json", ".claude/settings.local.json"])
@pytest.mark.parametrize("kind", ["named pipe", "symlink to /dev/zero"])
def test_hook_or_mcp_file_that_would_hang_or_fill_memory_is_one_line(tmp_path: Path, name: str, kind: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    if kind == "named pipe":
        os.mkfifo(repo / name)
    else:
        os.symlink("/dev/zero", repo / name)
    with FakeLLMServer(_hello()) as server:
        env = cli_env("anthropic", server, tmp_path)
        proc = run_cli(["run", "--cwd", str(repo), "hi"], env, timeout=60)
        trusted = run_cli(["trust", str(repo)], env, timeout=60)
    assert proc.returncode == 0 and trusted.returncode == 0, proc.stderr + trusted.stderr  # neither hung
    assert f"cannot read {repo / name}: not a regular file" in trusted.stdout  # what trust arms may be incomplete


def test_repository_git_or_rg_program_is_never_run_through_an_empty_path_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    for name in ("git", "rg"):
        program = repo / name
        program.write_text(f"#!/bin/sh\ntouch {marks}/{name}\n")
        program.chmod(0o755)
    with FakeLLMServer(_hello()) as server:
        env = cli_env("anthropic", server, tmp_path)
        env["PATH"] = ":" + env.get("PATH", os.defpath)  # an empty entry: the current folder, for execvp
        proc = run_cli(["run", "hi"], env, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    # In-process, without a bundled rg: the repository's `rg` in the current folder is not picked either.
    from agentcli.tools.search import child as search_child

    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", ":" + os.environ.get("PATH", os.defpath))
    monkeypatch.setattr(search_child.sysconfig, "get_path", lambda *args: str(tmp_path / "no-scripts"))
    found = search_child.find_rg.__wrapped__()
    assert found is None or Path(found).parent != repo
    assert sorted(os.listdir(marks)) == []
