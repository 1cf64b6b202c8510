"""The real Claude Agent SDK rewinds agentcli's files: `ClaudeSDKClient.rewind_files(uuid)` with
`enable_file_checkpointing=True`, the uuid read from the replayed user message (`--replay-user-messages`), puts the
workspace back as it was before that message's turn: what the file tools and Bash changed, byte for byte, while a
file the person changed since is left alone. Without file checkpointing, for an unknown uuid and during a turn the
SDK raises the error agentcli answers with.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import agentcli_path, cli_env

sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, UserMessage  # noqa: E402

pytestmark = pytest.mark.timeout(240)
NOTES = b"first line\r\nsecond line, no newline at the end"
DATA = b"\x00\x01\xfe\xffbinary\n"
CHECKPOINTING = {"enable_file_checkpointing": True, "extra_args": {"replay-user-messages": None},
                 "permission_mode": "bypassPermissions"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_bytes(NOTES)
    (ws / "data.bin").write_bytes(DATA)
    (ws / "keep.txt").write_text("mine\n")
    return ws


@pytest.fixture
def run_sdk(tmp_path: Path, workspace: Path) -> Iterator[Callable[..., Any]]:
    """Serve a script and run an SDK coroutine against agentcli; returns what the coroutine returns."""
    servers: list[FakeLLMServer] = []

    def run(script: Script, body: Callable[[ClaudeAgentOptions, FakeLLMServer], Awaitable[Any]], **options: Any) -> Any:
        server = FakeLLMServer(script)
        server.__enter__()
        servers.append(server)
        opts = ClaudeAgentOptions(cli_path=agentcli_path(), cwd=str(workspace),
                                  env=cli_env("anthropic", server, tmp_path / "home"), **options)
        return anyio.run(body, opts, server)

    yield run
    for server in servers:
        server.__exit__(None, None, None)


def changes(ws: Path) -> list[Step]:
    """The model's turn on `CHANGE-1`: it reads notes.txt, writes a new file in new folders, edits notes.txt, and
    runs a command that creates one file and removes another."""
    return [
        Step(match=Match(turn=0, last_user_contains="CHANGE-1"), reply=Reply(tool_calls=[
            ToolCall(name="Read", id="toolu_read", input={"file_path": str(ws / "notes.txt")})])),
        Step(match=Match(turn=1, last_user_is_tool_result=True), reply=Reply(tool_calls=[
            ToolCall(name="Write", id="toolu_write", input={"file_path": str(ws / "sub" / "dir" / "new.txt"),
                                                            "content": "new\n"}),
            ToolCall(name="Edit", id="toolu_edit", input={"file_path": str(ws / "notes.txt"),
                                                          "old_string": "first line", "new_string": "edited line"}),
            ToolCall(name="Bash", id="toolu_bash", input={"command": "printf 'made\\n' > made.txt && rm data.bin"}),
        ])),
        Step(match=Match(turn=2, last_user_is_tool_result=True), reply=Reply(text="Changed.")),
    ]


def prompt_uuid(messages: list[Any], text: str) -> str:
    """The uuid of the replayed user message `text` (tool results are user messages too)."""
    (replayed,) = [m for m in messages if isinstance(m, UserMessage) and m.content == text]
    assert replayed.uuid
    return replayed.uuid


def test_rewind_files_puts_back_what_the_turn_changed_and_keeps_the_persons_change(
    run_sdk: Callable[..., Any], workspace: Path
) -> None:
    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> str:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("CHANGE-1 change the files")
            messages = [m async for m in client.receive_response()]
            assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Changed."
            uuid = prompt_uuid(messages, "CHANGE-1 change the files")
            assert (workspace / "notes.txt").read_bytes() == NOTES.replace(b"first", b"edited")
            assert (workspace / "made.txt").exists() and not (workspace / "data.bin").exists()
            (workspace / "keep.txt").write_text("changed by the person\n")  # between turns: the person's
            with pytest.raises(Exception, match=re.escape("No file checkpoint found for this message.")):
                await client.rewind_files("00000000-0000-4000-8000-000000000000")
            await client.rewind_files(uuid)
        return uuid

    run_sdk(Script(steps=changes(workspace)), body, **CHECKPOINTING)
    assert (workspace / "notes.txt").read_bytes() == NOTES
    assert (workspace / "data.bin").read_bytes() == DATA
    assert not (workspace / "made.txt").exists() and not (workspace / "sub").exists()
    assert (workspace / "keep.txt").read_text() == "changed by the person\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["data.bin", "keep.txt", "notes.txt"]


def test_without_file_checkpointing_rewind_files_raises_and_changes_nothing(
    run_sdk: Callable[..., Any], workspace: Path
) -> None:
    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> None:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("CHANGE-1 change the files")
            uuid = prompt_uuid([m async for m in client.receive_response()], "CHANGE-1 change the files")
            with pytest.raises(Exception, match=re.escape("File rewinding is not enabled.")):
                await client.rewind_files(uuid)

    run_sdk(Script(steps=changes(workspace)), body, extra_args={"replay-user-messages": None},
            permission_mode="bypassPermissions")
    assert (workspace / "made.txt").exists() and (workspace / "sub" / "dir" / "new.txt").exists()
    assert (workspace / "notes.txt").read_bytes() == NOTES.replace(b"first", b"edited")


def test_rewind_files_during_a_turn_is_refused_and_works_after_it(
    run_sdk: Callable[..., Any], workspace: Path
) -> None:
    script = Script(steps=[*changes(workspace),
                           Step(match=Match(last_user_contains="SLOW-2"), reply=Reply(text="Slow."), hold="slow")])

    async def body(opts: ClaudeAgentOptions, server: FakeLLMServer) -> None:
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("CHANGE-1 change the files")
            uuid = prompt_uuid([m async for m in client.receive_response()], "CHANGE-1 change the files")
            await client.query("SLOW-2 take your time")
            await server.wait_for_requests_async(4, timeout=60)  # the slow turn's request is held
            with pytest.raises(Exception, match="A turn is running"):
                await client.rewind_files(uuid)
            assert (workspace / "made.txt").exists()
            server.release("slow")
            assert [m async for m in client.receive_response()][-1].result == "Slow."
            await client.rewind_files(uuid)

    run_sdk(script, body, **CHECKPOINTING)
    assert (workspace / "notes.txt").read_bytes() == NOTES and (workspace / "data.bin").read_bytes() == DATA
    assert sorted(p.name for p in workspace.iterdir()) == ["data.bin", "keep.txt", "notes.txt"]
