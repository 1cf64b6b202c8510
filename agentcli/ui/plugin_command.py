"""`/plugin` (and `/plugins`) in the TUI, as Claude Code's `/plugin`: the plugins loaded, and installing, turning on
and off and adding marketplaces without leaving the session.

- `/plugin` or `/plugin list`: the plugins loaded, what each brings and every hook command and server it arms, and
  those enabled that could not be loaded.
- `/plugin install NAME@MARKETPLACE | FOLDER | URL` and `/plugin enable NAME@MARKETPLACE`: what the plugin arms is
  shown and asked (`PluginConsentScreen`), as `agentcli plugins install` asks in a shell; agreed, it is kept in the
  store, turned on, and joins this session (`conversation.join_enabled`): its commands at once, its hooks and
  servers from the next turn.
- `/plugin update [NAME@MARKETPLACE]`: fetched again (every plugin agentcli installed, without one); a copy whose
  files changed is shown with what it newly runs marked and asked about; it loads from the next session.
- `/plugin disable NAME@MARKETPLACE` and `/plugin remove NAME@MARKETPLACE`: from the next session (what it runs
  here keeps running until then).
- `/plugin browse [MARKETPLACE]`: the plugins the added marketplaces list, in a picker; the one picked is
  installed as `/plugin install` installs it.
- `/plugin marketplace add SOURCE` and `/plugin marketplace list`.

Fetching and copying run in a worker thread; nothing changes while a turn runs. A trusted project's settings may
still keep a plugin off, and an untrusted project's never turn one on (`plugins.loadout`).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from agentcli.text import terminal_safe
from agentcli.ui.host import AppHost

if TYPE_CHECKING:
    from agentcli.plugins import PluginStore, Staged


S = TypeVar("S")


class Host(AppHost, Protocol):
    """What `/plugin` needs of the app (a part of `ui.commands.CommandHost`)."""

    def reload_commands(self) -> None: ...


USAGE = ("/plugin [list] | browse [MARKETPLACE] | install NAME@MARKETPLACE|FOLDER|URL | enable ID | disable ID | "
         "update [ID] | remove ID | marketplace add SOURCE | marketplace list")


async def plugin_command(host: Host, args: str) -> None:
    """`/plugin` (module docstring)."""
    verb, _, rest = args.strip().partition(" ")
    rest = rest.strip()
    if verb in ("", "list"):
        _list(host)
        return
    if verb not in ("install", "enable", "disable", "update", "remove", "marketplace", "browse"):
        host.say_error(f"/plugin: unknown subcommand {verb!r}: {USAGE}")
        return
    if not rest and verb not in ("update", "browse"):
        host.say_error(f"/plugin {verb}: name what to {verb} ({USAGE})")
        return
    if verb != "marketplace" and host.turn_running:
        host.say_error(f"/plugin {verb}: a turn is running; try again when it has ended")
        return
    from agentcli.plugins import PluginError, PluginStore

    store = PluginStore()
    try:
        if verb == "install":
            await _install(host, store, rest)
        elif verb == "browse":
            await _browse(host, store, rest)
        elif verb == "enable":
            await _enable(host, store, rest)
        elif verb == "disable":
            store.set_enabled(rest, False)
            host.say(f"{terminal_safe(rest)} is off from your next session; what it runs in this one keeps "
                     "running until then")
        elif verb == "update":
            await _update(host, store, [rest] if rest else sorted(store.installed()))
        elif verb == "remove":
            if not store.remove(rest):
                host.say_error(f"/plugin remove: {terminal_safe(rest)} is not installed by agentcli (/plugin list)")
                return
            host.say(f"removed {terminal_safe(rest)}; what it runs in this session keeps running until your next one")
        else:
            await _marketplace(host, store, rest)
    except (PluginError, OSError) as exc:
        why = str(exc) if isinstance(exc, PluginError) else f"{exc.strerror or exc}: {exc.filename or ''}"
        host.say_error(f"/plugin {verb}: {terminal_safe(why.rstrip(': '))}")


async def _install(host: Host, store: PluginStore, target: str) -> None:
    from agentcli.plugins import stage_target
    from agentcli.ui.widgets.plugin_consent import PluginConsentScreen

    said: list[str] = []  # a marketplace added from Claude Code's settings on the way: always told
    host.say(f"fetching {terminal_safe(target)} …")
    try:
        staged = await _in_thread(lambda: stage_target(target, store, host.conversation.workspace, said.append),
                                  store.drop)
    finally:
        for line in said:
            host.say(terminal_safe(line))
    if host.turn_running:  # sent while it was fetched: its dialogs own the keys now
        store.drop(staged)
        host.say_error("/plugin install: a turn started; nothing installed (run it again when the turn ends)")
        return
    if not await host.ask(PluginConsentScreen(staged.plugin, "Install")):
        store.drop(staged)
        host.say(f"not installed: {terminal_safe(staged.plugin_id)}")
        return
    place = await asyncio.to_thread(_keep, store, staged)
    host.say(f"installed {terminal_safe(staged.plugin_id)} in {terminal_safe(str(place))}; it is on")
    await _join(host, staged.plugin_id)


async def _browse(host: Host, store: PluginStore, only: str) -> None:
    """The added marketplaces' plugins in a picker; the one picked is installed (an installed one: said so)."""
    from agentcli.plugins import PluginError, read_marketplace
    from agentcli.ui.widgets.picker import ListPicker

    markets = {name: folder for name, folder in store.marketplaces().items() if not only or name == only}
    if not markets:
        host.say(f"No marketplace named {terminal_safe(only)!r} added." if only else
                 "No marketplaces added (/plugin marketplace add SOURCE).")
        return
    installed, enabled = store.installed(), store.enabled()
    choices: list[tuple[str, str]] = []
    for _, folder in sorted(markets.items()):
        try:
            market = read_marketplace(folder)
        except PluginError as exc:
            host.say_error(f"/plugin browse: {terminal_safe(str(exc))}")
            continue
        for entry in sorted(market.entries.values(), key=lambda e: e.name):
            pid = f"{entry.name}@{market.name}"
            state = ("on" if enabled.get(pid) else "off") if pid in installed else ""
            label = f"{pid}  {entry.description or ''}" + (f"  [installed, {state}]" if state else "")
            choices.append((pid, terminal_safe(label)))
    if not choices:
        return
    picked = await host.ask(ListPicker(f"Install which plugin? ({len(choices)} listed)", choices))
    if picked is None:
        return
    if picked in installed:
        host.say(f"{terminal_safe(picked)} is installed already (/plugin update, enable or disable it)")
        return
    await _install(host, store, picked)


