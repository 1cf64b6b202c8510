"""Which plugins a session loads, and from where.

A plugin is on when the last of these that names it says so (Claude Code's `enabledPlugins`, `"name@market":
true|false`): the person's `~/.claude/settings.json`, then agentcli's own store (`agentcli plugins enable` /
`disable`, and an install), then a trusted project's `.claude/settings.json` and `.claude/settings.local.json`.
An untrusted project's `enabledPlugins` is not read at all: turning a plugin on arms its hooks and servers, and
turning one off could drop a hook of the person's that blocks a command. The folders `--plugin-dir` names
(`[plugins] dirs`) are on for the session, before the others.

A plugin that is on is found in agentcli's store, else where Claude Code installed it
(`~/.claude/plugins/installed_plugins.json`: a project-scoped install only in its own project). On but found
nowhere, or unreadable, is one line in `PluginSet.problems`; so is a second plugin of a name already loaded.
Each is read with the marketplace entry it was installed from (`install_entries`), so a `strict: false` entry's
plugin brings only what the entry lists, whichever tool installed it.
"""

from __future__ import annotations

import os
from collections import ChainMap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.config import claude_setting_layers
from agentcli.plugins.manifest import Plugin, PluginError, PluginScope, read_json, read_plugin
from agentcli.plugins.marketplace import read_marketplace
from agentcli.plugins.store import PluginStore
from agentcli.text import one_line


@dataclass(slots=True)
class PluginSet:
    """The session's plugins, in load order, and what could not be loaded: one line each in `problems`, and as
    Claude Code's init message gives them, `errors` (a plugin that did not load: `plugin_errors`) and `warnings`
    (a part of a loaded plugin that was skipped: `plugin_warnings`)."""

    plugins: list[Plugin] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)

    def add(self, plugin: Plugin) -> bool:
        """Keep `plugin` unless one of its name is loaded already; whether it was kept."""
        if any(p.name == plugin.name for p in self.plugins):
            self.fail(plugin.plugin_id, "generic-error",
                      f"plugin {plugin.plugin_id} not loaded: a plugin named '{plugin.name}' already is")
            return False
        self.plugins.append(plugin)
        self.problems += [f"plugin {plugin.name}: {w}" for w in plugin.warnings]
        self.warnings += [{"plugin": plugin.name, "message": w,
                           "type": "path-not-found" if w.endswith("does not exist") else "component-load-failed"}
                          for w in plugin.warnings]
        return True

    def fail(self, plugin: str, kind: str, message: str, path: Path | None = None) -> None:
        """A plugin that did not load (`kind`: Claude Code's error type; `path`: a folder given for the session)."""
        self.problems.append(message)
        self.errors.append({"plugin": plugin, "type": kind, "message": message,
                            **({"path": str(path)} if path else {})})


