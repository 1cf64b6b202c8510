"""A line on a headless session's standard input cannot end the session: 400 KB of nested JSON arrays (which blew
Python's recursion limit inside `json.loads`) is one error line, and the next message is answered. Through the real
CLI: Claude Code's headless mode (what the Agent SDK drives) and `agentcli run --input-format stream-json`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from tests.e2e.helpers import cli_env

DEEP_LINES = {
    "arrays": "[" * 200_000 + "]" * 200_000,
    "objects": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "a user message carrying a deep field": json.dumps({"type": "user", "message": {"role": "user", "content": "x"}})
    [:-1] + ', "extra": ' + "[" * 5000 + "]" * 5000 + "}",
}
HEADLESS = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
RUN = ["run", "--output-format", "stream-json", "--input-format", "stream-json"]


@pytest.mark.parametrize("argv", [HEADLESS, RUN], ids=["headless", "run"])
@pytest.mark.parametrize("line", list(DEEP_LINES.values()), ids=list(DEEP_LINES))
def test_a_deeply_nested_line_is_one_error_line_and_the_session_goes_on(tmp_path: Path, argv: list[str],
                                                                        line: str) -> None:
    stdin = line + "\n" + json.dumps({"type": "user", "message": {"role": "user", "content": "still there?"}}) + "\n"
    script = Script(steps=[Step(match=Match(last_user_contains="still there?"), reply=Reply(text="Yes."))])
    with FakeLLMServer(script) as server:
        proc = subprocess.run([sys.executable, "-m", "agentcli", *argv], input=stdin, capture_output=True, text=True,
                              env=cli_env("anthropic", server, tmp_path / "home"), cwd=tmp_path, timeout=120)
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr, proc.stderr[-2000:]
    errors = [text for text in proc.stderr.splitlines() if "standard input line 1" in text]
    assert errors == ["agentcli: standard input line 1: JSON nested deeper than 100 levels"], proc.stderr[-2000:]
    result = json.loads(proc.stdout.splitlines()[-1])
    assert (result["type"], result["result"]) == ("result", "Yes."), proc.stdout[-2000:]
    assert proc.returncode == (0 if argv is HEADLESS else 1)  # `run`'s exit: a bad line counts as a failed turn
