"""`agentcli acp` driven by the ACP Python SDK's client side (`acp.spawn_agent_process`), as an editor drives it,
against the scripted fake server. The SDK hands the child a trimmed environment unless told otherwise: the
tests pass theirs (the fake server's address and key, private XDG folders) explicitly.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.interfaces import Agent
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    FileEditToolCallContent,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env

pytestmark = pytest.mark.e2e  # agentcli end to end (the fast loop, `-m "not e2e and not terminal"`, leaves it out)


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
    """Serve `script`, start `agentcli acp`, initialize, and run `body(conn, client, server)` (`unstable`: the
    client takes the protocol's unstable requests, e.g. `elicitation/create`)."""

    def run(script: Script, body: Body, client: EditorClient | None = None,
            capabilities: ClientCapabilities | None = None, *, unstable: bool = False, **extra_env: str) -> Any:
        editor = client or EditorClient()
        with FakeLLMServer(script) as server, open(tmp_path / "stderr.txt", "a") as stderr:
            env = cli_env("anthropic", server, tmp_path / "home", **extra_env)

            async def main() -> Any:
                async with spawn_agent_process(editor, sys.executable, "-m", "agentcli", "acp", env=env,
                                               cwd=workspace, transport_kwargs={"stderr": stderr},
                                               use_unstable_protocol=unstable) as (conn, _):
                    await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
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
    assert capabilities.prompt_capabilities.image and not capabilities.prompt_capabilities.audio
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


def test_without_a_key_a_session_is_refused_with_an_authentication_error(run_acp: Callable[..., Any],
                                                                         workspace: Path) -> None:
    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> RequestError:
        with pytest.raises(RequestError) as caught:
            await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return caught.value

    error = run_acp(Script(steps=[]), body, ANTHROPIC_API_KEY="")
    assert error.code == -32000 and "ANTHROPIC_API_KEY" in str(error)


def _write(path: str, content: str, call_id: str) -> ToolCall:
    return ToolCall(name="Write", id=call_id, input={"file_path": path, "content": content})


def test_a_write_that_asks_is_allowed_and_one_rejected(run_acp: Callable[..., Any], workspace: Path) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[_write("a.txt", "allowed\n", "toolu_a")])),
        Step(match=Match(turn=1, last_user_is_tool_result=True), reply=Reply(tool_calls=[
            _write("b.txt", "rejected\n", "toolu_b")])),
        Step(match=Match(turn=2, last_user_contains="declined"), reply=Reply(text="One written, one refused.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "write two files")

    client = EditorClient(answers=["allow_once", "reject_once"])
    assert run_acp(script, body, client) == "end_turn"
    assert (workspace / "a.txt").read_text() == "allowed\n" and not (workspace / "b.txt").exists()
    (call_a, options), (call_b, _) = client.asked
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert (call_a.tool_call_id, call_a.kind, call_a.status) == ("toolu_a", "edit", "pending")
    assert call_a.content[0].path == str(workspace / "a.txt") and call_a.content[0].new_text == "allowed"
    assert call_a.content[0].old_text is None  # a new file
    starts = {u.tool_call_id: u for u in client.of(ToolCallStart)}
    assert starts["toolu_a"].content[0].new_text == "allowed\n"  # the call's own text, before it runs
    # the tool_call reached the editor before the question about it
    order = [u.tool_call_id for u in client.of(ToolCallStart)]
    assert order == ["toolu_a", "toolu_b"] and call_b.tool_call_id == "toolu_b"
    finished = {u.tool_call_id: u for u in client.of(ToolCallProgress)}
    assert finished["toolu_a"].status == "completed" and finished["toolu_a"].content[0].new_text == "allowed"
    assert finished["toolu_b"].status == "failed" and finished["toolu_b"].raw_output["code"] == "permission_denied"
    assert client.text() == "One written, one refused."


def test_reject_always_refuses_the_same_call_without_asking_again(run_acp: Callable[..., Any],
                                                                  workspace: Path) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[_write("b.txt", "one\n", "toolu_1")])),
        Step(match=Match(turn=1), reply=Reply(tool_calls=[_write("b.txt", "two\n", "toolu_2")])),
        Step(match=Match(turn=2, last_user_contains="[permissions] deny"), reply=Reply(text="Refused twice.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "write b.txt")

    client = EditorClient(answers=["reject_always"])
    assert run_acp(script, body, client) == "end_turn"
    assert len(client.asked) == 1 and not (workspace / "b.txt").exists()
    assert client.text() == "Refused twice."


def test_cancel_mid_turn_ends_the_prompt_cancelled_and_the_session_takes_the_next(
    run_acp: Callable[..., Any], workspace: Path
) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0, last_user_contains="slow"), reply=Reply(text="never sent"), hold="slow"),
        Step(match=Match(last_user_contains="after"), reply=Reply(text="Back again.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> tuple[str, str]:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        first = asyncio.create_task(_prompt(conn, session.session_id, "a slow question"))
        deadline = time.monotonic() + 30
        while not server.requests and time.monotonic() < deadline:  # the request waits on the hold
            await asyncio.sleep(0.02)
        await conn.cancel(session_id=session.session_id)
        stopped = await first
        server.release("slow")
        return stopped, await _prompt(conn, session.session_id, "after the cancel")

    client = EditorClient()
    assert run_acp(script, body, client) == ("cancelled", "end_turn")
    assert client.text() == "Back again."


def test_a_task_call_carries_its_subagents_calls_tied_to_it(run_acp: Callable[..., Any], workspace: Path) -> None:
    task = ToolCall(name="Task", id="toolu_task", input={
        "description": "Read the notes", "prompt": "What does notes.txt say?", "subagent_type": "explore"})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Delegating.", tool_calls=[task])),
        Step(match=Match(system_contains="# Task\nRead the notes", turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", id="toolu_sub_read", input={"file_path": "notes.txt"})])),
        Step(match=Match(system_contains="# Task\nRead the notes", turn=1, last_user_contains="second line"),
             reply=Reply(text="Two lines.")),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="Two lines."),
             reply=Reply(text="The notes hold two lines.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "Summarise the notes")

    client = EditorClient()
    assert run_acp(script, body, client) == "end_turn"
    starts = {u.tool_call_id: u for u in client.of(ToolCallStart)}
    parent, child = starts["toolu_task"], starts["toolu_sub_read"]
    assert parent.kind == "think" and parent.title == "Task (explore): Read the notes" and parent.field_meta is None
    assert child.kind == "read" and child.title.startswith("explore")
    assert child.field_meta["claudeCode"] == {"parentToolUseId": "toolu_task"}
    assert child.field_meta["agentcli"]["parentToolCallId"] == "toolu_task"
    assert child.field_meta["agentcli"]["subagentType"] == "explore"
    sub_text = "".join(u.content.text for u in client.of(AgentMessageChunk) if u.field_meta)
    assert sub_text == "Two lines."  # the subagent's answer, tied to the Task call, not the main answer
    assert client.text() == "Delegating.The notes hold two lines."
    updates = [u for u in client.of(ToolCallProgress) if u.tool_call_id == "toolu_sub_read"]
    assert updates and all(u.field_meta["claudeCode"]["parentToolUseId"] == "toolu_task" for u in updates)
    ids = [u.tool_call_id for _, u in client.updates if isinstance(u, ToolCallStart | ToolCallProgress)]
    assert ids.index("toolu_task") < ids.index("toolu_sub_read")  # the parent first, then its subagent's calls
    done = [u for u in client.of(ToolCallProgress) if u.tool_call_id == "toolu_task"][-1]
    assert done.status == "completed" and "Two lines." in done.content[0].content.text


def test_a_stored_session_loads_with_its_messages_replayed(run_acp: Callable[..., Any], workspace: Path) -> None:
    first = Script(steps=[
        Step(match=Match(turn=0, last_user_contains="Read the notes"), reply=Reply(
            text="Reading.", tool_calls=[ToolCall(name="Read", id="toolu_old", input={"file_path": "notes.txt"})])),
        Step(match=Match(turn=1), reply=Reply(text="Two lines in all.")),
    ])

    async def new(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await _prompt(conn, session.session_id, "Read the notes")
        return session.session_id

    session_id = run_acp(first, new)
    second = Script(steps=[Step(match=Match(last_user_contains="And now?", any_message_contains="Two lines in all."),
                                reply=Reply(text="Still two."))])

    async def load(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        loaded = await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        assert loaded.modes is not None
        replayed = len(client.updates)
        client.replayed = client.updates[:replayed]  # type: ignore[attr-defined]
        return await _prompt(conn, session_id, "And now?")

    client = EditorClient()
    assert run_acp(second, load, client) == "end_turn"
    replayed = [u for _, u in client.replayed]  # type: ignore[attr-defined]
    kinds = [type(u).__name__ for u in replayed if not isinstance(u, AvailableCommandsUpdate)]
    assert kinds == ["UserMessageChunk", "AgentMessageChunk", "ToolCallStart", "ToolCallProgress", "AgentMessageChunk"]
    user = next(u for u in replayed if isinstance(u, UserMessageChunk))
    assert user.content.text == "Read the notes"
    call = next(u for u in replayed if isinstance(u, ToolCallStart))
    assert (call.tool_call_id, call.kind) == ("toolu_old", "read")
    assert replayed[-1].content.text == "Two lines in all."
    assert client.text().endswith("Still two.")


def test_plan_mode_refuses_a_write_without_asking(run_acp: Callable[..., Any], workspace: Path) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[_write("c.txt", "nope\n", "toolu_c")])),
        Step(match=Match(turn=1, last_user_contains="readonly mode"), reply=Reply(text="Planned only.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert {m.id for m in session.modes.available_modes} == {"ask", "accept_edits", "readonly", "auto"}
        await conn.set_session_mode(session_id=session.session_id, mode_id="readonly")
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        return await _prompt(conn, session.session_id, "write c.txt")

    client = EditorClient()
    assert run_acp(script, body, client) == "end_turn"
    assert client.asked == [] and not (workspace / "c.txt").exists()
    (refused,) = [u for u in client.of(ToolCallProgress) if u.tool_call_id == "toolu_c"]
    assert refused.status == "failed" and "readonly" in refused.content[0].content.text


def test_todowrite_becomes_the_plan(run_acp: Callable[..., Any], workspace: Path) -> None:
    todos = [{"content": "Read the notes", "status": "completed"}, {"content": "Answer", "status": "in_progress"}]
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="TodoWrite", input={"todos": todos})])),
        Step(match=Match(turn=1), reply=Reply(text="Planned.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "plan it")

    client = EditorClient()
    assert run_acp(script, body, client) == "end_turn"
    (plan,) = client.of(AgentPlanUpdate)
    assert [(e.content, e.status) for e in plan.entries] == [("Read the notes", "completed"), ("Answer", "in_progress")]


def test_a_slash_command_answers_without_a_model_request(run_acp: Callable[..., Any], workspace: Path) -> None:
    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "/cost")

    client = EditorClient()
    assert run_acp(Script(steps=[]), body, client) == "end_turn"
    assert client.text().startswith("Tokens: 0 in / 0 out")


def test_a_subagents_question_names_the_subagent_and_its_task_call(run_acp: Callable[..., Any],
                                                                    workspace: Path) -> None:
    task = ToolCall(name="Task", id="toolu_task", input={
        "description": "Write the file", "prompt": "Write d.txt", "subagent_type": "general"})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        Step(match=Match(system_contains="# Task\nWrite the file", turn=0),
             reply=Reply(tool_calls=[_write("d.txt", "from the subagent\n", "toolu_sub_write")])),
        Step(match=Match(system_contains="# Task\nWrite the file", turn=1), reply=Reply(text="Written.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "delegate a write")

    client = EditorClient(answers=["allow_once"])
    assert run_acp(script, body, client) == "end_turn"
    ((call, _),) = client.asked
    assert call.tool_call_id == "toolu_sub_write" and call.title.startswith("general")
    assert call.field_meta["claudeCode"] == {"parentToolUseId": "toolu_task"}
    assert call.field_meta["agentcli"]["agent"] == call.title.split(" · ")[0]
    assert (workspace / "d.txt").read_text() == "from the subagent\n"


def test_allow_always_covers_the_next_command_and_bash_output_is_shown(run_acp: Callable[..., Any],
                                                                       workspace: Path) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[
            ToolCall(name="Bash", id="toolu_1", input={"command": "wc -l notes.txt"})])),
        Step(match=Match(turn=1), reply=Reply(tool_calls=[
            ToolCall(name="Bash", id="toolu_2", input={"command": "wc -w notes.txt"})])),
        Step(match=Match(turn=2, last_user_contains="4 notes.txt"), reply=Reply(text="Both ran.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "run two commands")

    client = EditorClient(answers=["allow_always"])
    assert run_acp(script, body, client) == "end_turn"
    ((call, options),) = client.asked  # the second `echo` is covered by "always"
    assert call.kind == "execute" and options[1].field_meta["agentcli"]["scope"]
    finished = {u.tool_call_id: u for u in client.of(ToolCallProgress) if u.status == "completed"}
    assert finished["toolu_1"].content[0].content.text.startswith("```console\n2 notes.txt")
    assert "4 notes.txt" in finished["toolu_2"].content[0].content.text


def test_thinking_streams_as_thought_chunks_and_a_cut_answer_stops_at_max_tokens(
    run_acp: Callable[..., Any], workspace: Path
) -> None:
    from acp.schema import AgentThoughtChunk

    script = Script(steps=[Step(match=Match(turn=0), reply=Reply(
        thinking="Pondering the question.", thinking_signature="sig", text="The answer is cut",
        stop_reason="max_tokens"))])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "think hard")

    client = EditorClient()
    assert run_acp(script, body, client) == "max_tokens"
    assert "".join(u.content.text for u in client.of(AgentThoughtChunk)) == "Pondering the question."
    assert client.text() == "The answer is cut"


def test_the_editors_mcp_server_joins_the_session(run_acp: Callable[..., Any], workspace: Path) -> None:
    pytest.importorskip("mcp_server_time")
    from acp.schema import McpServerStdio

    tool = "mcp__time__get_current_time"
    script = Script(steps=[
        Step(match=Match(system_contains=f"- {tool}: ", turn=0),
             reply=Reply(tool_calls=[ToolCall(name=tool, id="toolu_time", input={"timezone": "UTC"})])),
        Step(match=Match(turn=1, last_user_contains="day_of_week"), reply=Reply(text="It is a fine day.")),
    ])
    server_def = McpServerStdio(name="time", command=sys.executable,
                                args=["-m", "mcp_server_time", "--local-timezone", "UTC"], env=[])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[server_def])
        return await _prompt(conn, session.session_id, "what time is it?")

    client = EditorClient(answers=["allow_once"])
    assert run_acp(script, body, client) == "end_turn"
    ((call, _),) = client.asked  # an MCP tool asks, as in the TUI
    assert call.tool_call_id == "toolu_time" and call.kind == "other"
    assert client.text() == "It is a fine day."


class BufferEditor(EditorClient):
    """An editor with unsaved buffers by path, serving `fs/read_text_file` / `fs/write_text_file` from them."""

    def __init__(self, cwd: Path, buffers: dict[str, str], answers: list[str] | None = None) -> None:
        super().__init__(answers)
        self.cwd = cwd
        self.buffers = buffers
        self.fs: list[tuple[str, str]] = []

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.fs.append(("read", path))
        if path not in self.buffers:
            raise RequestError(-32002, "Resource not found", {"message": f"no buffer for {path}\n(closed)"})
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> None:
        self.fs.append(("write", path))
        self.buffers[path] = content


FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))


def _buffer_script() -> Script:
    edit = {"file_path": "notes.txt", "old_string": "unsaved line", "new_string": "agent line"}
    return Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="Read", id="toolu_r",
                                                                      input={"file_path": "notes.txt"})])),
        Step(match=Match(turn=1, last_user_contains="unsaved line"),
             reply=Reply(tool_calls=[ToolCall(name="Edit", id="toolu_e", input=edit)])),
        Step(match=Match(turn=1), reply=Reply(text="Read the disk.")),
        Step(match=Match(turn=2, last_user_contains="Applied 1 edit"),
             reply=Reply(tool_calls=[_write("new.txt", "from the agent\n", "toolu_w")])),
        Step(match=Match(turn=3, last_user_contains="Created new.txt"), reply=Reply(text="Done in the editor.")),
    ])


