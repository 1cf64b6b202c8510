"""`agentcli plugins install|update|validate|list|enable|disable|remove` and `agentcli plugins marketplace
add|update|list|remove`: Claude Code's plugins in agentcli's own store.

Installing, updating or enabling a plugin shows every hook command and MCP server it arms (an update marks what
is new) and asks (`--yes` agrees beforehand; without a terminal and without `--yes` nothing changes). Only
typer and the standard library at import time: the store loads inside the commands.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentcli.cli.common import CwdOption, JsonOption, echo, print_json, table
from agentcli.frontend import fail, workspace_dir

if TYPE_CHECKING:
    from agentcli.plugins import Plugin, PluginStore, StagedUpdate

plugins_app = typer.Typer(help="Claude Code's plugins: install, update, list, enable, disable, remove.",
                          rich_markup_mode=None)
marketplace_app = typer.Typer(help="Plugin marketplaces (.claude-plugin/marketplace.json).", rich_markup_mode=None)
plugins_app.add_typer(marketplace_app, name="marketplace")

YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Agree to what the plugin arms without asking.")]


def _store() -> PluginStore:
    from agentcli.plugins import PluginStore

    return PluginStore()


@contextlib.contextmanager
def _one_line() -> Iterator[None]:
    """A plugin, marketplace or store error (or the disk's) as one line and exit 1."""
    from agentcli.plugins import PluginError

    try:
        yield
    except PluginError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"plugins: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))


def _agreed(plugin: Plugin, verb: str, yes: bool, before: list[str] | None = None) -> bool:
    """Show what `plugin` arms and ask (a terminal), or take `--yes`; without either, say how and refuse. With
    `before` (what the copy it replaces arms), what it did not arm is marked new."""
    from agentcli.plugins import armed_marked, brings

    lines = armed_marked(plugin, before)
    version = f" {plugin.version}" if plugin.version else ""
    echo(f"{plugin.plugin_id}{version}: {plugin.description or '(no description)'}")
    echo(f"  brings {brings(plugin)}")
    if lines:
        echo("  it runs these hooks, MCP servers and language servers, as you, on every session where it is on "
             "(${CLAUDE_PLUGIN_ROOT} is the plugin's folder):")
        echo("\n".join(f"    {line}" for line in lines))
    else:
        echo("  it runs no hooks, no MCP servers and no language servers")
    if before is not None and not any(line.startswith("(new) ") for line in lines):
        echo("  nothing it runs is new; its files changed")
    for warning in plugin.warnings:
        echo(f"  skipped: {warning}")
    if yes:
        return True
    if not sys.stdin.isatty():
        echo(f"not {verb}: run again with --yes to agree to the above")
        return False
    return input(f"{verb.capitalize()} it? [y/N] ").strip().lower() in ("y", "yes")


@plugins_app.command("install")
def install(
    target: Annotated[str, typer.Argument(metavar="PLUGIN", help="name@marketplace, a plugin folder or a git URL.")],
    yes: YesOption = False, cwd: CwdOption = None,
) -> None:
    """Install a plugin from a marketplace, a folder or a git repository, and turn it on."""
    from agentcli.plugins import stage_target

    store = _store()
    with _one_line():
        staged = stage_target(target, store, workspace_dir(cwd), echo)
    if not _agreed(staged.plugin, "installed", yes):
        store.drop(staged)
        raise typer.Exit(1)
    try:
        with _one_line():
            place = store.keep(staged)
    finally:
        store.drop(staged)  # gone already when it was kept
    echo(f"installed {staged.plugin_id} in {place}; it is on (agentcli plugins disable {staged.plugin_id})")


@plugins_app.command("update")
def update(
    plugin_id: Annotated[str | None, typer.Argument(
        metavar="[PLUGIN@MARKETPLACE]", help="One plugin; without it, every plugin agentcli installed.")] = None,
    yes: YesOption = False,
) -> None:
    """Fetch installed plugins again (each one's marketplace first) and keep those that changed, after showing
    what they arm; whether each is on stays as it was."""
    store = _store()
    with _one_line():
        ids = [plugin_id] if plugin_id else sorted(store.installed())
    if not ids:
        echo("No plugins installed by agentcli (agentcli plugins install NAME@MARKETPLACE | FOLDER | URL).")
        return
    markets: dict[str, str] = {}  # each marketplace fetched again once: "" when it was, else why not
    results = [_update_one(store, pid, yes, markets) for pid in ids]
    if not all(results):
        raise typer.Exit(1)


def _update_one(store: PluginStore, plugin_id: str, yes: bool, markets: dict[str, str]) -> bool:
    """Update one plugin (module docstring); whether it is up to date now. Errors are one line."""
    from agentcli.plugins import PluginError, stage_update

    update: StagedUpdate | None = None
    try:
        update = stage_update(store, plugin_id, markets)
        return _keep_update(store, update, yes)
    except (PluginError, OSError) as exc:
        echo(f"{plugin_id}: not updated: {getattr(exc, 'strerror', None) or exc}")
        return False
    finally:
        if update is not None:
            store.drop(update.staged)  # gone already when it was kept


def _keep_update(store: PluginStore, update: StagedUpdate, yes: bool) -> bool:
    """Keep a staged update when it changed and the person agrees; whether the plugin is up to date now."""
    from agentcli.plugins import armed

    staged, old = update.staged, update.old
    if update.unchanged:
        echo(f"{staged.plugin_id} is up to date{f' ({old.version})' if old and old.version else ''}")
        return True
    if not _agreed(staged.plugin, "updated", yes, before=armed(old) if old else []):
        return False
    store.keep(staged, turn_on=False)
    echo(f"updated {staged.plugin_id}: {(old.version if old else '') or '?'} -> {staged.plugin.version or '?'}")
    return True


@plugins_app.command("enable")
def enable(plugin_id: Annotated[str, typer.Argument(metavar="PLUGIN@MARKETPLACE")], yes: YesOption = False,
           cwd: CwdOption = None) -> None:
    """Turn an installed plugin on (agentcli's, or one Claude Code installed)."""
    from agentcli.plugins import installed_plugin

    store = _store()
    with _one_line():
        plugin = installed_plugin(plugin_id, store, workspace_dir(cwd))
    if not _agreed(plugin, "enabled", yes):
        raise typer.Exit(1)
    with _one_line():
        store.set_enabled(plugin_id, True)
    echo(f"{plugin_id} is on")


@plugins_app.command("disable")
def disable(plugin_id: Annotated[str, typer.Argument(metavar="PLUGIN@MARKETPLACE")]) -> None:
    """Turn a plugin off (a trusted project's enabledPlugins may still turn it on there)."""
    with _one_line():
        _store().set_enabled(plugin_id, False)
    echo(f"{plugin_id} is off")


@plugins_app.command("remove")
def remove(plugin_id: Annotated[str, typer.Argument(metavar="PLUGIN@MARKETPLACE")]) -> None:
    """Uninstall a plugin agentcli installed."""
    with _one_line():
        removed = _store().remove(plugin_id)
    if not removed:
        fail(f"{plugin_id} is not installed by agentcli (agentcli plugins list)")
    echo(f"removed {plugin_id}")


@plugins_app.command("validate")
def validate(path: Annotated[Path, typer.Argument(help="A plugin folder or a marketplace folder.")]) -> None:
    """Read a plugin, or a marketplace and each plugin in it, as an install would (copied into a scratch store,
    never kept): what each brings and runs, and every problem; exit 1 when there is one."""
    import tempfile

    from agentcli.plugins import PluginError, PluginStore, Source, read_marketplace
    from agentcli.plugins.marketplace import MARKETPLACE, Entry

    folder = path.expanduser().resolve()
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="agentcli-validate-") as scratch, _one_line():
        store = PluginStore(Path(scratch))
        if (folder / MARKETPLACE).exists():
            market = read_marketplace(folder)
            echo(f"marketplace {market.name}: {len(market.entries)} plugin(s)")
            problems += market.problems
            entries = [(entry, market.name) for entry in market.entries.values()]
        else:
            entries = [(Entry(folder.name, Source(path=folder)), "")]
        for entry, market_name in entries:
            if entry.source.path is None:
                echo(f"  {entry.name}: fetched from {entry.source.describe()} (not read here)")
                continue
            try:
                staged = store.stage(entry, market_name or "local")
            except PluginError as exc:
                problems.append(str(exc))
                continue
            plugin = staged.plugin
            echo(f"  {plugin.name} {plugin.version or '(no version)'}: {_summary(plugin)}")
            problems += [f"plugin {plugin.name}: {warning}" for warning in plugin.warnings]
            store.drop(staged)
    for problem in problems:
        echo(f"problem: {problem}")
    if problems:
        raise typer.Exit(1)
    echo("valid")