async def _in_thread(work: Callable[[], S], undo: Callable[[S], object]) -> S:
    """`work()` in a worker thread; what it staged is undone when the command no longer waits for it (cancelled)."""
    running = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        running.add_done_callback(lambda done: done.exception() is None and undo(done.result()))
        raise


def _keep(store: PluginStore, staged: Staged, turn_on: bool = True) -> Path:
    """Keep an agreed plugin, and drop the staged copy whatever happens (one thread: a cancel cannot split them)."""
    try:
        return store.keep(staged, turn_on=turn_on)
    finally:
        store.drop(staged)  # gone already when it was kept


async def _update(host: Host, store: PluginStore, ids: list[str]) -> None:
    """Each plugin fetched again, and a changed one kept when the person agrees (as `agentcli plugins update`)."""
    from agentcli.plugins import PluginError, armed, stage_update
    from agentcli.ui.widgets.plugin_consent import PluginConsentScreen

    if not ids:
        host.say("No plugins installed by agentcli (/plugin install NAME@MARKETPLACE | FOLDER | URL).")
    markets: dict[str, str] = {}  # each marketplace fetched again once
    for plugin_id in ids:
        shown = terminal_safe(plugin_id)
        try:
            update = await _in_thread(functools.partial(stage_update, store, plugin_id, markets),
                                      lambda done: store.drop(done.staged))
        except (PluginError, OSError) as exc:
            host.say_error(f"/plugin update: {shown}: not updated: {terminal_safe(str(exc))}")
            continue
        staged, old = update.staged, update.old
        before = (old.version if old else "") or "?"
        if update.unchanged or host.turn_running:
            store.drop(staged)
            host.say(f"{shown} is up to date ({before})" if update.unchanged else
                     f"/plugin update: a turn started; {shown} not updated")
            continue
        if not await host.ask(PluginConsentScreen(staged.plugin, "Update", before=armed(old) if old else [])):
            store.drop(staged)
            host.say(f"not updated: {shown}")
            continue
        await asyncio.to_thread(_keep, store, staged, False)
        host.say(f"updated {shown}: {terminal_safe(before)} -> {terminal_safe(staged.plugin.version or '?')}; "
                 "the new copy loads in your next session")