async def _one_prompt(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
    assert isinstance(client, BufferEditor)
    session = await conn.new_session(cwd=str(client.cwd), mcp_servers=[])
    return await _prompt(conn, session.session_id, "change the notes")


def test_with_the_clients_fs_the_agent_reads_and_writes_the_editors_buffers(run_acp: Callable[..., Any],
                                                                             workspace: Path) -> None:
    notes = str(workspace / "notes.txt")
    client = BufferEditor(workspace, {notes: "first line\nunsaved line\n"}, answers=["allow_once", "allow_once"])
    assert run_acp(_buffer_script(), _one_prompt, client, FS) == "end_turn"
    assert client.text() == "Done in the editor."
    assert client.buffers == {notes: "first line\nagent line\n", str(workspace / "new.txt"): "from the agent\n"}
    assert client.fs == [("read", notes), ("read", notes), ("read", notes), ("write", notes),
                         ("write", str(workspace / "new.txt"))]  # Read; Edit's question, then its run
    assert (workspace / "notes.txt").read_text() == "first line\nsecond line\n"  # the disk is untouched
    assert not (workspace / "new.txt").exists()
    (edit, _), (write, _) = client.asked  # the questions show the buffer's change
    (diff,), (created,) = edit.content or [], write.content or []
    assert isinstance(diff, FileEditToolCallContent) and isinstance(created, FileEditToolCallContent)
    assert (diff.old_text, diff.new_text) == ("first line\nunsaved line", "first line\nagent line")
    assert created.path == str(workspace / "new.txt")


def test_an_editor_that_cannot_read_a_file_is_a_one_line_tool_error(run_acp: Callable[..., Any],
                                                                     workspace: Path) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="Read", id="toolu_r",
                                                                      input={"file_path": "notes.txt"})])),
        Step(match=Match(turn=1, last_user_is_tool_result=True), reply=Reply(text="Could not read it.")),
    ])
    client = BufferEditor(workspace, {})
    assert run_acp(script, _one_prompt, client, FS) == "end_turn"
    (failed,) = [u for u in client.of(ToolCallProgress) if u.tool_call_id == "toolu_r"]
    assert failed.status == "failed"
    assert failed.content[0].content.text == (f"The editor could not read {workspace / 'notes.txt'}: "
                                              f"no buffer for {workspace / 'notes.txt'} (closed)")


