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
from agentcli.plugins.fetch import copy_folder, fetched, tree_digest
from agentcli.plugins.manifest import Plugin, PluginError, read_json, read_plugin
from agentcli.plugins.marketplace import MARKETPLACE, Entry, Marketplace, Source, parse_source, read_marketplace
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
    entry: dict[str, Any]  # the marketplace entry's `strict` and parts, when it names any (`manifest.with_entry`)

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
    def add_marketplace(self, source: Source, *, expect: str = "") -> Marketplace:
        """Fetch and record a marketplace (a git one copied under `marketplaces/`); replaces one of its name.
        With `expect`, PluginError (nothing changed) when the fetched one has another name."""
        staging = self.root / "staging"
        with fetched(source, staging) as folder:
            local = _drop_local_entries(folder) if source.document else []
            market = _read_fetched(folder, source)
            if market.name == LOCAL:
                raise PluginError(f"marketplace {folder}: the name '{LOCAL}' is agentcli's own")
            if expect and market.name != expect:
                raise PluginError(f"marketplace {expect}: {source.describe()} now names itself "
                                  f"{market.name!r}; not updated")
            place = folder
            if source.path is None or source.document:
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
        market = read_marketplace(place)
        return replace(market, problems=(*market.problems, *(
            f"marketplace {market.name}: plugin {name}: a ./path source needs the marketplace's folder or "
            "repository, and this marketplace is one file; left out" for name in local)))

    def update_marketplace(self, name: str) -> Marketplace:
        """Fetch a marketplace again from where it was added (a folder one is read again in place)."""
        record = self.state()["marketplaces"].get(name)
        if not isinstance(record, dict):
            raise PluginError(f"no marketplace named {one_line(name, 80)!r} (agentcli plugins marketplace list)")
        source = parse_source(record.get("source"), f"plugin store: marketplace {name}", market=True)
        return self.add_marketplace(source, expect=name)

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
            plugin = read_plugin(folder, scope="user", name=fallback, entry=entry.record())
            plugin = replace(plugin, plugin_id=f"{plugin.name}@{marketplace}")
        except PluginError:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise PluginError(f"{entry.name}: cannot copy: {exc.strerror or exc}") from None
        if marketplace != LOCAL and plugin.name != entry.name:
            shutil.rmtree(folder, ignore_errors=True)
            raise PluginError(f"{entry.name}@{marketplace}: its manifest names it '{plugin.name}'")
        return Staged(plugin, marketplace, entry.source, folder, entry.record())

    def restage(self, plugin_id: str) -> Staged:
        """Fetch an installed plugin again, from its marketplace's entry as it is now (update the marketplace
        first) or from its own folder or repository; PluginError when it cannot be."""
        name, market = split_id(plugin_id)
        record = self.state()["installed"].get(plugin_id)
        if not isinstance(record, dict):
            raise PluginError(f"{one_line(plugin_id, 80)} is not installed by agentcli (agentcli plugins list)")
        if market == LOCAL:
            entry = Entry(name, parse_source(record.get("source"), f"plugin store: {plugin_id}"))
        else:
            folder = self.marketplaces().get(market)
            if folder is None:
                raise PluginError(f"{plugin_id}: the marketplace {market} is no longer added "
                                  "(agentcli plugins marketplace add SOURCE)")
            entries = read_marketplace(folder).entries
            if name not in entries:
                raise PluginError(f"{plugin_id}: the marketplace {market} no longer lists it")
            entry = entries[name]
        staged = self.stage(entry, market)
        if staged.plugin_id != plugin_id:
            self.drop(staged)
            raise PluginError(f"{plugin_id}: its manifest now names it '{staged.plugin.name}'; not updated")
        return staged

    def unchanged(self, staged: Staged) -> bool:
        """Whether the staged copy has the same files and marketplace entry as the one installed under its id."""
        record = self.state()["installed"].get(staged.plugin_id)
        if not isinstance(record, dict) or record.get("entry", {}) != staged.entry:
            return False
        installed = Path(str(record.get("path")))
        return installed.is_dir() and tree_digest(installed) == tree_digest(staged.folder)

    def keep(self, staged: Staged, *, turn_on: bool = True) -> Path:
        """Move a staged plugin into the cache and record it installed (and on, unless not `turn_on`: an update
        keeps the person's choice); its folder, named by its version. The copy it replaces stays, for sessions still
        running on it (a new copy of the same version gets a folder of its own); older ones go."""
        version = staged.plugin.version if _VERSION.fullmatch(staged.plugin.version) else "unversioned"
        place = self.root / "cache" / staged.marketplace / staged.plugin.name / version
        ensure_private_dir(place.parent)
        with self.changing() as state:
            record = state["installed"].get(staged.plugin_id)
            previous = Path(str(record.get("path"))) if isinstance(record, dict) else None
            if place == previous:
                place = place.with_name(f"{version}-{tree_digest(staged.folder)[:12]}")
            shutil.rmtree(place, ignore_errors=True)
            os.replace(staged.folder, place)
            state["installed"][staged.plugin_id] = {
                "path": str(place), "version": staged.plugin.version, "source": staged.source.as_json(),
                "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                **({"entry": staged.entry} if staged.entry else {}),
            }
            if turn_on:
                state["enabled"][staged.plugin_id] = True
            for older in place.parent.iterdir():
                if older not in (place, previous):
                    shutil.rmtree(older, ignore_errors=True)
        return place

    @staticmethod
    def drop(staged: Staged) -> None:
        """Forget a staged plugin that was not agreed to."""
        shutil.rmtree(staged.folder, ignore_errors=True)

    def installed(self) -> dict[str, Path]:
        """Installed plugins by id, with their folders."""
        return {pid: Path(str(rec.get("path"))) for pid, rec in self.state()["installed"].items()
                if isinstance(rec, dict)}

    def entries(self) -> dict[str, dict[str, Any]]:
        """The marketplace entries installed plugins were read with (`manifest.with_entry`), by id."""
        return {pid: rec["entry"] for pid, rec in self.state()["installed"].items()
                if isinstance(rec, dict) and isinstance(rec.get("entry"), dict)}

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
        versions = Path(str(record.get("path"))).parent  # cache/<marketplace>/<plugin>/: every copy kept
        if versions.parent.parent == self.root / "cache":
            shutil.rmtree(versions, ignore_errors=True)
        return True


