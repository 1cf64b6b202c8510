"""Plugins: Claude Code's plugin folders (`manifest`: commands, agents, skills, hooks and MCP servers under one
name), the marketplaces that list them (`marketplace`), fetching and copying them safely (`fetch`), agentcli's
store of installed plugins (`store`), which of them a session loads (`loadout`) and what one arms (`arms`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.plugins.arms import armed, brings
    from agentcli.plugins.loadout import PluginSet, session_plugins
    from agentcli.plugins.manifest import Plugin, PluginError, read_plugin
    from agentcli.plugins.marketplace import Marketplace, Source, marketplace_source, parse_source, read_marketplace
    from agentcli.plugins.store import LOCAL, PluginStore, Staged, entry_for_folder_or_url, split_id

__all__ = [
    "LOCAL",
    "Marketplace",
    "Plugin",
    "PluginError",
    "PluginSet",
    "PluginStore",
    "Source",
    "Staged",
    "armed",
    "brings",
    "entry_for_folder_or_url",
    "marketplace_source",
    "parse_source",
    "read_marketplace",
    "read_plugin",
    "session_plugins",
    "split_id",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.plugins.arms": ["armed", "brings"],
    "agentcli.plugins.loadout": ["PluginSet", "session_plugins"],
    "agentcli.plugins.manifest": ["Plugin", "PluginError", "read_plugin"],
    "agentcli.plugins.marketplace": ["Marketplace", "Source", "marketplace_source", "parse_source",
                                     "read_marketplace"],
    "agentcli.plugins.store": ["LOCAL", "PluginStore", "Staged", "entry_for_folder_or_url", "split_id"],
})
