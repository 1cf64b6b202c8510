"""What `agentcli plugins install|enable|update` and the TUI's `/plugin` share: a plugin named as a person names
it (`name@marketplace`, a folder or a git URL) staged for their consent, an installed plugin read back, and one
fetched again for an update.

A marketplace is found among those added to the store, else among those Claude Code's settings name
(`extraKnownMarketplaces`: the person's, and a trusted project's), which is then added. Every failure is a
`PluginError` of one line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentcli.plugins.loadout import install_entries, install_places
from agentcli.plugins.manifest import Plugin, PluginError, read_plugin
from agentcli.plugins.marketplace import Marketplace, parse_source, read_marketplace
from agentcli.plugins.store import LOCAL, PluginStore, Staged, entry_for_folder_or_url, split_id


@dataclass(frozen=True, slots=True)
class StagedUpdate:
    """An installed plugin fetched again: the new copy, the installed one (None: unreadable, so everything the
    new one runs is new) and whether its files are the same."""

    staged: Staged
    old: Plugin | None
    unchanged: bool

Say = Callable[[str], None]


def known_marketplace(name: str, store: PluginStore, workspace: Path, say: Say) -> Marketplace:
    """A marketplace by name (module docstring); `say` tells when one is added from Claude Code's settings."""
    from agentcli.config import claude_setting_layers, trust

    known = store.marketplaces()
    if name in known:
        return read_marketplace(known[name])
    layers = claude_setting_layers("extraKnownMarketplaces", workspace, trusted=trust.is_trusted(workspace))
    for _, path, value in reversed(layers):
        entry = value.get(name) if isinstance(value, dict) else None
        if isinstance(entry, dict) and "source" in entry:
            source = parse_source(entry["source"], f"{path}: extraKnownMarketplaces.{name}", market=True)
            say(f"adding marketplace {name} ({source.describe()}) from {path}")
            return store.add_marketplace(source)
    raise PluginError(f"no marketplace named {name!r} (agentcli plugins marketplace add SOURCE)")


def added_lines(market: Marketplace) -> list[str]:
    """What adding `market` says: its plugins, each with its description, and the entries it skipped."""
    lines = [f"added marketplace {market.name}: {len(market.entries)} plugin(s)"]
    lines += [f"  {entry.name}@{market.name}: {entry.description}" for entry in market.entries.values()]
    return lines + [f"  skipped: {problem}" for problem in market.problems]


def is_marketplace_id(target: str) -> bool:
    """Whether `target` names a marketplace's plugin (`name@marketplace`) rather than a folder or a URL."""
    return "@" in target and "://" not in target and not Path(target).expanduser().exists()


def stage_target(target: str, store: PluginStore, workspace: Path, say: Say) -> Staged:
    """The plugin `target` names, fetched and copied into the store's staging area (never kept here)."""
    if is_marketplace_id(target):
        name, market_name = split_id(target)
        market = known_marketplace(market_name, store, workspace, say)
        if name not in market.entries:
            raise PluginError(f"marketplace {market.name} has no plugin {name!r} ({', '.join(sorted(market.entries))})")
        return store.stage(market.entries[name], market.name)
    return store.stage(entry_for_folder_or_url(target), LOCAL)


def installed_plugin(plugin_id: str, store: PluginStore, workspace: Path) -> Plugin:
    """An installed plugin (agentcli's store, else Claude Code's), read."""
    places = install_places(store, os.environ, workspace)
    place = places.get(plugin_id)
    if place is None:
        raise PluginError(f"{plugin_id} is not installed (agentcli plugins install {plugin_id})")
    entry = install_entries(store, os.environ, places, [plugin_id]).get(plugin_id)
    return read_plugin(place, scope="user", plugin_id=plugin_id, name=plugin_id.rpartition("@")[0], entry=entry)


def stage_update(store: PluginStore, plugin_id: str, markets: dict[str, str]) -> StagedUpdate:
    """Fetch an installed plugin again, its marketplace first (once per run: `markets` holds "" for one fetched,
    else why it could not be, and then its plugins are not updated from a copy that may be stale)."""
    _refresh_market(store, plugin_id, markets)
    staged = store.restage(plugin_id)
    try:
        old: Plugin | None = read_plugin(store.installed()[plugin_id], scope="user", plugin_id=plugin_id,
                                         name=staged.plugin.name, entry=store.entries().get(plugin_id))
    except PluginError:
        old = None
    except BaseException:
        store.drop(staged)
        raise
    return StagedUpdate(staged, old, store.unchanged(staged))


def _refresh_market(store: PluginStore, plugin_id: str, markets: dict[str, str]) -> None:
    market = split_id(plugin_id)[1]
    if market == LOCAL or market not in store.marketplaces():
        return
    if market not in markets:
        try:
            store.update_marketplace(market)
            markets[market] = ""
        except (PluginError, OSError) as exc:
            markets[market] = f"the marketplace {market} could not be fetched again: " + str(
                getattr(exc, "strerror", None) or exc)
    if markets[market]:
        raise PluginError(markets[market])
