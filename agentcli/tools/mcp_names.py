"""How MCP tools are named: `mcp__server__tool`, and `mcp__server` for all of one server's tools.

Below the MCP package (`agentcli.mcp`), so permission rules and agent files can read these names too.
"""

from __future__ import annotations

PREFIX = "mcp__"


def full_name(server: str, tool: str) -> str:
    """`mcp__server__tool`."""
    return f"{PREFIX}{server}__{tool}"


def is_mcp_name(name: str) -> bool:
    """Whether `name` names an MCP tool or server (`mcp__…`)."""
    return name.startswith(PREFIX) and len(name) > len(PREFIX)


def server_of(name: str) -> str | None:
    """The server part of `mcp__server__tool` or `mcp__server`, None for any other name."""
    if not is_mcp_name(name):
        return None
    return name[len(PREFIX):].split("__", 1)[0] or None


def covers(entry: str, name: str) -> bool:
    """Whether a tool-list entry or rule names the tool `name`: itself, or `mcp__server` for all of that server's."""
    if entry == name:
        return True
    return is_mcp_name(entry) and "__" not in entry[len(PREFIX):] and name.startswith(entry + "__")
