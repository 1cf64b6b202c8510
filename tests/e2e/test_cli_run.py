"""The real `agentcli` executable against the fake server: streaming, errors, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step


def _run(args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        capture_output=True, text=True, env=env, cwd=cwd, input=stdin, timeout=60,
    )


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(extra)
    return env


def test_no_key_is_one_line_and_exit_1(tmp_path: Path) -> None:
    proc = _run(["run", "hello"], _env(), tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "ANTHROPIC_API_KEY" in lines[0]
    assert "Traceback" not in proc.stderr


def test_invalid_config_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / ".agentcli").mkdir()
    (tmp_path / ".agentcli" / "config.toml").write_text("[task_tool]\nmax_depth = 'deep'\n")
    proc = _run(["run", "hello"], _env(ANTHROPIC_API_KEY="sk-ant-x"), tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "task_tool.max_depth" in proc.stderr and "config.toml" in proc.stderr


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_run_streams_the_answer(api: str, tmp_path: Path) -> None:
    script = Script(steps=[Step(match=Match(api=api, last_user_contains="say hi"),
                                reply=Reply(text="Hi there, from the fake model.", chunk_size=5))])
    with FakeLLMServer(script) as server:
        if api == "anthropic":
            env = _env(ANTHROPIC_API_KEY="sk-ant-secret-1", ANTHROPIC_BASE_URL=server.base_url)
        else:
            env = _env(OPENAI_API_KEY="sk-secret-2", OPENAI_BASE_URL=server.base_url + "/v1",
                       AGENTCLI_MODELS__MAIN__PROVIDER="openai", AGENTCLI_MODELS__MAIN__MODEL="gpt-test")
        proc = _run(["run", "say hi", "--output-format", "json"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["result"] == "Hi there, from the fake model."
    assert result["status"] == "completed"
    server.assert_done()


def test_run_reads_stdin_and_reports_provider_failure(tmp_path: Path) -> None:
    script = Script(steps=[Step(match=Match(last_user_contains="from stdin"), fault=Fault(kind="http", status=401))])
    with FakeLLMServer(script) as server:
        env = _env(ANTHROPIC_API_KEY="sk-ant-secret-3", ANTHROPIC_BASE_URL=server.base_url)
        proc = _run(["run", "-"], env, tmp_path, stdin="prompt from stdin")
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0
    assert "401" in proc.stderr and "Traceback" not in proc.stderr
    assert "sk-ant-secret-3" not in proc.stderr
    server.assert_done()


def test_bare_model_flag_overrides_main_model(tmp_path: Path) -> None:
    script = Script(steps=[Step(match=Match(model="claude-opus-4-1"), reply=Reply(text="opus here"))])
    with FakeLLMServer(script) as server:
        env = _env(ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=server.base_url)
        proc = _run(["run", "x", "--model", "claude-opus-4-1"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "opus here" in proc.stdout
    server.assert_done()


def test_config_show_redacts_and_names_layers(tmp_path: Path) -> None:
    proc = _run(["config", "show"], _env(LLM_API_KEY="sk-very-secret-9"), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "sk-very-secret-9" not in proc.stdout
    assert "LLM_API_KEY" in proc.stdout
    assert "default_config.toml" in proc.stdout


def test_unusable_database_is_one_line_and_exit_1(tmp_path: Path) -> None:
    data = tmp_path / "data" / "agentcli"
    data.mkdir(parents=True)
    (data / "agentcli.db").write_text("this is not a sqlite database" * 100)
    proc = _run(["run", "hello"], _env(ANTHROPIC_API_KEY="k", XDG_DATA_HOME=str(tmp_path / "data")), tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "agentcli.db" in proc.stderr and "Traceback" not in proc.stderr