def claude_plugins_dir(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps its plugins."""
    base = env.get("CLAUDE_CONFIG_DIR") or str(Path(env.get("HOME") or Path.home()) / ".claude")
    return Path(base).expanduser() / "plugins"


def claude_installed(env: Mapping[str, str], workspace: Path) -> dict[str, Path]:
    """Claude Code's installed plugins by id (its file's version 1 and 2), those of another project left out."""
    path = claude_plugins_dir(env) / "installed_plugins.json"
    try:
        doc = read_json(path, "Claude Code's installed plugins") if path.exists() else {}
    except PluginError:
        return {}
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    found: dict[str, Path] = {}
    real_workspace = workspace.resolve()
    for plugin_id, records in (plugins.items() if isinstance(plugins, dict) else ()):
        for record in records if isinstance(records, list) else [records]:
            if not isinstance(record, dict) or not isinstance(record.get("installPath"), str):
                continue
            project = record.get("projectPath")
            if record.get("scope") in ("project", "local") and (
                    not isinstance(project, str) or Path(project).resolve() != real_workspace):
                continue
            found.setdefault(str(plugin_id), Path(record["installPath"]).expanduser())
    return found


def enabled_ids(workspace: Path, *, trusted: bool, env: Mapping[str, str], store: PluginStore,
                problems: list[str]) -> dict[str, PluginScope]:
    """The ids that are on, each with the scope of the layer that turned it on."""
    layers = claude_setting_layers("enabledPlugins", workspace, trusted=True, env=env)
    state: dict[str, tuple[bool, PluginScope]] = {}
    user = [(path, value) for source, path, value in layers if source == "user"]
    project = [(path, value) for source, path, value in layers if source != "user"]
    try:
        own = store.enabled()
    except PluginError as exc:
        problems.append(str(exc))
        own = {}
    for path, value in user:
        _merge(state, path, value, "user", problems)
    state.update({pid: (on, "user") for pid, on in own.items()})
    for path, value in project:
        if not trusted:
            if isinstance(value, dict) and any(value.values()):
                problems.append(f"plugins enabled in {path} not loaded: the workspace is not trusted "
                                f"(run 'agentcli trust {workspace}' to load them)")
            continue
        _merge(state, path, value, "project", problems)
    return {pid: scope for pid, (on, scope) in state.items() if on}


def _merge(state: dict[str, tuple[bool, PluginScope]], path: Path, value: object, scope: PluginScope,
           problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f"{path}: enabledPlugins ignored: expected an object of \"plugin@marketplace\": true|false")
        return
    for pid, on in value.items():
        if isinstance(on, bool):
            state[str(pid)] = (on, scope)


def install_places(store: PluginStore, env: Mapping[str, str], workspace: Path,
                   problems: list[str] | None = None) -> ChainMap[str, Path]:
    """Where each installed plugin is, by id: agentcli's store first, else where Claude Code installed it. An
    unreadable store is one of `problems` (PluginError without them)."""
    try:
        ours = store.installed()
    except PluginError as exc:
        if problems is None:
            raise
        problems.append(str(exc))
        ours = {}
    return ChainMap(ours, claude_installed(env, workspace))


def session_plugins(workspace: Path, *, trusted: bool | None = None, dirs: Iterable[str] = (),
                    env: Mapping[str, str] | None = None, store: PluginStore | None = None,
                    enabled: bool = True) -> PluginSet:
    """The plugins this session loads (module docstring; none when not `enabled`; `trusted` None: whether the
    workspace is). Reads files only: nothing runs here."""
    from agentcli.config import trust

    env = os.environ if env is None else env
    trusted = trust.is_trusted(workspace) if trusted is None else trusted
    store = store or PluginStore(env=env)
    found = PluginSet()
    if not enabled:
        return found
    for number, named in enumerate(dirs):
        path = Path(named).expanduser()
        _load(found, path if path.is_absolute() else workspace / path, "session", str(path), tag=f"inline[{number}]")
    on = enabled_ids(workspace, trusted=trusted, env=env, store=store, problems=found.problems)
    if not on:
        return found
    places = install_places(store, env, workspace, found.problems)
    entries = install_entries(store, env, places, on)
    for pid, scope in on.items():
        place = places.get(pid)
        if place is None:
            found.fail(pid, "plugin-not-installed", f"plugin {one_line(pid, 80)} is enabled but not installed "
                                                    f"(agentcli plugins install {one_line(pid, 80)})")
            continue
        _load(found, place, scope, pid, entries.get(pid))
    return found


def install_entries(store: PluginStore, env: Mapping[str, str], places: ChainMap[str, Path],
                    ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The marketplace entries installed plugins of `ids` are read with (`manifest.with_entry`): as agentcli's
    store kept them, and for Claude Code's installs, as its copy of their marketplace lists them. An unreadable
    store or marketplace gives none (said elsewhere, or read as the folder is)."""
    ours, wanted = places.maps[0], set(ids)
    try:
        found = {pid: entry for pid, entry in store.entries().items() if pid in wanted} if ours else {}
    except PluginError:
        found = {}
    theirs = {pid for pid in wanted if pid not in ours and pid in places}
    if theirs:
        found.update(_claude_entries(env, theirs))
    return found


def _claude_entries(env: Mapping[str, str], ids: set[str]) -> dict[str, dict[str, Any]]:
    """The entries of Claude Code's installed plugins `ids`, from its marketplaces' copies
    (`known_marketplaces.json`: each one's `installLocation`)."""
    path = claude_plugins_dir(env) / "known_marketplaces.json"
    try:
        doc = read_json(path, "Claude Code's marketplaces") if path.exists() else {}
    except PluginError:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for market in {pid.rpartition("@")[2] for pid in ids}:
        record = doc.get(market) if isinstance(doc, dict) else None
        location = record.get("installLocation") if isinstance(record, dict) else None
        if not isinstance(location, str):
            continue
        try:
            listed = read_marketplace(Path(location).expanduser())
        except PluginError:
            continue
        found.update({pid: entry.record() for entry in listed.entries.values()
                      if (pid := f"{entry.name}@{market}") in ids and entry.record()})
    return found


def _load(found: PluginSet, folder: Path, scope: PluginScope, plugin_id: str,
          entry: Mapping[str, Any] | None = None, tag: str = "") -> None:
    """Read and add one plugin; one that cannot be read is an error under its id (or `tag`, a session folder's
    place among them, with the folder: Claude Code's `inline[N]`)."""
    try:
        name = plugin_id.rpartition("@")[0] if "@" in plugin_id else ""
        found.add(read_plugin(folder, scope=scope, plugin_id=plugin_id, name=name, entry=entry))
    except PluginError as exc:
        kind = "path-not-found" if not folder.exists() else "manifest-validation-error"
        found.fail(tag or plugin_id, kind, str(exc), folder if tag else None)
