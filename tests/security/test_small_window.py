"""A local server whose window cannot hold agentcli's fixed prompt (the system prompt and the tool definitions,
lean or not) never makes agentcli compact before every request until `max_turns`: it says so once and stops.
Through the real CLI against the fake server, which answers llama.cpp's `/props` with a 2,048-token window."""

from __future__ import annotations

from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall, Usage
from tests.e2e.helpers import cli_env, last_json, run_cli


def _local_env(server: FakeLLMServer, home: Path) -> dict[str, str]:
    return cli_env("openai", server, home, AGENTCLI_MODELS__MAIN__PROVIDER="openai-compatible",
                   AGENTCLI_MODELS__MAIN__MODEL="smollm2", AGENTCLI_MODELS__LIGHT__PROVIDER="openai-compatible",
                   AGENTCLI_MODELS__LIGHT__MODEL="smollm2", AGENTCLI_CONTEXT__AUTO_COMPACT="true")


def test_a_window_smaller_than_the_fixed_prompt_is_said_once_and_the_run_stops(tmp_path: Path) -> None:
    for n in range(4):
        (tmp_path / f"part{n}.txt").write_text(f"part {n}\n" * 200)
    # A five-request task, each request counted as a server with this window counts it (the prompt fills it).
    usage = Usage(input_tokens=2040, output_tokens=8)
    steps = [Step(match=Match(api="openai", last_user_contains=f"part {n - 1}" if n else "read the parts"),
                  reply=Reply(usage=usage, tool_calls=[ToolCall(name="Read", input={"file_path": f"part{n}.txt"})]),
                  times=50) for n in range(4)]
    steps.append(Step(match=Match(api="openai"), reply=Reply(usage=usage, text="All four read."), times=50))
    with FakeLLMServer(Script(context_window=2048, steps=steps)) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "read the parts"],
                       _local_env(server, tmp_path))
    chat = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert "context compacted" not in proc.stderr, f"compacted {proc.stderr.count('context compacted')} times"
    assert len(chat) == 0, f"{len(chat)} requests sent to a window that cannot hold the fixed prompt"
    lines = [line for line in proc.stderr.splitlines() if "cannot hold agentcli's fixed" in line]
    assert len(lines) == 1, proc.stderr
    assert "the context window (2048 tokens, server: llama.cpp /props)" in lines[0]
    assert proc.returncode == 1 and last_json(proc.stdout)["status"] == "failed"
