"""`agentcli agents list|show` over a workspace's agent files; `agentcli tasks list|show` over a store."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentcli.store.db import Store
from agentcli.store.records import TaskRecord, ToolCount
from agentcli.store.task_writes import upsert_task
from agentcli.store.writes import add_message, create_session, finish_session, tool_call_finished, tool_call_started

runner = CliRunner()


# --- agents --------------------------------------------------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path, isolated_env: Path) -> Path:
    """A workspace with a Claude Code agent, an agentcli override of explore and a broken file."""
    claude = tmp_path / ".claude" / "agents"
    claude.mkdir(parents=True)
    (claude / "reviewer.md").write_text(
        "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, WebFetch, WebSearch, ExitPlanMode\n"
        "model: sonnet\n"
        "color: blue\n---\nYou review code carefully.\n"
    )
    (claude / "broken.md").write_text("---\nname: broken\n---\nno description\n")
    own = tmp_path / ".agentcli" / "agents"
    own.mkdir(parents=True)
    (own / "explore.md").write_text("---\nname: explore\ndescription: Project explorer.\ntools: Read\n---\nLook.\n")
    return tmp_path


def test_agents_list_text(ws: Path) -> None:
    result = runner.invoke(app, ["agents", "list", "--cwd", str(ws)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "SCOPE", "FORMAT", "MODEL", "TOOLS", "SOURCE"]
    rows = {line.split()[0]: line for line in lines[1:6]}
    assert list(rows) == ["general", "explore", "plan", "summary", "code-reviewer"]
    assert rows["general"].split()[1:5] == ["built-in", "built-in", "inherit", "all"]
    assert rows["plan"].split()[1:5] == ["built-in", "built-in", "main", "read-only"]
    assert rows["code-reviewer"].split()[1:3] == ["project", "claude"]
    assert "project" in rows["explore"] and ".agentcli/agents/explore.md" in rows["explore"]
    assert "sonnet" in rows["code-reviewer"] and "Read, Grep, WebFetch, WebSearch (read-only)" in rows["code-reviewer"]
    out = result.stdout
    assert "Skipped files:\n  .claude/agents/broken.md: missing required 'description' in the front matter" in out
    assert "code-reviewer (project, .claude/agents/reviewer.md): tools agentcli lacks were dropped: ExitPlanMode" in out
    assert "Shadowed definitions:\n  explore (built-in, built-in) is hidden by explore (project," in out


def test_agents_list_json(ws: Path) -> None:
    result = runner.invoke(app, ["agents", "list", "--cwd", str(ws), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    agents = {a["name"]: a for a in data["agents"]}
    assert agents["code-reviewer"]["tools"] == ["Read", "Grep", "WebFetch", "WebSearch"]
    assert agents["code-reviewer"]["format"] == "claude"
    assert agents["summary"]["read_only"] is True and "prompt" not in agents["summary"]
    assert data["skipped"][0]["path"].endswith("broken.md")
    assert data["shadowed"][0]["name"] == "explore" and data["shadowed"][0]["shadowed_by"].endswith("explore.md")


def test_agents_show(ws: Path) -> None:
    result = runner.invoke(app, ["agents", "show", "Code_Reviewer", "--cwd", str(ws)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("Agent code-reviewer\n")
    assert "format:" in out and "claude" in out and "model:       sonnet" in out
    assert "tools:       Read, Grep, WebFetch" in out
    assert "warning:     tools agentcli lacks were dropped: ExitPlanMode" in out
    assert out.rstrip().endswith("Prompt:\n\nYou review code carefully.")
    data = json.loads(runner.invoke(app, ["agents", "show", "explore", "--cwd", str(ws), "--json"]).stdout)
    assert data["scope"] == "project" and data["prompt"] == "Look." and data["allowed_tools"] == ["Read"]


def test_agents_show_unknown(ws: Path) -> None:
    result = runner.invoke(app, ["agents", "show", "nobody", "--cwd", str(ws)])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "agentcli: no agent named 'nobody'. Available: general, explore, plan, summary, code-reviewer"
    )
    assert result.stdout == ""



def test_agents_new_writes_a_claude_format_file_that_the_registry_loads(tmp_path: Path, isolated_env: Path) -> None:
    args = ["agents", "new", "api-auditor", "--cwd", str(tmp_path), "-d", "Audits the HTTP API for auth gaps.",
            "--tools", "read, Grep,Glob", "--model", "haiku"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    path = tmp_path / ".claude" / "agents" / "api-auditor.md"
    assert f"created {path}: agent 'api-auditor', tools: Read, Glob, Grep (read-only)" in result.stdout
    text = path.read_text()
    assert text.startswith("---\nname: api-auditor\ndescription: Audits the HTTP API for auth gaps.\n")
    assert "tools: Read, Grep, Glob\nmodel: haiku\n---\n" in text
    shown = runner.invoke(app, ["agents", "show", "api-auditor", "--cwd", str(tmp_path), "--json"])
    data = json.loads(shown.stdout)
    assert (data["format"], data["scope"], data["model"]) == ("claude", "project", "haiku")
    assert data["allowed_tools"] == ["Read", "Glob", "Grep"] and data["warnings"] == []

    again = runner.invoke(app, args)  # never overwrites without --force
    assert again.exit_code == 1 and "already exists (--force replaces it)" in again.stderr
    assert runner.invoke(app, [*args, "--force", "-d", "Second take."]).exit_code == 0
    assert "description: Second take." in path.read_text()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["Bad Name"], "is not a valid agent name"),
        (["../escape"], "is not a valid agent name"),
        (["ok", "--tools", "Read, Teleport"], "unknown tool(s): Teleport"),
    ],
)
def test_agents_new_refuses_bad_names_and_tools(tmp_path: Path, isolated_env: Path, args: list[str], said: str) -> None:
    result = runner.invoke(app, ["agents", "new", *args, "--cwd", str(tmp_path)])
    assert result.exit_code == 2 and said in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / ".claude").exists()


# --- tasks ---------------------------------------------------------------------------------------------

PARENT, CHILD, OTHER = "ses_parent01", "ses_child01", "ses_other01"
T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def stored(isolated_env: Path) -> None:
    """A parent session with one finished explore task (and its child transcript), plus a dead running task."""
    grep = ToolUseBlock(id="tc_grep", name="Grep", input={"pattern": "def login"})
    record = TaskRecord(
        task_id="tsk_abc123",
        parent_session_id=PARENT,
        parent_tool_call_id="tc_task",
        child_session_id=CHILD,
        depth=1,
        chain=["main", "explore"],
        subagent_type="explore",
        description="Find auth code",
        prompt="Find where login is implemented.",
        model_used="anthropic:claude-haiku-4-5",
        status="completed",
        result="login is in auth.py:3\n\nIt checks the password hash.",
        tool_summary=[ToolCount(tool="Grep", count=1)],
        time_ms=1500.0,
        tool_calls=1,
        input_tokens=1200,
        output_tokens=80,
        cost_usd=0.0012,
        started_at=T0,
        finished_at=T0 + timedelta(seconds=1.5),
    )
    dead = TaskRecord(
        task_id="tsk_dead99",
        parent_session_id=OTHER,
        subagent_type="plan",
        description="Plan a refactor",
        status="running",
        started_at=T0 - timedelta(hours=1),
    )
    with Store.open() as store:
        for job in (
            create_session(PARENT, model="claude-sonnet-4-5", provider="anthropic", workspace="/ws"),
            create_session(OTHER, model="claude-sonnet-4-5", provider="anthropic", workspace="/ws"),
            create_session(
                CHILD,
                model="claude-haiku-4-5",
                provider="anthropic",
                agent="explore#1",
                depth=1,
                parent_session_id=PARENT,
                task_id="tsk_abc123",
                agent_type="explore",
            ),
            add_message(CHILD, 0, Message.user("Find where login is implemented.")),
            add_message(
                CHILD,
                1,
                Message(role="assistant", content=[TextBlock(text="Searching."), grep]),
            ),
            tool_call_started(CHILD, "tc_grep", "Grep", {"pattern": "def login"}, "Grep 'def login'"),
            tool_call_finished(
                CHILD, "tc_grep", "Grep", is_error=False, output="auth.py:3: def login():", duration_ms=4
            ),
            add_message(CHILD, 2, Message(role="user", content=[ToolResultBlock(tool_use_id="tc_grep", content="x")])),
            add_message(CHILD, 3, Message(role="assistant", content=[TextBlock(text="login is in auth.py:3")])),
            finish_session(CHILD, "completed"),
            upsert_task(record),
            upsert_task(dead),
        ):
            store.submit(job)
    # The dead task's process is gone: `tasks` must mark it cancelled before showing it.
    db = Store.open()
    path = db.path
    db.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE tasks SET pid = 999999999, pid_started = 1 WHERE task_id = 'tsk_dead99'")
    conn.close()


def test_tasks_list(stored: None) -> None:
    result = runner.invoke(app, ["tasks", "list"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:5] == ["ID", "STARTED", "STATUS", "TYPE", "MODEL"]
    assert len(lines) == 3
    row = next(line for line in lines if line.startswith("tsk_abc123"))
    for cell in ("completed", "explore", "anthropic:claude-haiku-4-5", "1.5 s", "1.2k/80", "$0.0012", "Find auth code"):
        assert cell in row
    dead = next(line for line in lines if line.startswith("tsk_dead99"))
    assert "cancelled" in dead and "plan" in dead


def test_tasks_list_filters_and_json(stored: None) -> None:
    result = runner.invoke(app, ["tasks", "list", "--session", "ses_par", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [t["task_id"] for t in data] == ["tsk_abc123"]
    assert data[0]["tool_summary"] == [{"tool": "Grep", "count": 1}]
    assert len(json.loads(runner.invoke(app, ["tasks", "list", "--limit", "1", "--json"]).stdout)) == 1
    missing = runner.invoke(app, ["tasks", "list", "--session", "nope"])
    assert missing.exit_code == 1 and "no session matches 'nope'" in missing.stderr
    ambiguous = runner.invoke(app, ["tasks", "list", "--session", "ses_"])
    assert ambiguous.exit_code == 1 and "matches several sessions" in ambiguous.stderr


def test_tasks_show(stored: None) -> None:
    result = runner.invoke(app, ["tasks", "show", "tsk_abc"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("Task tsk_abc123\n")
    for line in (
        "  type:           explore",
        "  description:    Find auth code",
        "  status:         completed",
        "  model:          anthropic:claude-haiku-4-5",
        f"  parent:         {PARENT} (tool call tc_task)",
        f"  session:        {CHILD}",
        "  depth:          1",
        "  chain:          main → explore",
        "  time:           1.5 s",
        "  tool calls:     1 (Grep ×1)",
        "  files modified: -",
        "  tokens:         1,200 in / 80 out · cache 0 read / 0 written (its subagents included)",
        "  cost:           $0.0012",
    ):
        assert line in out.splitlines(), line
    assert "Prompt:\nFind where login is implemented." in out
    assert "Result:\nlogin is in auth.py:3\n\nIt checks the password hash." in out
    assert f"Transcript (session {CHILD}):" in out
    assert "→ Grep: Grep 'def login'  [ok, 4 ms]" in out  # rendered as `sessions show` does
    assert "[assistant]\nlogin is in auth.py:3" in out


def test_tasks_show_json_and_dead_task(stored: None) -> None:
    data = json.loads(runner.invoke(app, ["tasks", "show", "tsk_abc123", "--json"]).stdout)
    assert data["task"]["status"] == "completed" and data["task"]["chain"] == ["main", "explore"]
    assert data["child_session"]["id"] == CHILD
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "user", "assistant"]
    assert data["tool_calls"][0]["output"] == "auth.py:3: def login():"
    dead = json.loads(runner.invoke(app, ["tasks", "show", "tsk_dead", "--json"]).stdout)
    assert dead["task"]["status"] == "cancelled" and dead["child_session"] is None and dead["messages"] == []
    text = runner.invoke(app, ["tasks", "show", "tsk_dead"]).stdout
    assert "status:         cancelled" in text and "Error:\ninterrupted" in text


def test_tasks_show_unknown_and_empty(isolated_env: Path) -> None:
    empty = runner.invoke(app, ["tasks", "list"])
    assert empty.exit_code == 0 and empty.stdout.strip() == "No tasks yet."
    result = runner.invoke(app, ["tasks", "show", "tsk_nothing"])
    assert result.exit_code == 1
    assert result.stderr.strip() == "agentcli: no task matches 'tsk_nothing'"


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [("agentcli ses", 1, "sessions"), ("agentcli agents n", 2, "new"),
     ("agentcli run --output-f", 2, "--output-format")],
)
def test_shell_completion_completes_commands_and_options(words: str, cword: int, expected: str, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "_AGENTCLI_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    proc = subprocess.run([sys.executable, "-m", "agentcli"], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert expected in proc.stdout.split()
    shown = subprocess.run([sys.executable, "-m", "agentcli", "--show-completion", "bash"],
                           # the shell named, not detected from this process's ancestors (none is a shell when
                           # the suite runs detached)
                           env={**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"},
                           capture_output=True, text=True, timeout=60)
    assert "_AGENTCLI_COMPLETE=complete_bash" in shown.stdout
