"""MCP servers through the official `mcp` SDK: their settings, their tools as `mcp__server__tool`, their lifetime.

`specs` reads where servers are configured (`.mcp.json`, `[mcp.servers.NAME]`, agent files' `mcpServers`);
`tools` turns a server's listed tools into `Tool` classes; `connect` reaches a server through the SDK; `manager`
starts servers on first use, shares them across the session tree, restarts a crashed one once and stops them all
with the session. The SDK is imported only when a server starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.mcp.manager import McpManager, session_manager
    from agentcli.mcp.specs import (
        ServerSpec,
        SpecError,
        agent_servers,
        parse_server,
        plugin_servers,
        read_mcp_json,
        variables,
    )
    from agentcli.mcp.tools import McpCaller, McpTool, tool_class

__all__ = [
    "McpCaller",
    "McpManager",
    "McpTool",
    "ServerSpec",
    "SpecError",
    "agent_servers",
    "parse_server",
    "plugin_servers",
    "read_mcp_json",
    "session_manager",
    "tool_class",
    "variables",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.mcp.manager": ["McpManager", "session_manager"],
    "agentcli.mcp.specs": ["ServerSpec", "SpecError", "agent_servers", "parse_server", "plugin_servers",
                           "read_mcp_json", "variables"],
    "agentcli.mcp.tools": ["McpCaller", "McpTool", "tool_class"],
})
