"""`agentcli sessions list|show` over a store at $XDG_DATA_HOME (isolated per test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.store.db import Store
from agentcli.store.recorder import StoreRecorder
from tests.store.sample_events import CHILD, GRAND, MAIN, sample_events

runner = CliRunner()


@pytest.fixture
def recorded(isolated_env: Path) -> None:
    """The sample run recorded in the default database."""
    with Store.open() as store:
        recorder = StoreRecorder(store)
        for event in sample_events():
            recorder(event)


def test_list_shows_top_level_sessions(recorded: None) -> None:
    result = runner.invoke(app, ["sessions", "list"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["ID", "STARTED", "STATUS", "MODEL", "TURNS", "TOKENS", "IN/OUT", "COST", "TITLE"]
    assert len(lines) == 2
    row = lines[1]
    # Tokens and cost are the whole tree's (the session's own 300/50 and $0.0030, plus its subagents').
    for cell in (MAIN, "completed", "anthropic:claude-sonnet-4-5", "440/66", "$0.0034", "Find the auth code"):
        assert cell in row


def test_list_all_and_json(recorded: None) -> None:
    result = runner.invoke(app, ["sessions", "list", "--all"])
    assert result.exit_code == 0
    assert {MAIN, CHILD, GRAND} <= set(result.stdout.split())
    assert "explore#1" in result.stdout
    data = json.loads(runner.invoke(app, ["sessions", "list", "--all", "--json", "--limit", "2"]).stdout)
    assert [d["id"] for d in data] == [GRAND, CHILD]
    assert data[1]["parent_session_id"] == MAIN and data[1]["agent_type"] == "explore"


def test_list_empty(isolated_env: Path) -> None:
    result = runner.invoke(app, ["sessions", "list"])
    assert result.exit_code == 0 and result.stdout.strip() == "No sessions yet."


def test_show_by_prefix(recorded: None) -> None:
    result = runner.invoke(app, ["sessions", "show", MAIN[:7]])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(f"Session {MAIN}\n")
    assert "status:" in out and "completed" in out
    assert "  total:      440 in / 66 out · cache 10 read / 0 written · $0.0034 · 5 requests\n" in out
    assert "  main agent: 300 in / 50 out · cache 10 read / 0 written · $0.0030 · 2 requests\n" in out
    assert "  subagents:  140 in / 16 out · cache 0 read / 0 written · $0.0004 · 3 requests in 2 sessions\n" in out
    assert CHILD in out  # listed as a subagent session
    assert "[user]\nFind the auth code and summarize it\nThen tell me what to fix." in out
    assert "→ Task: explore: Find auth code  [ok, 40 ms]" in out
    assert "← result tc_task" in out
    assert "[assistant]\nThe login code is in auth.py." in out


def test_show_subagent_transcript_excerpts_long_output(recorded: None) -> None:
    out = runner.invoke(app, ["sessions", "show", CHILD]).stdout
    assert f"parent:    {MAIN} (task tsk_1)" in out
    assert "  explore#1: 110 in / 13 out · cache 0 read / 0 written · $0.0003 · 2 requests\n" in out
    assert "  subagents: 30 in / 3 out · cache 0 read / 0 written · $0.0001 · 1 request in 1 session\n" in out
    assert "→ Grep: Grep 'def login'  [ok, 3 ms]" in out
    assert "    auth.py:3: def login():" in out
    assert "… (21 lines," in out  # cut, and says so


def test_show_json_has_the_full_record(recorded: None) -> None:
    result = runner.invoke(app, ["sessions", "show", CHILD, "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["session"]["id"] == CHILD
    assert len(data["messages"]) == 4 and data["messages"][1]["content"][1]["type"] == "tool_use"
    assert data["tool_calls"][0]["output"].count("\n") == 21
    assert [s["id"] for s in data["subagent_sessions"]] == [GRAND]
    assert data["usage_rollup"]["sessions"] == 2


def test_json_ledgers_split_the_tree_and_agree(recorded: None) -> None:
    listed = json.loads(runner.invoke(app, ["sessions", "list", "--all", "--json"]).stdout)
    by_id = {d["id"]: d for d in listed}
    for session_id in (MAIN, CHILD, GRAND):
        shown = json.loads(runner.invoke(app, ["sessions", "show", session_id, "--json"]).stdout)
        ledger = shown["ledger"]
        assert by_id[session_id]["ledger"] == ledger  # list and show: one computation
        own, delegated, total = ledger["own"], ledger["delegated"], ledger["total"]
        for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "requests"):
            assert total[key] == own[key] + delegated[key]
        # `own` is the session's own row; `total` is the rollup over its tree.
        row, rollup = shown["session"], shown["usage_rollup"]
        for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            assert own[key] == row[key] and total[key] == rollup[key]
        assert total["cost_usd"] == pytest.approx(rollup["cost_usd"])
    main = by_id[MAIN]["ledger"]
    assert (main["own"]["input_tokens"], main["delegated"]["input_tokens"], main["total"]["input_tokens"]) == (
        300, 140, 440)
    assert main["own"]["cache_read_tokens"] == main["total"]["cache_read_tokens"] == 10
    assert by_id[GRAND]["ledger"]["delegated"]["requests"] == 0


def test_list_reads_the_spend_of_every_listed_session_in_one_query(recorded: None, read_statements: list[str]) -> None:
    """`sessions list` runs a constant number of reads (the page, then its spend), not one per session."""
    from agentcli.frontend.common import stored_ledger
    from agentcli.llm.usage import Usage
    from agentcli.store.writes import add_usage, create_session

    with Store.open() as store:
        for n in range(5):
            store.submit(create_session(f"ses_more{n}", model="main"))
            store.submit(add_usage(f"ses_more{n}", "anthropic", "claude-sonnet-4-5", Usage(n, 1), 0.001 * n))
    read_statements.clear()
    result = runner.invoke(app, ["sessions", "list", "--all", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert len(listed) == 8
    assert len(read_statements) == 2, read_statements
    with Store.open() as store:
        for row in listed:
            alone = store.session_spend(row["id"])
            assert alone is not None
            assert row["ledger"] == stored_ledger(alone).as_dict()


def test_unknown_price_reads_as_unknown(isolated_env: Path) -> None:
    from agentcli.llm.usage import Usage
    from agentcli.store.writes import add_usage, create_session

    with Store.open() as store:
        store.submit(create_session("ses_local", model="local"))
        store.submit(add_usage("ses_local", "openai", "my-local-model", Usage(5, 2), None))
    out = runner.invoke(app, ["sessions", "show", "ses_local"]).stdout
    assert "  total:      5 in / 2 out · cache 0 read / 0 written · price unknown · 1 request\n" in out
    assert "  subagents:  none\n" in out
    assert "$?" in runner.invoke(app, ["sessions", "list"]).stdout
    data = json.loads(runner.invoke(app, ["sessions", "list", "--json"]).stdout)
    assert data[0]["ledger"]["total"]["cost_usd"] is None


def test_show_unknown_and_ambiguous_ids(recorded: None) -> None:
    result = runner.invoke(app, ["sessions", "show", "xyz"])
    assert result.exit_code == 1
    assert result.stderr == "agentcli: no session matches 'xyz'\n"
    assert result.stdout == ""
    result = runner.invoke(app, ["sessions", "show", "ses_"])
    assert result.exit_code == 1
    assert result.stderr.startswith("agentcli: 'ses_' matches several sessions")


def test_list_through_python_dash_m_marks_dead_rows_cancelled(recorded: None, tmp_path: Path) -> None:
    def job(conn: object) -> None:
        conn.execute("UPDATE sessions SET status = 'running', pid = NULL WHERE id = ?", (MAIN,))  # type: ignore[attr-defined]

    with Store.open() as store:
        store.submit(job)
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "sessions", "list"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert MAIN in proc.stdout and "cancelled" in proc.stdout


def test_sessions_cli_imports_no_store_at_start_up(tmp_path: Path) -> None:
    probe = "import sys, agentcli.cli.app; print([m for m in ('agentcli.store.db', 'sqlite3') if m in sys.modules])"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stderr
