"""Recorded traffic shapes (tests/llm/recordings) through the real `agentcli run`: one clear outcome, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from tests.e2e.helpers import cli_env, last_json, run_cli
from tests.llm.replay import RECORDINGS_DIR, recording_raw

# One per kind of outcome and API: thinking kept, typed parts, a cut, a refusal, and errors of each origin.
CASES = [
    "anthropic_thinking_signature_text",
    "anthropic_max_tokens_mid_tool_json",
    "anthropic_refusal_no_text",
    "anthropic_overloaded_in_stream",
    "mistral_magistral_typed_parts",
    "openrouter_tool_call_no_finish_reason",
    "openrouter_in_stream_error_400",
    "openai_429_insufficient_quota",
    "proxy_502_html_page",
]


@pytest.mark.parametrize("name", CASES)
def test_recorded_shape_through_the_cli(name: str, tmp_path: Path) -> None:
    rec = json.loads((RECORDINGS_DIR / f"{name}.json").read_text())
    api, exp = rec["api"], rec["expect"]
    work = tmp_path / "work"
    work.mkdir()
    for path, text in rec.get("workspace", {}).items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    script = Script(steps=[Step(match=Match(api=api), raw=recording_raw(rec)),
                           Step(match=Match(api=api), reply=Reply(text="Second turn done."))])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(work), "First prompt."],
                       cli_env(api, server, tmp_path))
    assert "Traceback" not in proc.stderr, proc.stderr
    if "error" in exp:
        assert proc.returncode != 0
        lines = [line for line in proc.stderr.splitlines() if exp["error"]["contains"][0] in line]
        assert len(lines) >= 1, proc.stderr
        for piece in exp["error"]["contains"]:
            assert piece in lines[0], proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    result = last_json(proc.stdout)
    if "tool_calls" in exp:
        assert result["result"] == "Second turn done."
        assert len(server.requests) == 2
    elif "stop_reason" in exp:
        assert result["stop_reason"] == exp["stop_reason"]
        if exp.get("text"):
            assert result["result"] == exp["text"]