def test_without_the_fs_capability_the_files_are_the_disks(run_acp: Callable[..., Any], workspace: Path) -> None:
    notes = str(workspace / "notes.txt")
    client = BufferEditor(workspace, {notes: "first line\nunsaved line\n"}, answers=["allow_once", "allow_once"])
    assert run_acp(_buffer_script(), _one_prompt, client) == "end_turn"
    assert client.text() == "Read the disk." and client.fs == [] and client.asked == []
    done = next(u for u in client.of(ToolCallProgress) if u.tool_call_id == "toolu_r")
    assert "second line" in done.content[0].content.text


def test_a_background_command_is_a_tool_call_of_its_own_that_fails_or_stops(run_acp: Callable[..., Any],
                                                                            workspace: Path) -> None:
    wait = {"task_id": "bash_1", "wait_seconds": 60}  # twice: for its output, then for its end (no clock)
    calls = [ToolCall(name="Bash", id="toolu_build", input={
                 "command": "printf 'building\\nbroken config\\n'; exit 3", "description": "Build it",
                 "run_in_background": True}),
             ToolCall(name="TaskOutput", input=wait), ToolCall(name="TaskOutput", input=wait),
             ToolCall(name="Bash", id="toolu_sleep", input={"command": "sleep 300", "run_in_background": True}),
             ToolCall(name="TaskCancel", input={"task_id": "bash_2"})]
    script = Script(steps=[*[Step(match=Match(turn=n), reply=Reply(tool_calls=[call])) for n, call in enumerate(calls)],
                           Step(match=Match(turn=len(calls)), reply=Reply(text="Done."))])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="auto")
        return await _prompt(conn, session.session_id, "build, then start a sleeper and stop it")

    client = EditorClient()
    assert run_acp(script, body, client) == "end_turn"
    started = {u.tool_call_id: u for u in client.of(ToolCallStart)}
    build, sleeper = started["bash_1-toolu_build"], started["bash_2-toolu_sleep"]
    assert (build.title, build.kind, build.status) == ("bash_1 · Build it", "execute", "in_progress")
    assert build.raw_input == {"command": "printf 'building\\nbroken config\\n'; exit 3", "task_id": "bash_1"}
    assert build.field_meta["agentcli"]["bashToolCallId"] == "toolu_build"
    assert build.field_meta["agentcli"]["outputFile"].endswith("bash_1.log")
    assert sleeper.title == "bash_2 · sleep 300" and "toolu_build" in started  # the Bash calls stay calls too
    ends = {u.tool_call_id: u for u in client.of(ToolCallProgress) if u.status in ("completed", "failed")}
    assert ends["toolu_build"].status == "completed"  # the Bash call itself ended at once
    failed, stopped = ends["bash_1-toolu_build"], ends["bash_2-toolu_sleep"]
    assert failed.status == "failed" and failed.raw_output["exit_code"] == 3
    assert failed.content[0].content.text == "bash_1 exited with code 3"
    assert "broken config" in failed.content[1].content.text
    assert stopped.status == "completed" and stopped.raw_output["status"] == "stopped"
    assert stopped.content[0].content.text == "bash_2 was stopped"


