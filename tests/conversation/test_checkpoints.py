"""A session's checkpoints outlive the session they were copied from (`--fork-session`), and a stored session's
rewinder is refused while another live process holds the session."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentcli.config.load import load_config
from agentcli.conversation import ResumeError, StoredRewinder
from agentcli.conversation.checkpoints import PromptCheckpoints
from agentcli.events import EventBus
from agentcli.llm import Message
from agentcli.store import add_checkpoint, copy_session, delete_session_tree
from agentcli.store.db import Store
from agentcli.store.writes import add_message, create_session

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


async def test_a_forks_checkpoints_outlive_the_session_it_was_copied_from(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("before")
    settings = load_config(workspace=ws, env=dict(os.environ)).settings
    with Store.open(tmp_path / "agentcli.db") as store:
        checkpoints = PromptCheckpoints(settings.checkpoints, ws, store, EventBus(), root=tmp_path / "ck")
        snap = checkpoints.repo.snapshot()
        await store.write(create_session("ses_original", workspace=str(ws)))
        await store.write(add_message("ses_original", 0, Message.user("write it")))
        row = await store.write(add_checkpoint("ses_original", seq=0, kind="prompt", workspace=str(ws),
                                               before_tree=snap.tree, prompt="write it"))
        checkpoints.repo.keep(f"ses_original/{row}", snap.tree)
        await store.write(copy_session("ses_original", "ses_fork"))
        checkpoints.adopt("ses_fork")
        await store.write(delete_session_tree("ses_original"))
        assert checkpoints.repo.forget("ses_original/") == 1
        (ws / "a.txt").write_text("after")
        (fork_row,) = checkpoints.prompts("ses_fork")
        assert fork_row.before_tree == snap.tree
        assert checkpoints.repo.blob(fork_row.before_tree, "a.txt") == b"before"  # still held, by the fork's ref


async def test_a_session_a_live_process_holds_is_not_rewound(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_config(workspace=ws, env=dict(os.environ)).settings
    with Store.open(tmp_path / "agentcli.db") as store:
        await store.write(create_session("ses_live", workspace=str(ws)))  # held by this (live) process
        other = Store.open(tmp_path / "agentcli.db")
        try:
            import sqlite3

            from agentcli.store.processes import process_start

            def foreign(conn: sqlite3.Connection) -> None:  # pid 1: alive, not us
                conn.execute("UPDATE sessions SET pid = 1, pid_started = ? WHERE id = 'ses_live'", (process_start(1),))

            await other.write(foreign)
        finally:
            other.close()
        with pytest.raises(ResumeError, match="is in use by agentcli"):
            await StoredRewinder.claim(settings, store, "ses_live")
