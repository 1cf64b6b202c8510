"""An OpenAI-compatible server's own window, through the real CLI: asked once, used by compaction, and a reply the
window cut said so (never blamed on the output token limit)."""

from __future__ import annotations

from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall, Usage
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

CUT_NOTICE = "Your last reply was cut because the context window was full"


def _local_env(server: FakeLLMServer, home: Path, **extra: str) -> dict[str, str]:
    return cli_env("openai", server, home, AGENTCLI_MODELS__MAIN__PROVIDER="openai-compatible",
                   AGENTCLI_MODELS__MAIN__MODEL="smollm2", AGENTCLI_MODELS__LIGHT__PROVIDER="openai-compatible",
                   AGENTCLI_MODELS__LIGHT__MODEL="smollm2", **extra)


def test_a_reply_the_window_cut_says_so_and_the_turn_goes_on_compacted(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("line of text\n" * 1500)  # ~18k characters: a result worth pruning
    read = ToolCall(name="Read", input={"file_path": "big.txt"})
    script = Script(context_window=8192, steps=[
        Step(match=Match(api="openai", system_contains=MAIN, turn=0), reply=Reply(tool_calls=[read])),
        Step(match=Match(api="openai", turn=1), reply=Reply(
            text="The file has", stop_reason="max_tokens", usage=Usage(input_tokens=8150, output_tokens=30))),
        Step(match=Match(api="openai", last_user_contains=CUT_NOTICE), reply=Reply(text="It repeats a line.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "what is in big.txt?"],
                       _local_env(server, tmp_path, AGENTCLI_CONTEXT__MAX_MESSAGES="20"))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert last_json(proc.stdout)["result"] == "It repeats a line."
    assert server.window_asks.count("GET /props") == 1  # asked once, for the session
    assert ("the reply was cut: the context window (8192 tokens, server: llama.cpp /props) is full (8180 tokens "
            "with the reply); older context was compacted and the turn goes on") in proc.stderr
    assert "output token limit" not in proc.stderr
    third = server.requests[2].body
    assert "line of text\n" * 1500 not in str(third)  # the read was pruned to fit the server's window
    assert third["max_tokens"] < 8192  # the room the window leaves, not the configured 8192


def test_a_reply_the_server_cut_far_below_max_tokens_is_not_blamed_on_it(tmp_path: Path) -> None:
    script = Script(steps=[Step(match=Match(api="openai"), reply=Reply(
        text="Hel", stop_reason="max_tokens", usage=Usage(input_tokens=500, output_tokens=3)))])
    with FakeLLMServer(script) as server:  # the server does not say its window: the default stands
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "hello"],
                       _local_env(server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert "GET /props" in server.window_asks
    lines = [line for line in proc.stderr.splitlines() if "the reply was cut" in line]
    assert lines == ["agentcli: warning: the reply was cut by the server after 3 tokens, far below max_output_tokens "
                     "= 8192: its own limit ran out at 503 tokens with the request, most likely its context window "
                     "(agentcli keeps the context window (128000 tokens, default)); set context_window for main"]
    assert last_json(proc.stdout)["stop_reason"] == "max_tokens"  # what the server said, with the marker of a cut


def test_a_full_window_with_nothing_to_compact_is_one_clear_line(tmp_path: Path) -> None:
    script = Script(context_window=4000, steps=[Step(match=Match(api="openai"), reply=Reply(
        text="Hel", stop_reason="max_tokens", usage=Usage(input_tokens=3990, output_tokens=3)))])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--cwd", str(tmp_path), "hello"], _local_env(server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert ("the reply was cut: the context window (4000 tokens, server: llama.cpp /props) is full (3993 tokens with "
            "the reply); nothing is left to compact: give the model a larger window or start a new session"
            ) in proc.stderr


def test_the_output_limit_is_still_named_when_it_was_reached(tmp_path: Path) -> None:
    script = Script(steps=[Step(match=Match(api="openai"), reply=Reply(
        text="A long answer", stop_reason="max_tokens", usage=Usage(input_tokens=500, output_tokens=100)))])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--cwd", str(tmp_path), "hello"],
                       _local_env(server, tmp_path, AGENTCLI_MODELS__MAIN__MAX_OUTPUT_TOKENS="100"))
    assert "the reply was cut at the output token limit (max_output_tokens = 100)" in proc.stderr