async def _enable(host: Host, store: PluginStore, plugin_id: str) -> None:
    from agentcli.plugins import installed_plugin
    from agentcli.ui.widgets.plugin_consent import PluginConsentScreen

    plugin = await asyncio.to_thread(installed_plugin, plugin_id, store, host.conversation.workspace)
    if host.turn_running:
        host.say_error(f"/plugin enable: a turn started; {terminal_safe(plugin_id)} left as it was")
        return
    if not await host.ask(PluginConsentScreen(plugin, "Turn on")):
        host.say(f"left off: {terminal_safe(plugin_id)}")
        return
    store.set_enabled(plugin_id, True)
    host.say(f"{terminal_safe(plugin_id)} is on")
    await _join(host, plugin_id)


async def _join(host: Host, plugin_id: str) -> None:
    """The plugin joins this session (between turns) when the workspace's sessions now load it; say what it
    brought, or why not."""
    from agentcli.conversation import join_enabled
    from agentcli.plugins import brings

    conversation = host.conversation
    if any(p.plugin_id == plugin_id for p in conversation.plugins.plugins):
        host.say(f"{terminal_safe(plugin_id)} was loaded in this session already; the copy kept now is used from "
                 "your next session")
        return
    while host.turn_running:  # never changes the hooks and servers under a running turn
        await asyncio.sleep(0.1)
    joined, problems = join_enabled(conversation, plugin_id)
    host.reload_commands()
    if joined is not None:
        host.say(f"{terminal_safe(plugin_id)} joined this session: {brings(joined)} (its hooks and servers from "
                 "your next prompt; the main agent is told of its agents and skills with it, and lists them from "
                 "your next session)")
    for problem in problems:
        host.say_error(f"/plugin: {terminal_safe(problem)}")
    if joined is None and not problems:
        host.say(f"{terminal_safe(plugin_id)} is not loaded in this session: this workspace's settings keep it off, "
                 "or a plugin of its name is loaded")


async def _marketplace(host: Host, store: PluginStore, args: str) -> None:
    from agentcli.plugins import added_lines, marketplace_source, read_marketplace

    verb, _, source = args.partition(" ")
    if verb == "list":
        markets = store.marketplaces()
        lines = [f"{name}: {', '.join(sorted(read_marketplace(folder).entries)) or 'no plugins'}"
                 for name, folder in sorted(markets.items())]
        host.say("\n".join(terminal_safe(line) for line in lines) if lines else "No marketplaces added.")
        return
    if verb != "add" or not source.strip():
        host.say_error(f"/plugin marketplace: {USAGE}")
        return
    host.say(f"fetching {terminal_safe(source.strip())} …")
    market = await asyncio.to_thread(store.add_marketplace, marketplace_source(source.strip()))
    host.say("\n".join(terminal_safe(line) for line in added_lines(market)))


def _list(host: Host) -> None:
    from agentcli.plugins import armed, brings

    loaded = host.conversation.plugins
    lines = [f"Plugins loaded in this session ({USAGE}):"]
    for plugin in loaded.plugins:
        version = f" {plugin.version}" if plugin.version else ""
        lines.append(f"  {plugin.name}{version} ({plugin.scope}: {plugin.plugin_id}): {brings(plugin)}")
        lines += [f"    {line}" for line in armed(plugin)]
    if not loaded.plugins:
        lines.append("  none")
    lines += [f"  not loaded: {problem}" for problem in loaded.problems]
    host.say("\n".join(terminal_safe(line) for line in lines))
