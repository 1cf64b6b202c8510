"""Plugins: Claude Code's plugin folders (`manifest`: commands, agents, skills, hooks and MCP servers under one
name), the marketplaces that list them (`marketplace`), fetching and copying them safely (`fetch`), agentcli's
store of installed plugins (`store`), which of them a session loads (`loadout`), what one arms (`arms`), and a
plugin named by a person staged or read back (`install`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.plugins.arms import armed, armed_marked, brings
    from agentcli.plugins.install import (
        StagedUpdate,
        added_lines,
        installed_plugin,
        known_marketplace,
        stage_target,
        stage_update,
    )
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
    "StagedUpdate",
    "added_lines",
    "armed",
    "armed_marked",
    "brings",
    "entry_for_folder_or_url",
    "installed_plugin",
    "known_marketplace",
    "marketplace_source",
    "parse_source",
    "read_marketplace",
    "read_plugin",
    "session_plugins",
    "split_id",
    "stage_target",
    "stage_update",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.plugins.arms": ["armed", "armed_marked", "brings"],
    "agentcli.plugins.install": ["StagedUpdate", "added_lines", "installed_plugin", "known_marketplace",
                                 "stage_target", "stage_update"],
    "agentcli.plugins.loadout": ["PluginSet", "session_plugins"],
    "agentcli.plugins.manifest": ["Plugin", "PluginError", "read_plugin"],
    "agentcli.plugins.marketplace": ["Marketplace", "Source", "marketplace_source", "parse_source",
                                     "read_marketplace"],
    "agentcli.plugins.store": ["LOCAL", "PluginStore", "Staged", "entry_for_folder_or_url", "split_id"],
})
