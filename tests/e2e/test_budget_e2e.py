"""Session budgets through the real CLI and the fake server: `--max-budget-usd` (real price table) and
`[budget] session_max_tokens` stop a run with a subagent, keep the partial results, exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall, Usage
from tests.e2e.helpers import MAIN, cli_env, db, last_json, run_cli

SUB = "# Task\nAudit the modules"


def _script() -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(text="Delegating the audit.",
                         tool_calls=[ToolCall(name="Task", input={
                             "description": "Audit the modules", "prompt": "Audit every module in src/",
                             "subagent_type": "explore"})],
                         usage=Usage(input_tokens=100, output_tokens=20))),
        # A costly first look: 200k input tokens pass $0.01 at any real price, and 1000 tokens.
        Step(match=Match(system_contains=SUB, turn=0),
             reply=Reply(text="Audited 2 of 9 modules: both fine.",
                         tool_calls=[ToolCall(name="Read", input={"file_path": "src/a.py"})],
                         usage=Usage(input_tokens=200_000, output_tokens=50))),
    ])


@pytest.mark.parametrize(
    ("args", "env", "line"),
    [
        (["--max-budget-usd", "0.01"], {}, r"session cost budget exceeded: $"),
        ([], {"AGENTCLI_BUDGET__SESSION_MAX_TOKENS": "1000"}, "session token budget exceeded: 200170 > 1000 tokens"),
    ],
    ids=["max-budget-usd", "session_max_tokens"],
)
def test_a_session_budget_stops_the_run_and_its_subagent(
    tmp_path: Path, args: list[str], env: dict[str, str], line: str
) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x = 1\n")
    with FakeLLMServer(_script()) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), *args, "Audit src/"],
                       cli_env("anthropic", server, tmp_path, **env))
    server.assert_done()  # no request after the limit
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    said = [x for x in proc.stderr.splitlines() if "budget exceeded" in x]
    assert len(said) == 1 and said[0].startswith(f"agentcli: {line}"), proc.stderr  # what was spent, which limit
    which = "session_max_usd" if args else "session_max_tokens"
    assert said[0].endswith(f"(budget.{which})")
    result = last_json(proc.stdout)
    assert result["status"] == "budget_exceeded"
    assert result["result"] == "Delegating the audit."  # the main agent's partial result
    assert result["error"] == said[0].removeprefix("agentcli: ")
    (task,) = result["tasks"]
    assert task["status"] == "budget_exceeded"
    assert task["result"] == "Audited 2 of 9 modules: both fine."  # the subagent's partial result
    assert task["tool_calls"] == 0  # its Read never ran
    if args:
        assert result["cost_usd"] > 0.01
    conn = db(tmp_path)
    (status,) = conn.execute("SELECT status FROM sessions WHERE id = ?", (result["session_id"],)).fetchone()
    assert status == "budget_exceeded"
    (task_status,) = conn.execute("SELECT status FROM tasks WHERE task_id = ?", (task["task_id"],)).fetchone()
    assert task_status == "budget_exceeded"


def test_max_budget_usd_shows_as_a_cli_flag(tmp_path: Path) -> None:
    """Provenance: the value comes from the command-line layer, and the config error names the flag."""
    with FakeLLMServer(Script(steps=[])) as server:
        proc = run_cli(["run", "--max-budget-usd", "-1", "hi"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 2
    assert "budget.session_max_usd = -1.0 (from CLI --max-budget-usd)" in proc.stderr
