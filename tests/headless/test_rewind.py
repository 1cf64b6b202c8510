"""`rewind_files` in process (`headless.rewind`): a real conversation's checkpoints (the shadow git repository, the
SQLite rows) around changes made as a turn makes them, and the answers the program gets. The SDKs' side of it is in
tests/e2e/test_agent_sdk_rewind.py and the TypeScript `rewind_files` scenario."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from agentcli.checkpoints import FileChange
from agentcli.config.load import load_config
from agentcli.conversation import Conversation
from agentcli.headless.control import RequestError
from agentcli.headless.rewind import NOT_ENABLED, NOT_FOUND, FileRewinds, files_changed, rewinding_enabled
from agentcli.store.db import Store

UUID = "5b1e0c4a-7f1d-4c3e-9a2b-1c2d3e4f5a6b"


@pytest.fixture
async def conversation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Conversation]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("one\ntwo\n")
    (ws / "keep.txt").write_text("mine\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-rewind-test")
    settings = load_config(workspace=ws, env={**os.environ}).settings
    made = Conversation(settings, ws, store=Store.open(tmp_path / "agentcli.db"))
    yield made
    await made.aclose()


async def turn(conversation: Conversation, message_id: str, change: Callable[[Path], object]) -> None:
    """What `Conversation.send` does around a turn, the turn's file changes made by `change`."""
    session = conversation.session
    await conversation.checkpoints.before(session, session.next_seq, "change things", message_id)
    change(conversation.workspace)
    await conversation.checkpoints.after(conversation.session)


def agent_changes(ws: Path) -> None:
    (ws / "notes.txt").write_text("one\nTWO\nthree\n")
    (ws / "new").mkdir()
    (ws / "new" / "file.txt").write_text("a\nb\n")


def test_the_environment_turns_rewinding_on_and_off() -> None:
    assert rewinding_enabled({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true"})
    assert rewinding_enabled({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "1"})
    assert not rewinding_enabled({})
    assert not rewinding_enabled({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "false"})
    assert not rewinding_enabled({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true",
                                  "CLAUDE_CODE_DISABLE_FILE_CHECKPOINTING": "1"})


async def test_a_dry_run_counts_the_lines_then_the_rewind_keeps_the_persons_file(conversation: Conversation) -> None:
    ws = conversation.workspace
    rewinds = FileRewinds(conversation, lambda: False, enabled=True)
    await turn(conversation, UUID, agent_changes)
    (ws / "keep.txt").write_text("the person's\n")  # between turns
    dry = await rewinds.rewind_files({"user_message_id": UUID, "dry_run": True})
    expected = {"canRewind": True, "filesChanged": sorted([str(ws / "new/file.txt"), str(ws / "notes.txt")]),
                "insertions": 1, "deletions": 4,  # notes.txt: "two" back, "TWO" and "three" away; file.txt: 2 away
                "error": "left as they are (changed outside the agent's turns since that message): keep.txt"}
    assert {**dry, "filesChanged": sorted(dry["filesChanged"])} == expected
    assert (ws / "new" / "file.txt").exists()  # a dry run changes nothing
    done = await rewinds.rewind_files({"user_message_id": UUID})
    assert {**done, "filesChanged": sorted(done["filesChanged"])} == expected
    assert (ws / "notes.txt").read_text() == "one\ntwo\n" and not (ws / "new").exists()
    assert (ws / "keep.txt").read_text() == "the person's\n"
    assert [row.kind for row in conversation.checkpoints.rows(conversation.session.id)] == ["prompt", "rewind"]


async def test_refusals_are_error_answers_and_dry_runs_say_why(conversation: Conversation) -> None:
    await turn(conversation, UUID, agent_changes)
    off = FileRewinds(conversation, lambda: False, enabled=False)
    assert await off.rewind_files({"user_message_id": UUID, "dry_run": True}) == {
        "canRewind": False, "error": NOT_ENABLED}
    with pytest.raises(RequestError, match=NOT_ENABLED):
        await off.rewind_files({"user_message_id": UUID})
    on = FileRewinds(conversation, lambda: False, enabled=True)
    for ref in ("not-a-message", "1", "-1"):  # a prompt's number is no uuid here
        with pytest.raises(RequestError, match=NOT_FOUND):
            await on.rewind_files({"user_message_id": ref})
    with pytest.raises(RequestError, match="A turn is running"):
        await FileRewinds(conversation, lambda: True, enabled=True).rewind_files({"user_message_id": UUID})
    with pytest.raises(RequestError, match="needs a user_message_id"):
        await on.rewind_files({})
    with pytest.raises(RequestError, match="dry_run must be true or false"):
        await on.rewind_files({"user_message_id": UUID, "dry_run": "yes"})
    assert (conversation.workspace / "new" / "file.txt").exists()


async def test_a_withdrawn_rewind_still_ends_before_the_next_turn_may_start(conversation: Conversation) -> None:
    import asyncio

    await turn(conversation, UUID, agent_changes)
    rewinds = FileRewinds(conversation, lambda: False, enabled=True)
    request = asyncio.create_task(rewinds.rewind_files({"user_message_id": UUID}))
    while not rewinds.lock.locked():  # the request has begun (each pass lets it run to its next wait)
        await asyncio.sleep(0)
    request.cancel()  # as the channel does on control_cancel_request
    with pytest.raises(asyncio.CancelledError):
        await request
    assert not rewinds.lock.locked() and not (conversation.workspace / "new").exists()
    (_prompt, rewind) = conversation.checkpoints.rows(conversation.session.id)
    assert rewind.kind == "rewind" and rewind.after_tree is not None  # the rewind's checkpoint was closed


def test_a_failed_removal_or_checkout_leaves_its_files_out_of_files_changed() -> None:
    chosen = [FileChange("a.txt", "delete"), FileChange("b.txt", "restore"), FileChange("c.txt", "recreate")]
    assert files_changed(chosen, []) == chosen
    assert [f.path for f in files_changed(chosen, ["a.txt: is a folder now"])] == ["b.txt", "c.txt"]
    assert [f.path for f in files_changed(chosen, ["git checkout-index: cannot write"])] == ["a.txt"]
