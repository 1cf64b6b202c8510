"""Reading the config layers and merging them with provenance.

Each file layer is a guarded read (`read_config_text`: regular files of at most 1 MiB only) parsed by
the standard library's `tomllib`. The environment layer (`env_assignments`) reads the mapping
`load_config` is given, names the variable behind every value, takes TOML literals such as
`{model = "a"}` and maps seed 002's `LLM_*` names. The merge (`MergedConfig`): tables merge deeply,
scalars and lists replace, and every leaf remembers the layer that set it, which `config show` and
every error message need. (pydantic-settings read the files here once; its sources forget where a
value came from, so all it did was call `tomllib`, for 10 ms of imports at every start.)
"""

from __future__ import annotations

import copy
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
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


def read_config_text(path: Path) -> str:
    """A config file's text, read through the guard (`_read_config_bytes`: no FIFO, device or huge file);
    UnicodeDecodeError when it is not UTF-8."""
    return _read_config_bytes(path).decode("utf-8")


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
    """Read one TOML layer (the standard library's parser); ConfigError if unreadable or invalid."""
    try:
        text = read_config_text(path)
    except UnicodeDecodeError:
        raise ConfigError(f"cannot parse {path}: not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    import tomllib

    try:
        data = tomllib.loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise ConfigError(f"cannot parse {path}: {exc}") from None
    except RecursionError:  # the parser recurses per level: `a = [[[[...]]]]` thousands deep
        raise ConfigError(f"cannot parse {path}: values nested more than {MAX_DEPTH} levels deep") from None
    if too_deep(data):
        raise ConfigError(f"cannot parse {path}: values nested more than {MAX_DEPTH} levels deep")
    return data


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

    `True`/`False` (as shells often spell them) count as booleans. Nothing is cast or interpolated:
    `@int 3`, `@format ...` stay text. Where the schema wants a string the raw text is kept (an API
    key `12345` stays a string).
    """
    if "\n" in raw or "\r" in raw:
        return raw  # the `v = ...` document below would parse only the first line
    import tomllib

    text = raw.strip().lower() if raw.strip() in ("True", "False") else raw
    try:
        value = tomllib.loads(f"v = {text}").get("v", raw)
    except tomllib.TOMLDecodeError:
        return raw
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
