"""The config layers merged by dynaconf, and where each value came from, read from dynaconf's history.

One `Dynaconf` object holds every layer. A layer is applied key by key with `Settings.set` on dotted keys, as
dynaconf applies its own nested variables (`PREFIX_A__B=…`): a dotted assignment replaces the value at its key
and merges the tables above it (its `list_merge="shallow"`), so tables merge and scalars and lists replace.
(dynaconf's `merge_enabled`, and its `dynaconf_merge` markers, would concatenate lists.) The first layer to
reach a table gives it whole (`update`): nothing lies below it to merge with. A key that a dotted key cannot
name (it holds `.` or `__`, like `models.aliases."gpt-4.1"`) is assigned as a one-key table under its top-level
table with dynaconf's `merge=True`.

Each assignment carries a `SourceMetadata` naming the layer (`loader`) and its file, variable or flag
(`identifier`), so `get_history` holds, layer by layer, the tables as each left them; a value's origin is the
latest layer that changed it (a layer restating the value below leaves the origin where it was).

dynaconf's own loaders are skipped (`dynaconf_skip_loaders`): they would read `DYNACONF_*` variables, `.env`,
`settings.toml` and files named in `*_FOR_DYNACONF` variables, and those variables override the options given
here (`AUTO_CAST_FOR_DYNACONF=true` would make `@read_file` and `@format` strings of an untrusted project file
live). Casting is off (`auto_cast=False`): `@int 3`, `@format {env[HOME]}` stay text.

Importing this module is cheap; dynaconf loads when the first `LayerStack` is made.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, get_args

from agentcli.config.layers import ConfigError, KeyPath, LayerName, Source, dotted, leaves

if TYPE_CHECKING:
    from dynaconf import Dynaconf

_LAYER_NAMES = frozenset(get_args(LayerName))
#: dynaconf's merge markers: a key or list item by these names would change how a layer merges.
MERGE_MARKERS = frozenset({"dynaconf_merge", "dynaconf_merge_unique"})
_MARKER_RULE = "dynaconf's merge markers are not used here: a later layer's list replaces the one below"
_OPTIONS: dict[str, Any] = {
    "environments": False,
    "settings_files": [],
    "load_dotenv": False,
    "auto_cast": False,
    "dotted_lookup": True,
    "nested_separator": "__",
    "dynaconf_skip_loaders": True,
    "dynaconf_skip_validators": True,
}


def _nameable(part: str) -> bool:
    """Whether a dotted key can name this part (dynaconf splits keys at `.` and `__`)."""
    return bool(part) and "." not in part and "__" not in part and part == part.strip()


class LayerStack:
    """The layers applied so far, in dynaconf."""

    def __init__(self) -> None:
        from dynaconf import Dynaconf

        #: The dynaconf object holding the layers (its history is public: `dynaconf.inspect_settings`).
        self.settings: Dynaconf = Dynaconf(**_OPTIONS)
        self._tops: set[str] = set()

    def apply(self, path: KeyPath, value: object, source: Source) -> None:
        """Assign one layer's value at `path`: a table key by key, unless nothing lies below it yet."""
        if not path:
            raise ValueError("a layer assigns under a top-level key")
        items = list(leaves(value, path))
        for leaf, item in items:
            if leaf[-1] in MERGE_MARKERS:
                raise ConfigError(f"{dotted(leaf)} (from {source.describe()}): unknown key ({_MARKER_RULE})")
            if isinstance(item, list) and any(isinstance(v, str) and v in MERGE_MARKERS for v in item):
                raise ConfigError(f"{dotted(leaf)} (from {source.describe()}): {_MARKER_RULE}")
        if len(path) == 1 and path[0] not in self._tops and isinstance(value, Mapping):
            self._tops.add(path[0])
            self._set(path[0], value, source)  # the first layer to reach this table: nothing to merge with
            return
        self._tops.add(path[0])
        for leaf, item in items:
            if isinstance(item, Mapping):
                continue  # an empty table: nothing to merge
            cut = next((i for i, part in enumerate(leaf) if not _nameable(part)), len(leaf))
            if cut == len(leaf):
                self._set(".".join(leaf), item, source)
            else:  # a key no dotted key can name: a one-key table merged into its top-level table
                self._set(leaf[0], _nest(leaf[1:], item), source, merge=True)

    def _set(self, key: str, value: object, source: Source, *, merge: bool = False) -> None:
        from dynaconf.loaders.base import SourceMetadata

        meta = SourceMetadata(loader=source.layer, identifier=source.location)
        try:
            if merge:
                self.settings.set(key, copy.deepcopy(value), loader_identifier=meta, merge=True)
            else:
                self.settings.set(key, copy.deepcopy(value), loader_identifier=meta)
        except RecursionError:
            raise ConfigError(f"{key} (from {source.describe()}): values nested too deep") from None

    def data(self) -> dict[str, Any]:
        """The merged tables, as plain dicts and lists."""
        merged = self.settings.to_dict()
        return {key.lower(): value for key, value in merged.items() if key.lower() in self._tops}

    def provenance(self) -> dict[KeyPath, Source]:
        """The origin of every leaf of `data()`: the latest layer in dynaconf's history that changed it."""
        from dynaconf.utils.inspect import get_history

        seen: dict[KeyPath, tuple[str, Source]] = {}
        for record in get_history(self.settings):  # in the order the layers were applied
            if record["loader"] not in _LAYER_NAMES:
                continue  # dynaconf's own options
            source = Source(record["loader"], str(record["identifier"]))
            for top, table in record["value"].items():
                if top.lower() not in self._tops:
                    continue
                for path, value in leaves(table, (top.lower(),)):
                    shown = repr(value)
                    if seen.get(path, ("",))[0] != shown:
                        seen[path] = (shown, source)
        current = {path for path, _ in leaves(self.data())}
        return {path: source for path, (_, source) in seen.items() if path in current}


def _nest(path: KeyPath, value: object) -> object:
    for part in reversed(path):
        value = {part: value}
    return value


