"""Context compaction through the real CLI and SDK against the fake server: a run whose context crosses the
threshold is summarised by the light model (`[context] auto_compact`), the next request is smaller and holds
the summary and the delegated task's id, the run finishes, and the store keeps the full history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, db, last_json, run_cli

PARTS = 40
SUMMARY = "SUMMARY: the person asked to read every part; an audit was delegated."


def _script() -> Script:
    def reading(n: int) -> Reply:
        return Reply(text=f"reading {n}", tool_calls=[ToolCall(name="Read", input={"file_path": f"part{n}.txt"})])

    return Script(steps=[
        Step(match=Match(system_contains="You compact the conversation"), reply=Reply(text=SUMMARY)),
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(text="Delegating an audit first.", tool_calls=[ToolCall(name="Task", input={
                 "description": "Audit parts", "prompt": "Say the audit is done", "subagent_type": "explore"})])),
        Step(match=Match(system_contains="# Task\nAudit parts"), reply=Reply(text="audit done: 3 findings")),
        Step(match=Match(system_contains=MAIN, last_user_contains="audit done"), reply=reading(0)),
        *[Step(match=Match(system_contains=MAIN, last_user_contains=f"<<part {n - 1}>>"), reply=reading(n))
          for n in range(1, PARTS)],
        Step(match=Match(system_contains=MAIN, last_user_contains=f"<<part {PARTS - 1}>>"),
             reply=Reply(text="Read them all.")),
    ])


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_run_that_fills_its_window_is_summarised_and_finishes(tmp_path: Path, api: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(PARTS):
        (ws / f"part{n}.txt").write_text(f"<<part {n}>>\n" + "some line of data\n" * 60)
    with FakeLLMServer(_script()) as server:
        env = cli_env(api, server, tmp_path, AGENTCLI_CONTEXT__AUTO_COMPACT="true",
                      AGENTCLI_MODELS__MAIN__CONTEXT_WINDOW="20000", AGENTCLI_AGENT__MAX_TURNS="100")
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "Read every part"], env)
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    result = last_json(proc.stdout)
    assert result["status"] == "completed" and result["result"] == "Read them all."
    (task,) = result["tasks"]
    compacted = [line for line in proc.stderr.splitlines() if "context compacted (older turns summarised)" in line]
    assert compacted, proc.stderr
    main = [json.dumps(r.body) for r in requests if MAIN in json.dumps(r.body.get("system", r.body.get("messages")))]
    first = next(i for i, body in enumerate(main) if SUMMARY in body)
    assert len(main[first]) < len(main[first - 1])  # the request after the compaction is smaller
    assert all(task["task_id"] in body for body in main[first:])  # and every later one still names the task
    summaries = [r for r in requests if "You compact the conversation" in json.dumps(r.body)]
    assert len(summaries) == len(compacted) and "audit done" in json.dumps(summaries[0].body)
    assert result["ledger"]["own"]["requests"] == len(main) + len(summaries)  # the summary is the main agent's spend

    conn = db(tmp_path)
    stored = conn.execute("SELECT count(*) FROM messages WHERE session_id = ?", (result["session_id"],)).fetchone()[0]
    assert stored == 2 * (PARTS + 2)  # every message of the run, the compacted ones included
    rows = conn.execute("SELECT summary, kept_from_seq FROM compactions WHERE session_id = ?",
                        (result["session_id"],)).fetchall()
    assert len(rows) == len(compacted) and SUMMARY in rows[0][0] and task["task_id"] in rows[0][0]
    sizes = [r[0] for r in conn.execute(  # what the server counted for each request of the main agent
        "SELECT input_tokens FROM usage WHERE session_id = ? AND model = ? ORDER BY id",
        (result["session_id"], "claude-sonnet-5-5" if api == "anthropic" else "gpt-fake"))]
    assert len(sizes) == len(main) and max(sizes) < 0.85 * 20_000  # the window was never reached
    assert sizes[first] < sizes[first - 1] / 2


@pytest.mark.parametrize(
    ("api", "error_type", "message"),
    [
        ("anthropic", "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum"),
        ("openai", "context_length_exceeded",
         "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens."),
    ],
)
def test_a_request_the_provider_finds_too_long_is_compacted_and_sent_again(
    tmp_path: Path, api: str, error_type: str, message: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(4):
        (ws / f"part{n}.txt").write_text(f"<<part {n}>>\n" + "x" * 9000)

    def reading(n: int) -> Reply:
        return Reply(text=f"reading {n}", tool_calls=[ToolCall(name="Read", input={"file_path": f"part{n}.txt"})])

    script = Script(steps=[
        Step(match=Match(turn=0), reply=reading(0)),
        *[Step(match=Match(last_user_contains=f"<<part {n - 1}>>"), reply=reading(n)) for n in range(1, 4)],
        # The estimate said it fits; the provider disagrees once.
        Step(match=Match(last_user_contains="<<part 3>>"),
             fault=Fault(kind="http", status=400, error_type=error_type, message=message)),
        Step(match=Match(last_user_contains="<<part 3>>", any_message_contains="<compacted_context>"),
             reply=Reply(text="Done after compacting.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "Read the parts"],
                       cli_env(api, server, tmp_path))
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    assert last_json(proc.stdout)["result"] == "Done after compacting."
    assert "context compacted" in proc.stderr and "Traceback" not in proc.stderr
    refused, retried = json.dumps(requests[-2].body), json.dumps(requests[-1].body)
    assert len(retried) < len(refused) and "reading 0" not in retried.split("<compacted_context>")[-1]
