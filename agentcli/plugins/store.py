"""agentcli's own plugin store: `$XDG_DATA_HOME/agentcli/plugins/` holds `state.json` (the marketplaces added,
the plugins installed, which are on), `marketplaces/<name>/` (a git marketplace's copy) and
`cache/<marketplace>/<plugin>/<version>/` (each installed plugin's copy). A folder marketplace is read in place.

An install is staged first (fetched, copied into `staging/`, read), so what it arms can be shown and agreed to
before it is kept (`keep`) or dropped (`drop`). `state.json` is written whole (a temporary file renamed) under a
lock, so two commands never lose each other's change.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentcli.paths import data_dir, ensure_private_dir
from agentcli.plugins.fetch import copy_folder, fetched
from agentcli.plugins.manifest import Plugin, PluginError, read_json, read_plugin
from agentcli.plugins.marketplace import Entry, Marketplace, Source, parse_source, read_marketplace
from agentcli.text import one_line

LOCAL = "local"  # the marketplace part of a plugin installed from a folder or URL of its own
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z._+-]{0,39}")  # a version that can name a folder (never . or ..)


@dataclass(frozen=True, slots=True)
class Staged:
    """A plugin fetched and read, not yet kept."""

    plugin: Plugin
    marketplace: str
    source: Source
    folder: Path  # under staging/

    @property
    def plugin_id(self) -> str:
        """`name@marketplace`."""
        return f"{self.plugin.name}@{self.marketplace}"


def split_id(plugin_id: str) -> tuple[str, str]:
    """`name@marketplace` → (name, marketplace); PluginError when it is not that."""
    name, sep, market = plugin_id.strip().rpartition("@")
    if not sep or not name or not market:
        raise PluginError(f"{one_line(plugin_id, 80)!r}: expected plugin@marketplace")
    return name, market


class PluginStore:
    """The plugins and marketplaces agentcli installed, under `root`."""

    def __init__(self, root: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        self.root = root if root is not None else data_dir(env) / "plugins"

    # -- state.json ---------------------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The recorded state (empty when nothing was installed); PluginError when the file is broken."""
        path = self.root / "state.json"
        if not path.exists():
            return {"marketplaces": {}, "installed": {}, "enabled": {}}
        doc = read_json(path, "plugin store")
        if not isinstance(doc, dict):
            raise PluginError(f"plugin store: {path} is not an object")
        for key in ("marketplaces", "installed", "enabled"):
            if not isinstance(doc.setdefault(key, {}), dict):
                raise PluginError(f"plugin store: {path}: '{key}' is not an object")
        return doc

    @contextlib.contextmanager
    def changing(self) -> Iterator[dict[str, Any]]:
        """The state, locked; written back when the block ends without an error."""
        ensure_private_dir(self.root)
        with open(self.root / ".lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self.state()
            yield state
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".state-")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(state, out, indent=2, sort_keys=True)
            os.replace(tmp, self.root / "state.json")

    # -- marketplaces -------------------------------------------------------------------------------------------
    def add_marketplace(self, source: Source) -> Marketplace:
        """Fetch and record a marketplace (a git one copied under `marketplaces/`); replaces one of its name."""
        staging = self.root / "staging"
        with fetched(source, staging) as folder:
            market = read_marketplace(folder)
            if market.name == LOCAL:
                raise PluginError(f"marketplace {folder}: the name '{LOCAL}' is agentcli's own")
            place = folder
            if source.path is None:
                ensure_private_dir(self.root / "marketplaces")
                place = self.root / "marketplaces" / market.name
                tmp = staging / f"market-{market.name}-{os.getpid()}"
                shutil.rmtree(tmp, ignore_errors=True)
                copy_folder(folder, tmp)
                shutil.rmtree(place, ignore_errors=True)
                os.replace(tmp, place)
        with self.changing() as state:
            state["marketplaces"][market.name] = {"source": source.as_json(), "path": str(place),
                                                  "added_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        return read_marketplace(place)

    def marketplaces(self) -> dict[str, Path]:
        """The marketplaces added, by name, with the folder they are read from."""
        return {name: Path(str(rec.get("path"))) for name, rec in self.state()["marketplaces"].items()
                if isinstance(rec, dict)}

    def remove_marketplace(self, name: str) -> bool:
        """Forget a marketplace (its installed plugins stay); whether it was known."""
        with self.changing() as state:
            record = state["marketplaces"].pop(name, None)
        if record is not None and Path(str(record.get("path"))).parent == self.root / "marketplaces":
            shutil.rmtree(self.root / "marketplaces" / name, ignore_errors=True)
        return record is not None

    # -- plugins ------------------------------------------------------------------------------------------------
    def stage(self, entry: Entry, marketplace: str) -> Staged:
        """Fetch `entry` into `staging/` and read it (PluginError when it cannot be used)."""
        staging = ensure_private_dir(self.root / "staging")
        folder = Path(tempfile.mkdtemp(dir=staging, prefix=f"{entry.name}-"))
        try:
            with fetched(entry.source, staging) as found:
                os.rmdir(folder)
                copy_folder(found, folder)
            fallback = entry.name if marketplace != LOCAL else _source_name(entry.source)
            plugin = read_plugin(folder, scope="user", name=fallback)
            plugin = replace(plugin, plugin_id=f"{plugin.name}@{marketplace}")
        except PluginError:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        if marketplace != LOCAL and plugin.name != entry.name:
            shutil.rmtree(folder, ignore_errors=True)
            raise PluginError(f"{entry.name}@{marketplace}: its manifest names it '{plugin.name}'")
        return Staged(plugin, marketplace, entry.source, folder)

    def keep(self, staged: Staged) -> Path:
        """Move a staged plugin into the cache, record it installed and on; its folder."""
        version = staged.plugin.version if _VERSION.fullmatch(staged.plugin.version) else "unversioned"
        place = self.root / "cache" / staged.marketplace / staged.plugin.name / version
        ensure_private_dir(place.parent)
        shutil.rmtree(place, ignore_errors=True)
        os.replace(staged.folder, place)
        with self.changing() as state:
            state["installed"][staged.plugin_id] = {
                "path": str(place), "version": staged.plugin.version, "source": staged.source.as_json(),
                "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            state["enabled"][staged.plugin_id] = True
        return place

    @staticmethod
    def drop(staged: Staged) -> None:
        """Forget a staged plugin that was not agreed to."""
        shutil.rmtree(staged.folder, ignore_errors=True)

    def installed(self) -> dict[str, Path]:
        """Installed plugins by id, with their folders."""
        return {pid: Path(str(rec.get("path"))) for pid, rec in self.state()["installed"].items()
                if isinstance(rec, dict)}

    def enabled(self) -> dict[str, bool]:
        """What `enable` / `disable` recorded, by id."""
        return {pid: bool(on) for pid, on in self.state()["enabled"].items()}

    def set_enabled(self, plugin_id: str, on: bool) -> None:
        """Record a plugin on or off."""
        with self.changing() as state:
            state["enabled"][plugin_id] = on

    def remove(self, plugin_id: str) -> bool:
        """Uninstall: its copy deleted, its records dropped; whether it was installed."""
        with self.changing() as state:
            record = state["installed"].pop(plugin_id, None)
            state["enabled"].pop(plugin_id, None)
        if record is None:
            return False
        place = Path(str(record.get("path")))
        if place.is_relative_to(self.root / "cache"):
            shutil.rmtree(place, ignore_errors=True)
        return True


def entry_for_folder_or_url(text: str) -> Entry:
    """`plugins install PATH|URL`: a plugin of its own, named by its manifest once read."""
    value = text.strip()
    if "://" in value:
        source = parse_source({"source": "git", "url": value}, value)
    else:
        source = Source(path=Path(value).expanduser().resolve())
        if not source.path or not source.path.is_dir():
            raise PluginError(f"{one_line(value, 80)!r}: no such folder")
    return Entry(name="plugin", source=source)


def _source_name(source: Source) -> str:
    """A plugin's name when it has no manifest: its folder's or repository's (a path inside one: that folder's)."""
    if source.path is not None:
        return source.path.name
    last = (source.subdir or source.url).rstrip("/").rsplit("/", 1)[-1]
    return last.removesuffix(".git")
