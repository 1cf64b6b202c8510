"""The one git runner: what it lets run against a repository, the environment it gives git, its private git dirs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentcli.gitsafe import NoRepository, Repo, clean_env, copy_index, git_executable

pytestmark = pytest.mark.skipif(git_executable() is None, reason="needs git")


def _repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
    return ws


@pytest.mark.parametrize("args", [("status",), ("add", "-A"), ("checkout", "main"), ("diff",), ("read-tree", "-u"),
                                  ("worktree", "add", "x"), ("worktree", "remove", "x"), ("branch", "x"),
                                  ("config", "core.fsmonitor", "x"), ()])
def test_only_refs_and_worktree_bookkeeping_run_against_a_repository(tmp_path: Path, args: tuple[str, ...]) -> None:
    repo = Repo.discover(_repo(tmp_path))
    with pytest.raises(ValueError):
        repo.plumbing(*args)


def test_git_gets_no_key_no_agentcli_variable_and_no_git_location_of_the_callers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"ANTHROPIC_API_KEY": "sk-secret", "OPENAI_API_KEY": "sk-other", "AGENTCLI_LLM__KEY": "x",
                        "GIT_DIR": "/elsewhere", "GIT_CONFIG_PARAMETERS": "'core.fsmonitor=evil'",
                        "GIT_EXTERNAL_DIFF": "evil", "SSH_AUTH_SOCK": "/run/agent", "LC_ALL": "C.UTF-8",
                        "GIT_AUTHOR_NAME": "The Person"}.items():
        monkeypatch.setenv(name, value)
    env = clean_env()
    assert not {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENTCLI_LLM__KEY", "GIT_DIR", "GIT_CONFIG_PARAMETERS",
                "GIT_EXTERNAL_DIFF", "SSH_AUTH_SOCK"} & set(env)
    assert (env["PATH"], env["LC_ALL"], env["GIT_AUTHOR_NAME"]) == (os.environ["PATH"], "C.UTF-8", "The Person")
    assert env["GIT_ALLOW_PROTOCOL"] == ""  # no transport, whatever the config allows


def test_a_private_git_dir_shares_the_objects_and_is_gone_after(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    (ws / "a.txt").write_text("a\n")
    repo = Repo.discover(ws)
    assert (repo.git_dir, repo.common_dir, repo.top) == (ws / ".git", ws / ".git", ws)
    with repo.private() as private:
        index = private.git_dir / "index"
        private.run("add", "-A", work_tree=ws, index=index)
        tree = private.text("write-tree", index=index)
        folder = private.git_dir
    assert not folder.exists()
    assert subprocess.run(["git", "cat-file", "-t", tree], cwd=ws, capture_output=True, text=True).stdout == "tree\n"


def test_outside_a_repository_is_said_so(tmp_path: Path) -> None:
    with pytest.raises(NoRepository):
        Repo.discover(tmp_path)


def test_an_index_that_is_a_symlink_or_a_pipe_is_not_copied(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("KEY\n")
    (tmp_path / "link").symlink_to(secret)
    os.mkfifo(tmp_path / "pipe")
    for name in ("link", "pipe", "missing"):
        assert not copy_index(tmp_path / name, tmp_path / f"{name}.copy")
        assert not (tmp_path / f"{name}.copy").exists()
    assert copy_index(secret, tmp_path / "copy") and (tmp_path / "copy").read_text() == "KEY\n"
