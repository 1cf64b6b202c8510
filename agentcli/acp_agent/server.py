"""`agentcli acp`: agentcli as an Agent Client Protocol agent on standard input and output, on the official SDK
(`acp.run_agent`). Each ACP session is one `Conversation` in the folder the editor names (`session`).

Implemented: `initialize`, `authenticate` (the keys come from the environment: it checks there is one),
`session/new`, `session/load`, `session/prompt`, `session/cancel`, `session/set_mode`; the agent sends
`session/update` and `session/request_permission`. Not implemented: `session/list`, `session/fork`,
`session/resume`, `session/close` (unstable parts of the protocol), `session/set_config_option`, the client's
terminals (Bash runs in agentcli's own sandbox) and audio (images in prompts are taken). The client's
`fs/read_text_file` and `fs/write_text_file` are used when offered: the file tools' text is the editor's buffers
(`files`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client

if TYPE_CHECKING:
    from acp.interfaces import Agent
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthMethodAgent,
    ClientCapabilities,
    CreateElicitationResponse,
    ElicitationFormSessionMode,
    ElicitationSchema,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    RequestPermissionResponse,
    SetSessionModeResponse,
    ToolCallUpdate,
)

from agentcli import process_exit
from agentcli.acp_agent.files import ClientFiles
from agentcli.acp_agent.replay import replay
from agentcli.acp_agent.session import AcpSession, McpServer, Options, invalid, shape
from agentcli.acp_agent.updates import Update
from agentcli.text import terminal_safe

log = logging.getLogger(__name__)
AUTH_METHOD = AuthMethodAgent(
    id="environment", name="API key in the environment",
    description="agentcli reads its provider's key from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, or "
                "the variable your agentcli config names): set it in the editor's agent_servers env.",
)
AUTH_REQUIRED = -32000


def serve(options: Options) -> int:
    """Serve one client on standard input and output until it disconnects; the exit code."""
    try:
        return asyncio.run(_serve(options))
    except KeyboardInterrupt:
        return 130


async def _serve(options: Options) -> int:
    from acp import run_agent
    from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
    from acp.stdio import stdio_streams

    reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    sys.stdout = sys.stderr  # standard output carries the protocol alone: a stray print goes to the log instead
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on Windows
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
    agent = AcpAgent(options)
    try:
        # `acp.interfaces.Agent` lists every method of the protocol, unstable ones too; the SDK's router answers
        # "method not found" for those this agent leaves out (see the module's docstring).
        await run_agent(cast("Agent", agent), writer, reader)
    except asyncio.CancelledError:
        pass
    finally:
        await agent.aclose()  # every session's writes have succeeded or failed after this
        process_exit.ready()  # nothing left to tear down: the process ends at once (the editor waits for it)
    return 0


class AcpAgent:
    """The ACP agent: sessions by id, each an `AcpSession`."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.client: Client | None = None
        self.client_capabilities: ClientCapabilities | None = None
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None, **kwargs: Any) -> InitializeResponse:
        from agentcli import __version__

        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            auth_methods=[AUTH_METHOD],
            agent_info=Implementation(name="agentcli", title="agentcli", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """Nothing to log in to: the key is in the environment, or this says which is missing."""
        if method_id != AUTH_METHOD.id:
            raise invalid(f"unknown authentication method {method_id!r} (agentcli offers {AUTH_METHOD.id!r})")
        from agentcli.frontend import Failure, load
        from agentcli.llm import ProviderError, resolve_model

        try:
            resolve_model(self.options.model or "main", load(Path.cwd(), self.options.config).settings)
        except Failure as exc:
            raise invalid(exc.message) from None
        except ProviderError as exc:
            raise _auth_error(str(exc)) from None
        return AuthenticateResponse()

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[McpServer] | None = None, **kwargs: Any) -> NewSessionResponse:
        session = await self._open(cwd, mcp_servers)
        session.announce_commands()
        return NewSessionResponse(session_id=session.id, modes=session.modes())

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[McpServer] | None = None,
                           additional_directories: list[str] | None = None, **kwargs: Any) -> LoadSessionResponse:
        """Open a stored session (`Conversation.resume`) and replay its messages as updates before answering."""
        session = self.sessions.get(session_id) or await self._open(cwd, mcp_servers, resume=session_id)
        store = session.conversation.store
        if store is not None:
            await store.flush()
            for update in replay(store.get_messages(session.id), session.workspace):
                session.outbox.put(update)
        await session.outbox.flush()
        session.announce_commands()
        return LoadSessionResponse(modes=session.modes())

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        return await self._session(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def aclose(self) -> None:
        """Close every session (turns stopped, MCP servers stopped, stores flushed)."""
        for session in list(self.sessions.values()):
            try:
                await session.aclose()
            except Exception:
                log.exception("closing session %s failed", session.id)
        self.sessions.clear()

    # --- sessions ---------------------------------------------------------------------------------------------

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise invalid(f"no session {session_id!r} in this connection (session/new or session/load first)")
        return session

    async def _notify(self, session_id: str, update: Update) -> None:
        assert self.client is not None
        await self.client.session_update(session_id=session_id, update=update)

    async def _ask(self, session_id: str, call: ToolCallUpdate, options: list[PermissionOption]
                   ) -> RequestPermissionResponse:
        assert self.client is not None
        return await self.client.request_permission(session_id=session_id, tool_call=call, options=options)

    async def _elicit(self, session_id: str, message: str, schema: ElicitationSchema, tool_call_id: str,
                      meta: dict[str, Any]) -> CreateElicitationResponse:
        assert self.client is not None
        mode = ElicitationFormSessionMode(session_id=session_id, tool_call_id=tool_call_id or None,
                                          requested_schema=schema)
        return await self.client.create_elicitation(message=message, mode=mode, **meta)

    async def _open(self, cwd: str, servers: list[McpServer] | None, resume: str | None = None) -> AcpSession:
        """A session in `cwd`: its config loaded (trust as recorded), its conversation opened, the editor's MCP
        servers added; with `resume`, the stored session made the current one."""
        from agentcli.conversation import Conversation, OpenError, ResumeError
        from agentcli.llm import MissingCredentialsError

        workspace = Path(cwd).expanduser()
        if not workspace.is_absolute() or not workspace.is_dir():
            raise invalid(f"cwd {cwd!r} is not an absolute path of a directory")
        workspace = workspace.resolve()
        settings, spec = self._config(workspace)
        caps = self.client_capabilities
        forms = caps is not None and caps.elicitation is not None and caps.elicitation.form is not None
        session = AcpSession(self._notify, self._ask, workspace, self._elicit if forms else None)
        try:
            conversation = Conversation.open(settings, workspace, model=spec, approver=session.approver,
                                             verbose=self.options.verbose)
        except OpenError as exc:
            if isinstance(exc.__cause__, MissingCredentialsError):
                raise _auth_error(str(exc)) from None
            raise RequestError(-32603, str(exc), {"message": str(exc)}) from None
        try:
            shape(conversation, servers)
            if resume is not None:
                resumed = await conversation.resume(resume)
                for note in resumed.notes:
                    sys.stderr.write(f"agentcli: note: {terminal_safe(note)}\n")
        except (RequestError, ResumeError) as exc:
            await conversation.aclose()
            raise exc if isinstance(exc, RequestError) else invalid(str(exc)) from None
        session.attach(conversation)
        conversation.use_files(ClientFiles.offered(self.client, self.client_capabilities, lambda: session.id))
        session.mapper.cost_usd = conversation.session.ledger.total.cost_usd or 0.0
        self.sessions[session.id] = session
        return session

    def _config(self, workspace: Path) -> tuple[Any, str]:
        """The workspace's settings (`agentcli acp --config` on top) and the model spec (`--model`; a bare model
        id replaces the main model's)."""
        from agentcli.frontend import Failure, load

        spec = self.options.model or "main"
        config = self.options.config
        try:
            loaded = load(workspace, config)
            if spec not in ("main", "light") and ":" not in spec and spec not in loaded.settings.models.aliases:
                loaded = load(workspace, config, {"models.main.model": spec}, {"models.main.model": "--model"},
                              trusted=loaded.trusted)
                spec = "main"
        except Failure as exc:
            raise invalid(exc.message) from None
        return loaded.settings, spec


def _auth_error(line: str) -> RequestError:
    """No key for the configured provider: ACP's "authentication required", with agentcli's line."""
    return RequestError(AUTH_REQUIRED, f"Authentication required: {terminal_safe(line)}",
                        {"message": terminal_safe(line), "authMethods": [AUTH_METHOD.id]})
