"""Reading the config layers and merging them with provenance.

dynaconf reads the TOML layers (its TOML loader, fed through a small collector object instead
of a dynaconf `Settings`, so no dynaconf machinery touches the values) and parses environment
values (its `parse_conf_data`, with @-casting off). The merge is ours: tables merge deeply,
scalars and lists replace, and every leaf remembers the layer that set it.

Importing this module is cheap: dynaconf is imported inside the functions that need it.
"""

from __future__ import annotations

import copy
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal, NamedTuple

LayerName = Literal["default", "user", "project", "config-file", "env", "cli", "builtin"]
KeyPath = tuple[str, ...]

ENV_PREFIX = "AGENTCLI_"
ENV_NESTING = "__"
#: Seed 002's variables, read before (and overridden by) `AGENTCLI_*`.
SEED_ENV_VARS: dict[str, KeyPath] = {
    f"{prefix}LLM_{suffix}": ("models", target, key)
    for prefix, target in (("", "main"), ("LIGHT_", "light"))
    for suffix, key in (
        ("MODEL_ID", "model"),
        ("API_KEY", "api_key"),
        ("BASE_URL", "base_url"),
        ("PROVIDER", "provider"),
    )
}

#: A config file larger than this is refused (agentcli's own are a few KiB).
MAX_CONFIG_BYTES = 1024 * 1024
#: No agentcli setting nests deeper than a few levels; deeper values are refused before anything recurses.
MAX_DEPTH = 32
_SECRET_WORD = re.compile(r"key|secret|passw|credential|token(?!s)", re.IGNORECASE)
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class ConfigError(Exception):
    """A configuration problem, as one line naming key, value, file and rule."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid config: " + re.sub(r"\s*[\r\n]+\s*", " ", message).strip())


class Source(NamedTuple):
    """Where a value came from: the layer and its file, variable name, or flag."""

    layer: LayerName
    location: str

    def describe(self) -> str:
        """`/abs/file.toml`, `ENV NAME`, `CLI --flag` or `built-in default`."""
        if self.layer == "env":
            return f"ENV {self.location}"
        if self.layer == "cli":
            return f"CLI {self.location}"
        if self.layer == "builtin":
            return "built-in default"
        return self.location


def is_secret_key(name: str) -> bool:
    """Keys whose values are never shown: `api_key` and anything like key/token/secret/password.

    `max_tokens` and friends are counts, not tokens, and stay visible.
    """
    return bool(_SECRET_WORD.search(name))


def dotted(path: Iterable[str]) -> str:
    """`models.aliases."gpt-4.1"`: a TOML-style dotted key, quoting segments that need it."""
    return ".".join(p if _BARE_KEY.match(p) else json.dumps(p, ensure_ascii=False) for p in path)


class MergedConfig:
    """The layers merged so far, with the source of every leaf (lists are leaves)."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.sources: dict[KeyPath, Source] = {}

    def assign(self, path: KeyPath, value: object, source: Source) -> None:
        """Apply one layer's value at `path`: tables merge, anything else replaces."""
        if isinstance(value, Mapping):
            self._table(path)
            for key, item in value.items():
                self.assign((*path, str(key)), item, source)
            return
        parent = self._table(path[:-1])
        self._forget(path)
        parent[path[-1]] = copy.deepcopy(value)
        self.sources[path] = source

    def _table(self, path: KeyPath) -> dict[str, Any]:
        node = self.data
        for depth, part in enumerate(path):
            child = node.get(part)
            if not isinstance(child, dict):
                self._forget(path[: depth + 1])
                child = node[part] = {}
            node = child
        return node

    def _forget(self, prefix: KeyPath) -> None:
        for key in [k for k in self.sources if k[: len(prefix)] == prefix]:
            del self.sources[key]

    def value_at(self, path: KeyPath) -> Any:
        """The merged raw value at `path` (KeyError if absent)."""
        node: Any = self.data
        for part in path:
            if not isinstance(node, dict):
                raise KeyError(path)
            node = node[part]
        return node

    def sources_under(self, prefix: KeyPath) -> list[Source]:
        """Distinct sources of the leaves at or below `prefix`, in first-seen order."""
        found = [s for k, s in self.sources.items() if k[: len(prefix)] == prefix]
        return list(dict.fromkeys(found))


class _Collector:
    """Stands in for a dynaconf `Settings` when its TOML loader runs.

    The loader hands us the parsed file (top-level keys upper-cased) through `update`; we keep
    the values exactly as TOML gave them: no @-casting, no dotted-key splitting, no boxing,
    no `dynaconf_merge` semantics (such keys come back as ordinary, hence unknown, keys).
    """

    filter_strategy = None
    current_env = "_envless"
    _NO_LOOKUP = object()

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.__core__ = SimpleNamespace(config=SimpleNamespace(loaded_files=[]))

    def get(self, key: str, default: object = None) -> object:
        settings = {
            "ENVIRONMENTS_FOR_DYNACONF": False,
            "AUTO_CAST_FOR_DYNACONF": False,
            "DOTTED_LOOKUP_FOR_DYNACONF": self._NO_LOOKUP,
        }
        return settings.get(key, default)

    def update(
        self, data: Mapping[str, Any], *, merge: object = None, dotted_lookup: object = None, **_: object
    ) -> None:
        from dynaconf.utils.functional import empty

        for key, value in data.items():
            self.data[str(key).lower()] = value
        if merge is not empty and merge is not None:
            self.data["dynaconf_merge"] = merge
        if dotted_lookup is not self._NO_LOOKUP:
            self.data["dynaconf_dotted_lookup"] = dotted_lookup

    def set(self, key: str, value: object, **_: object) -> None:
        self.data[str(key).lower()] = value


