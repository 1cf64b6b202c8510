"""Attacks on the person's credentials and private files, through the real CLI on fresh XDG dirs."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import cli_env, run_cli

PERSON_KEY = "sk-ant-e2e-secret"  # what cli_env sets for the anthropic API
OPENAI_KEY = "sk-e2e-secret"  # ... and for the openai API
SECRETS = {
    "OPENAI_API_KEY": "sk-openai-person-0001",
    "LIGHT_LLM_API_KEY": "sk-light-person-0002",
    "AGENTCLI_MODELS__LIGHT__API_KEY": "sk-agentcli-light-0003",
    "COPY_OF_MY_KEY": PERSON_KEY,
}


def _dump_env_script() -> Script:
    return Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": "env > env.txt"})])),
        Step(match=Match(turn=1), reply=Reply(text="dumped.")),
    ])


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("project\n")
    return repo


def _env_file(repo: Path) -> dict[str, str]:
    lines = (repo / "env.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def test_bash_cannot_read_provider_keys(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with FakeLLMServer(_dump_env_script()) as server:
        env = cli_env("anthropic", server, tmp_path, **SECRETS, HARMLESS_SETTING="kept")
        proc = run_cli(["run", "--yes", "--cwd", str(repo), "show the environment"], env)
    assert proc.returncode == 0, proc.stderr
    seen = _env_file(repo)
    text = (repo / "env.txt").read_text()
    for name in ("ANTHROPIC_API_KEY", *SECRETS):
        assert name not in seen
    for value in (PERSON_KEY, *SECRETS.values()):
        assert value not in text
    assert seen["HARMLESS_SETTING"] == "kept"
    assert seen["PAGER"] == "cat"


def test_bash_pass_env_opts_one_variable_in(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    user = tmp_path / "config" / "agentcli" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[agent]\nbash_pass_env = ["OPENAI_API_KEY"]\n')
    with FakeLLMServer(_dump_env_script()) as server:
        env = cli_env("anthropic", server, tmp_path, **SECRETS)
        proc = run_cli(["run", "--yes", "--cwd", str(repo), "show the environment"], env)
    assert proc.returncode == 0, proc.stderr
    seen = _env_file(repo)
    assert seen["OPENAI_API_KEY"] == SECRETS["OPENAI_API_KEY"]
    assert "ANTHROPIC_API_KEY" not in seen and "LIGHT_LLM_API_KEY" not in seen


def test_untrusted_project_cannot_pass_keys_to_bash(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".agentcli").mkdir()
    (repo / ".agentcli" / "config.toml").write_text('[agent]\nbash_pass_env = ["ANTHROPIC_API_KEY"]\n')
    with FakeLLMServer(_dump_env_script()) as server:
        proc = run_cli(["run", "--yes", "--cwd", str(repo), "show the environment"],
                       cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert PERSON_KEY not in (repo / "env.txt").read_text()
    assert "ignored agent.bash_pass_env from" in proc.stderr


def _all_text(tmp_path: Path) -> str:
    """Everything agentcli wrote: its log and the raw bytes of its database files."""
    parts = [(tmp_path / "state" / "agentcli" / "agentcli.log").read_text(errors="replace")]
    for file in (tmp_path / "data" / "agentcli").iterdir():
        if file.is_file():  # the checkpoints' folder holds the workspace's files, zlib-compressed by git
            parts.append(file.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(parts)


@pytest.mark.parametrize(("output_format", "api", "status"), [
    ("text", "anthropic", 401), ("text", "openai", 400),
    ("json", "anthropic", 400), ("json", "openai", 401),
    ("stream-json", "anthropic", 401), ("stream-json", "openai", 400), ("events", "anthropic", 401),
])
def test_provider_error_echoing_the_key_is_masked_everywhere(
    tmp_path: Path, api: str, status: int, output_format: str
) -> None:
    key = PERSON_KEY if api == "anthropic" else OPENAI_KEY
    repo = _repo(tmp_path)
    script = Script(steps=[Step(fault=Fault(kind="http", status=status,
                                            message=f"Incorrect API key provided: {key}. Check {key[:4]}..."))])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--verbose", "--output-format", output_format, "--cwd", str(repo), "hi"],
                       cli_env(api, server, tmp_path))
    assert proc.returncode == 1
    assert "Incorrect API key provided: ***" in proc.stderr + proc.stdout  # the error is still shown, masked
    for where, text in (("stdout", proc.stdout), ("stderr", proc.stderr), ("log and db", _all_text(tmp_path))):
        assert key not in text, where


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_data_and_state_files_are_private(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    loose = tmp_path / "data" / "agentcli"
    loose.mkdir(parents=True)
    loose.chmod(0o755)  # left looser by an older version: tightened
    with FakeLLMServer(Script(steps=[Step(reply=Reply(text="hello"))])) as server:
        proc = run_cli(["run", "--cwd", str(repo), "hi"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert _mode(tmp_path / "data" / "agentcli") == 0o700
    assert _mode(tmp_path / "state" / "agentcli") == 0o700
    assert _mode(tmp_path / "state" / "agentcli" / "agentcli.log") == 0o600
    files = list((tmp_path / "data" / "agentcli").iterdir())
    assert any(f.name == "agentcli.db" for f in files)
    for file in files:  # the database's files 0600, the checkpoints' folder (the workspace's files) 0700
        assert _mode(file) == (0o700 if file.is_dir() else 0o600), file.name


@contextlib.contextmanager
def _unprivileged_home(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    """A home folder and an argv prefix running agentcli as `nobody` when the tests run as root
    (root may read every process's environ). `nobody` keeps CAP_DAC_READ_SEARCH only to reach the
    interpreter; its folder is under /tmp, which every user can traverse."""
    if os.geteuid() != 0:
        yield tmp_path, []
        return
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot run agentcli as another user")
    home = Path(tempfile.mkdtemp(prefix="agentcli-nobody-", dir="/tmp"))
    try:
        os.chmod(home, 0o755)
        yield home, [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                     "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_bash_cannot_read_keys_from_agentclis_own_environ(tmp_path: Path) -> None:
    command = "cat /proc/$PPID/cmdline > parent.txt; cat /proc/$PPID/environ > penv.txt 2> err.txt; true"
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": command})])),
        Step(match=Match(turn=1), reply=Reply(text="read.")),
    ])
    with _unprivileged_home(tmp_path) as (home, prefix), FakeLLMServer(script) as server:
        repo = _repo(home)
        if prefix:
            for path in (home, *home.rglob("*")):
                os.chown(path, 65534, 65534)
        env = cli_env("anthropic", server, home, **SECRETS)
        argv = [*prefix, sys.executable, "-m", "agentcli", "run", "--yes", "--cwd", str(repo), "read the parent"]
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert b"agentcli" in (repo / "parent.txt").read_bytes()  # $PPID is agentcli itself
        leaked = (repo / "penv.txt").read_bytes()
        for value in (PERSON_KEY, *SECRETS.values()):
            assert value.encode() not in leaked
        assert "Permission denied" in (repo / "err.txt").read_text()
