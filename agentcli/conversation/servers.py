"""The session's MCP servers: nothing starts before the main agent's first request needs its tool list, or
before a task whose agent type defines or names servers; a server that fails or is refused is one notice."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.events import EventBus, NoticeEvent
from agentcli.mcp import McpManager, session_manager

if TYPE_CHECKING:
    from agentcli.agent import AgentLoop, Session
    from agentcli.config import Settings
    from agentcli.plugins import Plugin
    from agentcli.subagents import AgentRegistry, TaskArgs, Toolbox


class SessionServers:
    """One conversation's `McpManager`, its tools joining the toolbox, its notices told on the bus."""

    def __init__(self, settings: Settings, workspace: Path, registry: AgentRegistry, toolbox: Toolbox,
                 bus: EventBus, session: Callable[[], Session], plugins: Iterable[Plugin] = ()) -> None:
        self.settings = settings
        self.registry = registry
        self.bus = bus
        self.session = session  # the conversation's current session
        self.mcp: McpManager = session_manager(settings.mcp, workspace)  # nothing starts before the first turn
        self.mcp.add_plugin_servers(plugins)
        self.mcp.on_tools = toolbox.add
        self.mcp.notice = self.notice

    def notice(self, line: str) -> None:
        """A one-line warning for the person (an MCP server that failed or was refused)."""
        self.bus(NoticeEvent(session_id=self.session().id, message=line))

    async def start(self, loop: AgentLoop | None, offers: Callable[[str], bool]) -> None:
        """Start the session's MCP servers and offer their tools to the main agent (`loop`, once built) as
        `offers` picks."""
        if not self.mcp.servers and not self.mcp.problems:
            return
        await self.mcp.start_all()
        if loop is not None:
            tools = (cls() for cls in self.mcp.tools(self.mcp.configured))
            loop.add_tools(tool for tool in tools if offers(tool.name))

    async def for_task(self, args: TaskArgs) -> None:
        """Before a task is planned: start the MCP servers its type's agent file defines or names."""
        from agentcli.tools import server_of

        agent_type = self.registry.resolve(args.subagent_type, self.settings.task_tool.type_fallback)
        if agent_type is None:
            return
        for clash in self.mcp.add_all(agent_type.mcp_specs):
            self.notice(clash)
        names = [*agent_type.mcp_servers, *(server_of(t) or "" for t in agent_type.tools or ())]
        await self.mcp.ensure(n for n in names if n)
