"""One ledger, one meaning everywhere, through the real CLI: a run with a subagent, then what
`run --output-format json`, the text run's usage line, `sessions show --json` and `sessions list --json`
say about it. Each reports the whole tree's total, split into the main agent's own requests and the
delegated subtree, cache tokens apart from input; and they all agree with what the model server billed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall, Usage
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
              "requests")
# What each request bills (Anthropic terms), main agent's then the subagent's.
MAIN_USAGE = (Usage(input_tokens=300, output_tokens=40, cache_read_input_tokens=1000, cache_creation_input_tokens=200),
              Usage(input_tokens=500, output_tokens=25, cache_read_input_tokens=1200))
SUB_USAGE = (Usage(input_tokens=120, output_tokens=30, cache_read_input_tokens=0, cache_creation_input_tokens=400),
             Usage(input_tokens=90, output_tokens=15, cache_read_input_tokens=400))


def _script(api: str) -> Script:
    task = ToolCall(name="Task", input={"description": "Find config loader", "prompt": "Where is load_config?",
                                        "subagent_type": "explore"})
    sub = "# Task\nFind config loader"
    return Script(steps=[
        Step(match=Match(api=api, system_contains=MAIN, turn=0),
             reply=Reply(text="Delegating.", tool_calls=[task], usage=MAIN_USAGE[0])),
        Step(match=Match(api=api, system_contains=sub, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "config.py"})], usage=SUB_USAGE[0])),
        Step(match=Match(api=api, system_contains=sub, turn=1),
             reply=Reply(text="load_config is in config.py:1.", usage=SUB_USAGE[1])),
        Step(match=Match(api=api, system_contains=MAIN, turn=1),
             reply=Reply(text="It is in config.py.", usage=MAIN_USAGE[1])),
    ])


def _billed(api: str, usages: tuple[Usage, ...]) -> dict[str, int]:
    """What the server billed for these replies, in the ledger's terms (input apart from cache tokens)."""
    out = dict.fromkeys(TOKEN_KEYS, 0)
    for u in usages:
        assert u.input_tokens is not None and u.output_tokens is not None
        written = u.cache_creation_input_tokens
        # OpenAI reports only cached reads: cache writes are fresh prompt tokens there.
        out["input_tokens"] += u.input_tokens + (written if api == "openai" else 0)
        out["output_tokens"] += u.output_tokens
        out["cache_read_tokens"] += u.cache_read_input_tokens
        out["cache_write_tokens"] += 0 if api == "openai" else written
        out["requests"] += 1
    return out


def _tokens(spend: dict[str, Any]) -> dict[str, int]:
    return {k: spend[k] for k in TOKEN_KEYS}


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Two ledgers (own, delegated, total) agree: every token field exactly, the cost to rounding."""
    for part in ("own", "delegated", "total"):
        assert _tokens(a[part]) == _tokens(b[part]), part
        assert (a[part]["cost_usd"] is None) == (b[part]["cost_usd"] is None), part
        if a[part]["cost_usd"] is not None:
            assert a[part]["cost_usd"] == pytest.approx(b[part]["cost_usd"]), part


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.py").write_text("def load_config():\n    return {}\n")
    return ws


def _stored(env: dict[str, str], session_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The session's ledger as `sessions show --json` and as `sessions list --json` give it."""
    shown = run_cli(["sessions", "show", session_id, "--json"], env)
    assert shown.returncode == 0, shown.stderr
    listed = run_cli(["sessions", "list", "--json"], env)
    assert listed.returncode == 0, listed.stderr
    (row,) = [s for s in json.loads(listed.stdout) if s["id"] == session_id]
    return json.loads(shown.stdout)["ledger"], row["ledger"]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_json_run_and_stored_session_report_one_ledger(api: str, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with FakeLLMServer(_script(api)) as server:
        env = cli_env(api, server, tmp_path)
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "Where is the config loaded?"], env)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    result = last_json(proc.stdout)
    ledger = result["ledger"]
    # The split is what the server billed: the main agent's two requests, the subagent's two.
    assert _tokens(ledger["own"]) == _billed(api, MAIN_USAGE)
    assert _tokens(ledger["delegated"]) == _billed(api, SUB_USAGE)
    assert _tokens(ledger["total"]) == _billed(api, MAIN_USAGE + SUB_USAGE)
    assert ledger["own"]["cache_read_tokens"] > 0 and ledger["delegated"]["cache_read_tokens"] > 0
    for key in TOKEN_KEYS:
        assert ledger["total"][key] == ledger["own"][key] + ledger["delegated"][key]
    # json's `usage` and `cost_usd` are the tree's total, not the main agent's own; `usage` names the cache
    # tokens the Anthropic way too, and `total_cost_usd` is Claude Code's name of the cost.
    total = ledger["total"]
    assert result["usage"] == {**{k: v for k, v in total.items() if k != "cost_usd"},
                               "cache_creation_input_tokens": total["cache_write_tokens"],
                               "cache_read_input_tokens": total["cache_read_tokens"]}
    assert result["cost_usd"] == total["cost_usd"]
    assert result["total_cost_usd"] == (total["cost_usd"] or 0)
    (task,) = result["tasks"]
    assert (task["input_tokens"], task["cache_read_tokens"]) == (
        ledger["delegated"]["input_tokens"], ledger["delegated"]["cache_read_tokens"])
    if api == "anthropic":  # priced models: own + delegated = total in dollars too
        assert ledger["total"]["cost_usd"] == pytest.approx(ledger["own"]["cost_usd"] + ledger["delegated"]["cost_usd"])
        assert ledger["delegated"]["cost_usd"] > 0
    else:  # a compatible server's model: no known price, and it says so rather than $0
        assert ledger["total"]["cost_usd"] is None and result["cost_usd"] is None
    # The stored session says the same, through both inspection commands.
    shown, listed = _stored(env, result["session_id"])
    _same(shown, ledger)
    _same(listed, ledger)


def test_text_run_usage_line_is_the_stored_ledger(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with FakeLLMServer(_script("anthropic")) as server:
        env = cli_env("anthropic", server, tmp_path)
        proc = run_cli(["run", "--cwd", str(ws), "Where is the config loaded?"], env)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    line = proc.stderr.strip().splitlines()[-1]
    match = re.search(r"session (ses_\w+)\]$", line)
    assert match, line
    ledger, _ = _stored(env, match.group(1))
    total, delegated = ledger["total"], ledger["delegated"]

    def figures(spend: dict[str, Any]) -> str:
        return (f"{spend['input_tokens']:,} in / {spend['output_tokens']:,} out · cache "
                f"{spend['cache_read_tokens']:,} read / {spend['cache_write_tokens']:,} written · "
                f"${spend['cost_usd']:.4f}")

    assert f" turns · {figures(total)} (subagents {figures(delegated)}) · session " in line
    assert total["input_tokens"] == _billed("anthropic", MAIN_USAGE + SUB_USAGE)["input_tokens"]
