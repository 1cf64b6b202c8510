"""MCP servers through the official `mcp` SDK: their settings, their tools as `mcp__server__tool`, their lifetime.

`specs` reads where servers are configured (`.mcp.json`, `[mcp.servers.NAME]`, agent files' `mcpServers`);
`tools` turns a server's listed tools into `Tool` classes; `manager` starts servers on first use, shares them
across the session tree, restarts a crashed one once and stops them all with the session. The SDK is imported
only when a server starts.
"""
