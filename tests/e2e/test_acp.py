"""`agentcli acp` driven by the ACP Python SDK's client side (`acp.spawn_agent_process`), as an editor drives it,
against the scripted fake server. The SDK hands the child a trimmed environment unless told otherwise: the
tests pass theirs (the fake server's address and key, private XDG folders) explicitly.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.interfaces import Agent
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
)

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env


class EditorClient:
    """The client side: records every update and permission question; answers questions with `answers` in order."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.answers = list(answers or [])
        self.on_ask: Callable[[], Awaitable[None]] | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answers.pop(0)))

    def on_connect(self, conn: Agent) -> None:
        pass

    def of(self, kind: type) -> list[Any]:
        return [u for _, u in self.updates if isinstance(u, kind)]

    def text(self) -> str:
        return "".join(u.content.text for u in self.of(AgentMessageChunk) if u.field_meta is None)


Body = Callable[[ClientSideConnection, EditorClient, FakeLLMServer], Awaitable[Any]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("first line\nsecond line\n")
    return ws


@pytest.fixture
def run_acp(tmp_path: Path, workspace: Path) -> Callable[..., Any]:
    """Serve `script`, start `agentcli acp`, initialize, and run `body(conn, client, server)`."""

    def run(script: Script, body: Body, client: EditorClient | None = None) -> Any:
        editor = client or EditorClient()
        with FakeLLMServer(script) as server, open(tmp_path / "stderr.txt", "a") as stderr:
            env = cli_env("anthropic", server, tmp_path / "home")

            async def main() -> Any:
                async with spawn_agent_process(editor, sys.executable, "-m", "agentcli", "acp", env=env,
                                               cwd=workspace, transport_kwargs={"stderr": stderr}) as (conn, _):
                    await conn.initialize(protocol_version=PROTOCOL_VERSION)
                    return await asyncio.wait_for(body(conn, editor, server), timeout=60)

            return asyncio.run(main())

    return run


async def _prompt(conn: ClientSideConnection, session_id: str, text: str) -> str:
    response = await conn.prompt(session_id=session_id, prompt=[text_block(text)])
    return response.stop_reason


def test_initialize_says_what_the_agent_offers(run_acp: Callable[..., Any]) -> None:
    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> Any:
        return await conn.initialize(protocol_version=PROTOCOL_VERSION)

    reply = run_acp(Script(steps=[]), body)
    capabilities = reply.agent_capabilities
    assert reply.protocol_version == PROTOCOL_VERSION and reply.agent_info.name == "agentcli"
    assert capabilities.load_session and capabilities.prompt_capabilities.embedded_context
    assert capabilities.mcp_capabilities.http and not capabilities.mcp_capabilities.sse
    assert [m.id for m in reply.auth_methods] == ["environment"]


def test_a_prompt_streams_text_chunks_and_a_read_call(run_acp: Callable[..., Any], workspace: Path) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="What is in notes.txt"),
             reply=Reply(text="Let me look.", tool_calls=[ToolCall(name="Read", id="toolu_read",
                                                                    input={"file_path": "notes.txt"})])),
        Step(match=Match(turn=1, last_user_contains="second line"),
             reply=Reply(text="It holds two lines.", chunk_size=4)),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> Any:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert session.session_id.startswith("ses_")
        assert session.modes is not None and session.modes.current_mode_id == "ask"
        return session.session_id, await _prompt(conn, session.session_id, "What is in notes.txt?")

    client = EditorClient()
    session_id, stop = run_acp(script, body, client)
    assert stop == "end_turn"
    assert {sid for sid, _ in client.updates} == {session_id}
    assert client.text() == "Let me look.It holds two lines."
    assert len(client.of(AgentMessageChunk)) > 2  # streamed in pieces
    (start,) = client.of(ToolCallStart)
    assert (start.tool_call_id, start.kind, start.status) == ("toolu_read", "read", "in_progress")
    assert start.title.startswith("Read") and start.locations[0].path == str(workspace / "notes.txt")
    (done,) = client.of(ToolCallProgress)
    assert done.tool_call_id == "toolu_read" and done.status == "completed"
    assert "second line" in done.content[0].content.text
    commands = client.of(AvailableCommandsUpdate)
    assert commands and {"model", "cost", "compact"} <= {c.name for c in commands[0].available_commands}
    usage = client.of(UsageUpdate)
    assert usage and usage[-1].size > 0 and usage[-1].used > 0