def _read_config_bytes(path: Path) -> bytes:
    """The bytes of a config file; ConfigError for anything but a regular file of at most MAX_CONFIG_BYTES.

    A repository's `.agentcli/config.toml` may be a named pipe or a symlink to `/dev/zero`: opened
    without blocking, checked with fstat, and read only up to the cap, it can neither hang nor fill memory.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"cannot read {path}: not a regular file")
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"cannot read {path}: larger than {MAX_CONFIG_BYTES // 1024} KiB")
    return data


def read_toml(path: Path) -> dict[str, Any]:
    """Read one TOML layer with dynaconf's TOML loader; ConfigError if unreadable or invalid."""
    try:
        text = _read_config_bytes(path).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"cannot parse {path}: not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    from dynaconf.loaders import toml_loader

    collector = _Collector()
    try:
        # Handing dynaconf the text, not the path: given a path it only warns when the file cannot
        # be opened, falls back to another TOML library on bad encodings, and treats a name without
        # a .toml suffix as TOML text. The trailing newline keeps text ending in ".toml" from being
        # taken for a file name.
        toml_loader.load(collector, env="_envless", filename=[text + "\n"], silent=False)
    except ValueError as exc:  # tomllib.TOMLDecodeError (dynaconf's vendored copy) is a ValueError
        raise ConfigError(f"cannot parse {path}: {exc}") from None
    except RecursionError:  # the parser recurses per level: `a = [[[[...]]]]` thousands deep
        raise ConfigError(f"cannot parse {path}: values nested more than {MAX_DEPTH} levels deep") from None
    if too_deep(collector.data):
        raise ConfigError(f"cannot parse {path}: values nested more than {MAX_DEPTH} levels deep")
    return collector.data


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether tables and arrays nest deeper than `limit` (checked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping):
            children: Iterable[object] = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_env_value(raw: str, *, want_string: bool) -> object:
    """An environment value as a TOML literal where it parses (`3`, `true`, `["Bash"]`), else the string.

    Uses dynaconf's parser with auto-casting off, so `@int`, `@format`, `@jinja`... stay text.
    Where the schema wants a string the raw text is kept (an API key `12345` stays a string).
    """
    if "\n" in raw or "\r" in raw:
        return raw  # the TOML trick would parse only the first line
    from dynaconf.utils.parse_conf import boolean_fix, parse_conf_data

    try:
        value = parse_conf_data(
            boolean_fix(raw), tomlfy=True, box_settings={"AUTO_CAST_FOR_DYNACONF": False, "DYNABOXIFY": False}
        )
    except RecursionError:
        return raw  # nested thousands deep: kept as text, which the schema then names
    if too_deep(value):
        return raw
    if want_string and not isinstance(value, str):
        return raw
    return value


def env_assignments(
    env: Mapping[str, str], sections: frozenset[str], want_string: Callable[[KeyPath], bool]
) -> Iterator[tuple[KeyPath, object, Source]]:
    """The environment layer: seed 002's `LLM_*` variables, then `AGENTCLI_SECTION__KEY` ones.

    `AGENTCLI_` names are case-insensitive. A variable is configuration when it nests (`__`) or
    names a top-level section; others (`AGENTCLI_SOMETHING_ELSE`) belong to other code and are
    skipped. Empty seed variables count as unset.
    """
    for name, path in SEED_ENV_VARS.items():
        value = env.get(name, "").strip()
        if value:
            yield path, value, Source("env", name)
    ours = sorted(name for name in env if name.upper().startswith(ENV_PREFIX))
    for name in ours:
        path = tuple(name[len(ENV_PREFIX) :].lower().split(ENV_NESTING))
        if len(path) == 1 and path[0] not in sections:
            continue
        if not all(path):
            raise ConfigError(f"cannot map environment variable {name} to a config key (empty part around '__')")
        yield path, parse_env_value(env[name], want_string=want_string(path)), Source("env", name)


def override_assignments(
    overrides: Mapping[str, object], origins: Mapping[str, str]
) -> Iterator[tuple[KeyPath, object, Source]]:
    """The command-line layer: dotted keys to values; None means "flag not given"."""
    for key, value in overrides.items():
        if value is None:
            continue
        path = tuple(key.split("."))
        if not all(path):
            raise ConfigError(f"bad override key {key!r}: expected a dotted key like 'models.main.model'")
        yield path, value, Source("cli", origins.get(key, key))
