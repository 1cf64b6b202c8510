"""Resuming a stored session in-process: the lock a live process holds (and a dead one's that may be taken
over), release on /new, the restored model, ledger and numbering, a history cut mid-tool, `--resume` parsing."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from agentcli.cli.app import optional_resume
from agentcli.config.load import load_config
from agentcli.conversation import Conversation
from agentcli.conversation.stored_sessions import ResumeError
from agentcli.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentcli.llm.usage import Usage
from agentcli.store.db import Store
from agentcli.store.processes import own_identity, process_start
from agentcli.store.writes import add_message, add_usage, create_session

SESSION = "ses_stored0001"
Opened = Callable[[], Conversation]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
async def opened(
    monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> AsyncIterator[Callable[[], Conversation]]:
    """Conversations over one database in tmp_path (each opens its own Store on it)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-resume-test")
    settings = load_config(workspace=workspace, env={**os.environ, "ANTHROPIC_API_KEY": "sk-ant-resume-test"}).settings
    made: list[Conversation] = []

    def make() -> Conversation:
        conversation = Conversation(settings, workspace, store=Store.open(tmp_path / "agentcli.db"))
        made.append(conversation)
        return conversation

    yield make
    for conversation in made:
        await conversation.aclose()


async def _stored_session(conversation: Conversation, *, last: Message | None = None) -> None:
    """A finished session of the workspace: a prompt, an answer (or `last`), one priced request."""
    store = conversation.store
    assert store is not None
    answer = last or Message(role="assistant", content=[TextBlock(text="Noted.")])
    for job in (
        create_session(SESSION, model="claude-elsewhere", provider="anthropic", workspace=str(conversation.workspace)),
        add_message(SESSION, 0, Message.user("remember PELICAN")),
        add_message(SESSION, 1, answer),
        add_usage(SESSION, "anthropic", "claude-elsewhere", Usage(100, 20), 0.5),
    ):
        await store.write(job)


async def _held_by(conversation: Conversation, pid: int | None, started: int | None) -> None:
    store = conversation.store
    assert store is not None

    def job(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE sessions SET pid = ?, pid_started = ? WHERE id = ?", (pid, started, SESSION))

    await store.write(job)


def _holder(tmp_path: Path) -> tuple[int | None, int | None]:
    with sqlite3.connect(tmp_path / "agentcli.db") as conn:
        row = conn.execute("SELECT pid, pid_started FROM sessions WHERE id = ?", (SESSION,)).fetchone()
    return row[0], row[1]


async def test_a_live_process_holds_its_session_a_dead_ones_is_taken_over(opened: Opened, tmp_path: Path) -> None:
    conversation = opened()
    await _stored_session(conversation)
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        await _held_by(conversation, other.pid, process_start(other.pid))
        with pytest.raises(ResumeError) as refused:
            await conversation.resume(SESSION)
        assert str(refused.value) == (
            f"session {SESSION} is in use by agentcli (pid {other.pid}); close it there first, or start a new session"
        )
        assert conversation.session.id != SESSION  # nothing changed
    finally:
        other.communicate(b"")
    resumed = await conversation.resume(None)  # the holder is gone: --continue takes it over
    assert resumed.record.id == conversation.session.id == SESSION
    assert _holder(tmp_path) == own_identity()
    await conversation.new_session()  # /new releases it
    assert _holder(tmp_path) == (None, None)


async def test_resume_restores_model_ledger_numbering_and_answers_a_call_cut_off(opened: Opened) -> None:
    conversation = opened()
    cut = Message(role="assistant", content=[ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "a"})])
    await _stored_session(conversation, last=cut)
    resumed = await conversation.resume(SESSION[:8])
    session = conversation.session
    assert resumed.messages == 3 and not resumed.compacted
    assert conversation.model.display == "anthropic:claude-elsewhere"  # its own model, not main
    assert session.ledger.own.requests == 1 and session.ledger.total.cost_usd == 0.5
    answer = session.messages[-1]
    assert answer.role == "user"
    (result,) = answer.content
    assert isinstance(result, ToolResultBlock) and result.tool_use_id == "toolu_1" and result.is_error
    assert session.next_seq == 3
    store = conversation.store
    assert store is not None
    await store.flush()
    assert len(store.get_messages(SESSION)) == 3  # the answer is stored at seq 2: a later resume sees it too


async def test_keep_model_and_mistakes(opened: Opened, workspace: Path) -> None:
    conversation = opened()
    await _stored_session(conversation)
    with pytest.raises(ResumeError, match="no session matches 'ses_zzz'"):
        await conversation.resume("ses_zzz")
    await conversation.resume(SESSION, keep_model=True)
    assert conversation.model.display == "main"
    with pytest.raises(ResumeError, match="is the current session"):
        await conversation.resume(SESSION)


def test_a_bare_resume_asks_for_the_picker() -> None:
    assert optional_resume(["--resume"]) == ["--resume="]
    assert optional_resume(["run", "--resume", "--yes", "do it"]) == ["run", "--resume=", "--yes", "do it"]
    assert optional_resume(["run", "--resume", "ses_1", "do it"]) == ["run", "--resume", "ses_1", "do it"]
    assert optional_resume(["run", "--", "--resume"]) == ["run", "--", "--resume"]


async def test_a_damaged_stored_message_is_one_line_and_the_current_session_goes_on(
    opened: Opened, tmp_path: Path
) -> None:
    conversation = opened()
    await _stored_session(conversation)
    with sqlite3.connect(tmp_path / "agentcli.db") as conn:
        conn.execute("UPDATE messages SET content = ? WHERE session_id = ? AND seq = 1",
                     ('{"role": "assistant", "content": [{"type": "bogus"}]}', SESSION))
    current = conversation.session.id
    with pytest.raises(ResumeError) as refused:
        await conversation.resume(SESSION)
    assert str(refused.value).startswith(f"message 1 of session {SESSION} in the store is damaged (")
    assert "\n" not in str(refused.value)
    assert conversation.session.id == current  # nothing changed
    assert _holder(tmp_path) == (None, None)  # and the damaged session is not left claimed
