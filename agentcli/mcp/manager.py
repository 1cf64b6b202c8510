"""The MCP servers of one session: started on first use, shared by every agent of the tree, stopped with it.

- **Lazily.** Nothing starts when agentcli starts. The main agent's first model request needs its tool list,
  so `Conversation.send` starts the configured servers (all at once, each within
  `[mcp] startup_timeout_seconds`) just before it; a subagent whose agent file defines its own servers
  starts those just before it is planned. `agentcli mcp list` starts them to list their tools.
- **Owned by one task each.** The SDK's `Client` is entered and left in the same task (its cancel scopes
  require it), which then waits for the stop signal; calls from any agent go through the client.
- **Stdio servers** run in their own session and process group (the SDK's `stdio_client`: `start_new_session`),
  so a terminal's Ctrl-C never reaches them, and leaving the client kills the whole group (SIGTERM, then
  SIGKILL); their stderr goes to a log file in the state directory, never to the terminal.
- **A crash** (the connection closes) restarts the server once, and the call is sent again; a second crash
  leaves it failed for the rest of the session.
- **Failures** are one line (`MCP server 'x' …`) as a notice; agentcli goes on without that server.
- **Trust.** A server the workspace defines (`.mcp.json`, the project config, a project agent file) starts
  only in a trusted workspace; otherwise it is `refused` with the line that says how to trust it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from agentcli.mcp.connect import McpUnavailable, ProgramForward, describe, load_sdk, open_target, render_result
from agentcli.mcp.specs import ServerSpec, SpecError
from agentcli.mcp.tools import McpTool, tool_class
from agentcli.text import one_line, terminal_safe
from agentcli.tools import ToolError

if TYPE_CHECKING:
    from mcp import Client

    from agentcli.config import McpSettings
    from agentcli.plugins import Plugin

log = logging.getLogger(__name__)
Status = Literal["configured", "starting", "running", "failed", "refused", "stopped"]
MAX_TOOLS_PER_SERVER = 200
_LIST_PAGES = 20


@dataclass
class ServerState:
    """One server of the session: its spec, where it stands, its tools."""

    spec: ServerSpec
    status: Status = "configured"
    error: str = ""
    tools: list[type[McpTool]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # tools left out, each with the reason
    restarts: int = 0
    generation: int = 0  # how many times it started (a call tells a restart since it began by this)
    restart_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    client: Client | None = None
    stop: asyncio.Event | None = None
    owner: asyncio.Task[None] | None = None
    starting: asyncio.Task[bool] | None = None


class McpManager:
    """The session's MCP servers by name."""

    def __init__(
        self,
        specs: Iterable[ServerSpec],
        *,
        workspace: Path,
        trusted: Callable[[], bool],
        startup_timeout: float = 30.0,
        call_timeout: float = 120.0,
        log_dir: Path | None = None,
        problems: Iterable[str] = (),
    ) -> None:
        self.workspace = workspace
        self.trusted = trusted
        self.startup_timeout = startup_timeout
        self.call_timeout = call_timeout
        self.log_dir = log_dir
        self.servers: dict[str, ServerState] = {}
        self.configured: tuple[str, ...] = ()  # the session's own servers (the main agent's); agent files add more
        self.problems: list[str] = list(problems)  # definitions that could not be read, one line each
        self.on_tools: Callable[[list[type[McpTool]]], None] = lambda tools: None  # a server's tools arrived
        self.notice: Callable[[str], None] = lambda line: None  # a server failed (one line for the person)
        self._logs: list[TextIO] = []
        self._told = False  # the problems were said
        self._sdk_import: asyncio.Future[Any] | None = None
        self.program: ProgramForward | None = None  # reaches the driving program's servers (`transport = "program"`)
        for spec in specs:
            self.add(spec)
        self.configured = tuple(self.servers)

    # --- configuration ------------------------------------------------------------------------------

    def add(self, spec: ServerSpec) -> str | None:
        """Add a server; the one-line reason when a server of that name already exists (it is kept)."""
        existing = self.servers.get(spec.name)
        if existing is not None:
            if existing.spec == spec:
                return None
            return (f"MCP server '{spec.name}' of {spec.origin} ignored: a server of that name is configured in "
                    f"{existing.spec.origin}")
        self.servers[spec.name] = ServerState(spec)
        return None

    def add_all(self, specs: Iterable[ServerSpec]) -> list[str]:
        """Add each server; the one-line reasons of those whose name was taken (each kept out)."""
        return [clash for spec in specs if (clash := self.add(spec))]

    def add_plugin_servers(self, plugins: Iterable[Plugin]) -> None:
        """The plugins' servers (`plugin_<plugin>_<server>`) join the session's own, offered to the main agent;
        a bad definition or a taken name is one of the problems."""
        from agentcli.mcp.specs import plugin_servers

        specs, problems = plugin_servers(plugins)
        self.problems += [*problems, *self.add_all(specs)]
        added = [spec.name for spec in specs if spec.name in self.servers and spec.name not in self.configured]
        self.configured = (*self.configured, *dict.fromkeys(added))

    def add_main(self, definitions: Mapping[str, Any], *, origin: str, only: bool = False) -> None:
        """Servers a program or an editor gives the session (Claude Code's shape, by name), as the main agent's:
        beside the configured ones, or with `only` instead of them. SpecError: a bad definition or a name clash."""
        from agentcli.mcp.specs import parse_server

        for name, raw in definitions.items():
            if clash := self.add(parse_server(name, raw, origin=origin, project=False)):
                raise SpecError(clash)
        self.configured = tuple(definitions) if only else (*self.configured, *definitions)

    def tools(self, names: Iterable[str] | None = None) -> list[type[McpTool]]:
        """The tool classes of the running servers (of `names` only, when given)."""
        wanted = None if names is None else set(names)
        return [t for name, s in self.servers.items() if wanted is None or name in wanted for t in s.tools]

    def report(self) -> list[dict[str, Any]]:
        """Every server as data (`agentcli mcp list`, `/mcp`): name, transport, where, status, tools, problems."""
        return [
            {
                "name": name,
                "transport": s.spec.transport,
                "target": s.spec.target,
                "configured_in": s.spec.origin,
                "status": s.status,
                "error": s.error,
                "tools": [t.name for t in s.tools],
                "skipped": list(s.skipped),
                "restarts": s.restarts,
            }
            for name, s in self.servers.items()
        ]

    def report_lines(self) -> list[str]:
        """`report()` as text lines (terminal-safe: servers' names and errors are untrusted)."""
        lines: list[str] = []
        for row in self.report():
            status = row["status"] + (f": {row['error']}" if row["error"] else "")
            lines.append(f"{row['name']} ({row['transport']}, {row['configured_in']}) {status}")
            if row["tools"]:
                lines.append("  tools: " + ", ".join(row["tools"]))
            lines += [f"  left out: {reason}" for reason in row["skipped"]]
        lines += [f"problem: {p}" for p in self.problems]
        return [terminal_safe(line) for line in lines]

    # --- starting -------------------------------------------------------------------------------------

    async def start_all(self) -> None:
        """Start the session's own servers not started yet (at once); failures become notices (and so do the
        definitions that could not be read, once)."""
        if not self._told:
            self._told = True
            for problem in self.problems:
                self.notice(terminal_safe(problem))
        await self.ensure(self.configured)

    async def ensure(self, names: Iterable[str]) -> None:
        """Start the named servers that are not running or failed yet, at once; unknown names are skipped."""
        starts = [self._start_once(self.servers[n]) for n in dict.fromkeys(names) if n in self.servers]
        if starts:
            await asyncio.gather(*starts)

    async def _start_once(self, state: ServerState) -> bool:
        """Start `state` unless it is running or ended; callers that come meanwhile share one start."""
        if state.status == "refused" and self.trusted():  # the person trusted the workspace since
            state.status, state.starting = "configured", None
        if state.status in ("running", "failed", "refused", "stopped"):
            return state.status == "running"
        if state.starting is None:
            state.starting = asyncio.ensure_future(self._start(state))
        return await asyncio.shield(state.starting)

    async def _start(self, state: ServerState) -> bool:
        spec = state.spec
        if spec.project and not self.trusted():
            state.status = "refused"
            state.error = (f"not started: {spec.origin} belongs to an untrusted workspace "
                           f"(run 'agentcli trust {shlex.quote(str(self.workspace))}' to allow its MCP servers)")
            self._fail(state)
            return False
        state.status = "starting"
        try:
            await self._sdk_loaded()  # off the event loop: a TUI keeps painting meanwhile
            await asyncio.wait_for(self._launch(state), self.startup_timeout)
        except TimeoutError:
            await self._halt(state)
            state.error = f"did not start within {self.startup_timeout:g} s"
        except (SpecError, McpUnavailable) as exc:
            await self._halt(state)
            state.error = str(exc)
        except Exception as exc:  # a bad command, a refused connection, a protocol error: reported, never raised
            await self._halt(state)
            state.error = f"failed to start: {describe(exc)}"
        else:
            state.status = "running"
            state.generation += 1
            log.info("MCP server %s running: %d tools", spec.name, len(state.tools))
            self.on_tools(state.tools)
            return True
        state.status = "failed"
        self._fail(state)
        return False

    def _fail(self, state: ServerState) -> None:
        line = terminal_safe(one_line(f"MCP server '{state.spec.name}' ({state.spec.origin}): {state.error}", 400))
        log.info("%s", line)  # the person reads it as a notice
        self.notice(line)

    async def _sdk_loaded(self) -> None:
        """Import the SDK once, in a worker thread; McpUnavailable when it cannot be imported."""
        if self._sdk_import is None:
            self._sdk_import = asyncio.ensure_future(asyncio.to_thread(load_sdk))
        await asyncio.shield(self._sdk_import)

    async def _launch(self, state: ServerState) -> None:
        """Start the owner task and wait until the server is connected and its tools listed."""
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        state.stop = asyncio.Event()
        state.owner = asyncio.create_task(self._own(state, ready, state.stop), name=f"mcp-{state.spec.name}")
        client = await ready
        state.client = client
        state.tools, state.skipped = await self._list_tools(state.spec.name, client)
        for reason in state.skipped:
            log.info("MCP server %s: %s", state.spec.name, reason)

    async def _own(self, state: ServerState, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        """Hold the client open (entered and left in this task) until `stop` is set."""
        try:
            mcp = load_sdk()
            from mcp_types import Implementation

            from agentcli import __version__

            async with contextlib.AsyncExitStack() as stack:
                client = mcp.Client(
                    await open_target(state.spec, stack, workspace=self.workspace, program=self.program,
                                      errlog=self._errlog), read_timeout_seconds=self.call_timeout,
                    client_info=Implementation(name="agentcli", version=__version__),
                    mode="legacy" if state.spec.transport == "program" else "auto",  # the initialize handshake
                )
                await stack.enter_async_context(client)
                if not ready.done():
                    ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError("stopped"))
            if not isinstance(exc, Exception):
                raise
            log.debug("MCP server %s ended: %s", state.spec.name, describe(exc))

    def _errlog(self, name: str) -> TextIO:
        """Where a stdio server's stderr goes: a log file in the state directory (never the terminal)."""
        if self.log_dir is None:
            from agentcli import paths

            self.log_dir = paths.ensure_private_dir(paths.state_dir() / "mcp")
        handle = (self.log_dir / f"{name}.log").open("a", encoding="utf-8")
        self._logs.append(handle)
        return handle

    async def _list_tools(self, server: str, client: Client) -> tuple[list[type[McpTool]], list[str]]:
        classes: list[type[McpTool]] = []
        skipped: list[str] = []
        cursor: str | None = None
        for _ in range(_LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                if len(classes) >= MAX_TOOLS_PER_SERVER:
                    skipped.append(f"more than {MAX_TOOLS_PER_SERVER} tools: the rest are left out")
                    return classes, skipped
                hint = tool.annotations.read_only_hint if tool.annotations is not None else None
                try:
                    classes.append(tool_class(server, tool.name, tool.description, tool.input_schema, hint, self))
                except ValueError as exc:
                    skipped.append(f"tool {terminal_safe(one_line(tool.name, 80))!r} left out: {exc}")
            cursor = page.next_cursor
            if cursor is None:
                break
        return classes, skipped

    async def _halt(self, state: ServerState) -> None:
        """Leave the client (which stops a stdio server's process group) and forget it."""
        connected, state.client = state.client is not None, None
        if state.stop is not None:
            state.stop.set()
        owner, state.owner = state.owner, None
        if owner is None or owner.done():
            return
        if not connected:
            owner.cancel()  # still connecting: no stop signal would reach it
        done, _ = await asyncio.wait({owner}, timeout=15)  # the SDK's own shutdown is bounded (about 5 s)
        if not done:
            owner.cancel()

    # --- calls ------------------------------------------------------------------------------------------

    async def call(self, server: str, tool: str, arguments: dict[str, Any], agent: str) -> tuple[str, bool]:
        """Call one tool; (text, is_error). ToolError when the server is gone or the call times out."""
        state = self.servers.get(server)
        if state is None or not await self._start_once(state):
            why = state.error if state is not None else "not configured"
            raise ToolError(f"MCP server '{server}' is not available: {why}")
        generation = state.generation
        try:
            return await self._call(state, tool, arguments)
        except _Closed:
            pass
        async with state.restart_lock:  # calls that met the same crash restart it once between them
            if state.generation == generation:
                await self._restart(state, agent)
        try:
            return await self._call(state, tool, arguments)
        except _Closed:
            await self._crashed_again(state)
        raise ToolError(f"MCP server '{server}' crashed again and is no longer available.")

    async def _restart(self, state: ServerState, agent: str) -> None:
        """The connection closed under a call: restart the server, once per session; ToolError when it may not."""
        name = state.spec.name
        if state.restarts >= 1:
            await self._crashed_again(state)
            raise ToolError(f"MCP server '{name}' crashed again and is no longer available.")
        state.restarts += 1
        log.warning("MCP server %s: the connection closed (crashed?); restarting it once (agent %s)", name, agent)
        await self._halt(state)
        state.status, state.starting = "configured", None
        if not await self._start_once(state):
            raise ToolError(f"MCP server '{name}' crashed and could not be restarted: {state.error}")

    async def _crashed_again(self, state: ServerState) -> None:
        """Leave the server failed for the rest of the session (said once)."""
        if state.status == "failed":
            return
        state.status, state.error = "failed", "crashed again after a restart; not restarted"
        await self._halt(state)
        self._fail(state)

    async def _call(self, state: ServerState, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = state.client
        if client is None or state.owner is None or state.owner.done():
            raise _Closed
        try:
            result = await asyncio.wait_for(client.call_tool(tool, arguments), self.call_timeout)
        except TimeoutError:
            raise ToolError(f"MCP tool {tool} of server '{state.spec.name}' did not answer within "
                            f"{self.call_timeout:g} s") from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise _Closed from exc
            raise ToolError(f"MCP server '{state.spec.name}' refused the call: {describe(exc)}") from None
        except Exception as exc:
            if state.owner is None or state.owner.done():
                raise _Closed from exc
            raise ToolError(f"MCP call {tool} to server '{state.spec.name}' failed: {describe(exc)}") from None
        return render_result(result), bool(result.is_error)

    # --- the end ----------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop every server (stdio process groups killed) and close the log files."""
        for state in self.servers.values():
            if state.starting is not None and not state.starting.done():
                state.starting.cancel()
        await asyncio.gather(*(self._halt(s) for s in self.servers.values()), return_exceptions=True)
        for state in self.servers.values():
            if state.status in ("running", "starting"):
                state.status = "stopped"
        for handle in self._logs:
            with contextlib.suppress(OSError):
                handle.close()
        self._logs.clear()


class _Closed(Exception):
    """The server's connection closed under a call (it crashed or was killed)."""


def session_manager(
    settings: McpSettings, workspace: Path, origins: Mapping[str, tuple[str, bool]] | None = None
) -> McpManager:
    """The session's servers: the config's `[mcp.servers]` (the person's own first), then `.mcp.json`'s.

    `origins` maps a config server's name to (its file, whether it is the project's file); without it they
    read as `agentcli config`. Reads files only: nothing starts here, and the SDK is not imported.
    """
    from agentcli.config import trust
    from agentcli.mcp.specs import from_config, read_mcp_json

    raw = {name: server.model_dump(exclude_defaults=True) for name, server in settings.servers.items()}
    configured, problems = from_config(raw, origins or {})
    project, project_problems = read_mcp_json(workspace)
    manager = McpManager(
        configured,
        workspace=workspace,
        trusted=lambda: trust.is_trusted(workspace),
        startup_timeout=settings.startup_timeout_seconds,
        call_timeout=settings.call_timeout_seconds,
        problems=[*problems, *project_problems],
    )
    manager.problems += manager.add_all(project)
    manager.configured = tuple(manager.servers)
    return manager