def test_an_image_in_the_prompt_reaches_the_model(run_acp: Callable[..., Any], workspace: Path) -> None:
    import base64
    import io

    from acp import image_block
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (2000, 1000), (10, 90, 200)).save(out, "PNG")
    script = Script(steps=[Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="A blue band."))])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> Any:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        data = base64.b64encode(out.getvalue()).decode()
        response = await conn.prompt(session_id=session.session_id,
                                     prompt=[text_block("what is this?"), image_block(data, "image/png")])
        return response.stop_reason, server.requests[0].body

    stop, sent = run_acp(script, body)
    assert stop == "end_turn"
    [image] = [b for b in sent["messages"][0]["content"] if b["type"] == "image"]
    assert Image.open(io.BytesIO(base64.b64decode(image["source"]["data"]))).size == (1516, 758)


_LIBRARY = {"question": "Which date library?", "header": "Library",
            "options": [{"label": "date-fns", "description": "small"}, {"label": "luxon", "description": "zones"}]}
_FEATURES = {"question": "Which features?", "header": "Features", "multiSelect": True,
             "options": [{"label": "Dark mode", "description": ""}, {"label": "Search", "description": "find"}]}


def test_ask_user_question_asks_each_question_as_a_permission_request(run_acp: Callable[..., Any],
                                                                       workspace: Path) -> None:
    ask = ToolCall(name="AskUserQuestion", id="toolu_ask", input={"questions": [_LIBRARY, _FEATURES]})
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ask])),
        Step(match=Match(turn=1, last_user_contains='(Library): "luxon"'), reply=Reply(text="Luxon it is.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "which library?")

    client = EditorClient(answers=["choice_1", "choice_1"])
    assert run_acp(script, body, client) == "end_turn"
    (first, first_options), (second, second_options) = client.asked
    assert first.tool_call_id == second.tool_call_id == "toolu_ask" and first.title == "Library: Which date library?"
    assert [(o.option_id, o.name, o.kind) for o in first_options] == [
        ("choice_0", "date-fns", "allow_once"), ("choice_1", "luxon", "allow_once"),
        ("decline", "Decline to answer", "reject_once")]
    assert first_options[1].field_meta == {"agentcli": {"description": "zones"}}
    assert "- luxon: zones" in first.content[0].content.text
    assert second.field_meta["agentcli"]["question"] == {"index": 2, "of": 2, "header": "Features",
                                                         "multiSelect": True}
    assert "editor can take one choice" in second.content[0].content.text  # multiSelect: one pick, said so
    assert [o.name for o in second_options] == ["Dark mode", "Search", "Decline to answer"]
    assert client.text() == "Luxon it is."
    done = {u.tool_call_id: u for u in client.of(ToolCallProgress)}["toolu_ask"]
    assert done.status == "completed" and '(Features): "Search"' in done.content[0].content.text


def test_declining_a_question_in_the_editor_is_a_refusal_the_model_reads(run_acp: Callable[..., Any],
                                                                          workspace: Path) -> None:
    ask = ToolCall(name="AskUserQuestion", id="toolu_ask", input={"questions": [_LIBRARY, _FEATURES]})
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ask])),
        Step(match=Match(turn=1, last_user_contains="declined to answer"), reply=Reply(text="I will choose.")),
    ])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> str:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await _prompt(conn, session.session_id, "which library?")

    client = EditorClient(answers=["decline"])
    assert run_acp(script, body, client) == "end_turn"
    assert len(client.asked) == 1  # the second question is never asked
    done = {u.tool_call_id: u for u in client.of(ToolCallProgress)}["toolu_ask"]
    assert done.status == "failed" and done.raw_output["code"] == "permission_denied"