def _summary(plugin: Plugin) -> str:
    """What a plugin brings and how much it runs, in one line."""
    from agentcli.plugins import armed, brings

    runs = len(armed(plugin))
    return f"brings {brings(plugin)}; runs {runs} (hook commands and servers)" if runs else f"brings {brings(plugin)}"


@plugins_app.command("list")
def list_plugins(cwd: CwdOption = None, as_json: JsonOption = False) -> None:
    """The plugins installed, which are on, what this workspace's sessions load, and what could not be loaded."""
    from agentcli.plugins import session_plugins

    workspace = workspace_dir(cwd)
    store = _store()
    with _one_line():
        installed, enabled = store.installed(), store.enabled()
    loaded = session_plugins(workspace, store=store)
    if as_json:
        record: dict[str, Any] = {
            "installed": [{"id": pid, "path": str(path), "enabled": enabled.get(pid, False)}
                          for pid, path in sorted(installed.items())],
            "loaded": [{"id": p.plugin_id, "name": p.name, "path": str(p.root), "scope": p.scope,
                        "version": p.version} for p in loaded.plugins],
            "problems": loaded.problems,
        }
        print_json(record)
        return
    if installed:
        rows = [[pid, "on" if enabled.get(pid) else "off", str(path)] for pid, path in sorted(installed.items())]
        echo(table(["PLUGIN", "STATE", "FOLDER"], rows))
    else:
        echo("No plugins installed by agentcli (agentcli plugins install NAME@MARKETPLACE | FOLDER | URL).")
    if loaded.plugins:
        echo(f"\nLoaded in {workspace}:")
        for plugin in loaded.plugins:
            echo(f"  {plugin.name} ({plugin.scope}: {plugin.plugin_id})")
    if loaded.problems:
        echo("\nNot loaded:")
        echo("\n".join(f"  {line}" for line in loaded.problems))


