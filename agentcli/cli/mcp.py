"""`agentcli mcp list`: the MCP servers a session here would use, where each is configured, its status and tools.

Listing starts the servers (that is how their tools are known) and stops them again. Only typer and the
standard library at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from agentcli.cli.common import ConfigOption, CwdOption, JsonOption, echo, print_json
from agentcli.frontend import load, workspace_dir

if TYPE_CHECKING:
    from agentcli.config import LoadedConfig
    from agentcli.mcp import McpManager

mcp_app = typer.Typer(help="MCP servers: where they are configured, their status and tools.", rich_markup_mode=None)


def _origins(loaded: LoadedConfig) -> dict[str, tuple[str, bool]]:
    """Each `[mcp.servers.NAME]`'s file, and whether it is the project's."""
    origins: dict[str, tuple[str, bool]] = {}
    for key, source in loaded.provenance.items():
        parts = key.split(".")
        if len(parts) >= 4 and parts[:2] == ["mcp", "servers"] and source.layer != "builtin":
            origins[parts[2].strip('"')] = (source.describe(), source.layer == "project")
    return origins


def _manager(workspace: Path, loaded: LoadedConfig) -> McpManager:
    """The session's servers plus those agent files define (as a session would start them)."""
    from agentcli.mcp import session_manager
    from agentcli.plugins import session_plugins
    from agentcli.subagents import AgentRegistry

    manager = session_manager(loaded.settings.mcp, workspace, _origins(loaded))
    plugins = session_plugins(workspace, dirs=loaded.settings.plugins.dirs, enabled=loaded.settings.plugins.enabled)
    manager.add_plugin_servers(plugins.plugins)
    for agent in AgentRegistry.load(workspace, aliases=loaded.settings.models.aliases,
                                    plugins=plugins.plugins).types.values():
        manager.problems += manager.add_all(agent.mcp_specs)
    return manager


@mcp_app.command("list")
def list_servers(cwd: CwdOption = None, config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """Start each configured MCP server, list its tools, stop it; servers that fail say why."""
    import asyncio

    workspace = workspace_dir(cwd)
    loaded = load(workspace, config)
    manager = _manager(workspace, loaded)

    async def survey() -> tuple[list[dict[str, Any]], list[str]]:
        try:
            await manager.ensure(list(manager.servers))
            return manager.report(), manager.report_lines()  # as they ran, before they are stopped
        finally:
            await manager.aclose()

    rows, lines = asyncio.run(survey())
    if as_json:
        print_json({"servers": rows, "problems": manager.problems})
        return
    if not manager.servers and not manager.problems:
        echo("No MCP servers configured (.mcp.json, [mcp.servers.NAME] in the config, or agent files' mcpServers).")
        return
    for line in lines:
        echo(line)