def _drop_local_entries(folder: Path) -> list[str]:
    """A marketplace that is one file: the entries whose plugin is a `./path` taken out of its copy (there is no
    folder for them to come from); their names. A file that is not such JSON is left for the reader to report."""
    file = folder / MARKETPLACE
    try:
        doc = json.loads(file.read_bytes())
    except (OSError, ValueError):
        return []
    if not isinstance(doc, dict) or not isinstance(doc.get("plugins"), list):
        return []
    def is_local(entry: object) -> bool:
        return isinstance(entry, dict) and isinstance(entry.get("source"), str)

    local = [entry for entry in doc["plugins"] if is_local(entry)]
    if local:
        doc["plugins"] = [entry for entry in doc["plugins"] if not is_local(entry)]
        file.write_text(json.dumps(doc, indent=2))
    return [one_line(str(entry.get("name")), 80) for entry in local]


def _read_fetched(folder: Path, source: Source) -> Marketplace:
    """The marketplace in `folder`; a fetched copy's errors name where it came from, not the scratch folder."""
    try:
        return read_marketplace(folder)
    except PluginError as exc:
        if folder == source.path:
            raise
        text = str(exc)
        if source.document:
            text = text.replace(str(folder.resolve() / MARKETPLACE), source.describe())
        raise PluginError(text.replace(str(folder.resolve()), source.describe())
                          .replace(str(folder), source.describe())) from None


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