@marketplace_app.command("add")
def marketplace_add(source: Annotated[str, typer.Argument(
        help="A folder, owner/repo (GitHub), a git URL, or a marketplace.json (a path or an http(s) URL).")]) -> None:
    """Add a marketplace: its plugins can then be installed as name@marketplace."""
    from agentcli.plugins import added_lines, marketplace_source

    with _one_line():
        market = _store().add_marketplace(marketplace_source(source))
    echo("\n".join(added_lines(market)))


@marketplace_app.command("update")
def marketplace_update(name: Annotated[str | None, typer.Argument(
        help="One marketplace; without it, every one added.")] = None) -> None:
    """Fetch marketplaces again from where they were added (a folder is read again), to see new plugins and
    versions; `agentcli plugins update` then updates installed ones."""
    with _one_line():
        store = _store()
        names = [name] if name else sorted(store.marketplaces())
        if not names:
            echo("No marketplaces (agentcli plugins marketplace add SOURCE).")
        for each in names:
            market = store.update_marketplace(each)
            echo(f"updated marketplace {market.name}: {len(market.entries)} plugin(s)")


@marketplace_app.command("list")
def marketplace_list() -> None:
    """The marketplaces added, with the plugins each lists."""
    from agentcli.plugins import PluginError, read_marketplace

    with _one_line():
        markets = _store().marketplaces()
    if not markets:
        echo("No marketplaces (agentcli plugins marketplace add SOURCE).")
    for name, folder in sorted(markets.items()):
        try:
            market = read_marketplace(folder)
        except PluginError as exc:
            echo(f"{name}: {exc}")
            continue
        echo(f"{name} ({folder}): {', '.join(sorted(market.entries)) or 'no plugins'}")


@marketplace_app.command("remove")
def marketplace_remove(name: str) -> None:
    """Forget a marketplace (the plugins installed from it stay)."""
    with _one_line():
        removed = _store().remove_marketplace(name)
    if not removed:
        fail(f"no marketplace named {name!r}")
    echo(f"removed marketplace {name}")
