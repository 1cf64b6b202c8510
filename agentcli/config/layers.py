"""What each config layer says, before dynaconf merges the layers (`agentcli.config.merge`).

A file layer is a guarded read (`read_config_text`: regular files of at most 1 MiB only, never a FIFO or a
device) parsed by the standard library's `tomllib`, as dynaconf's own TOML loader parses; agentcli reads the
file itself because dynaconf's loader opens whatever path it is given. The environment layer
(`env_assignments`) reads the mapping `load_config` is given (`AGENTCLI_SECTION__KEY`, names case-insensitive,
and seed 002's `LLM_*` / `LIGHT_LLM_*`), names the variable behind every value, and has dynaconf parse each
value as a TOML literal (`parse_env_value`). The command-line layer is `override_assignments`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

LayerName = Literal["default", "claude", "user", "project", "config-file", "env", "cli", "builtin"]
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
_PARSE_OPTIONS = {"AUTO_CAST_FOR_DYNACONF": False, "DYNABOXIFY": False}
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


def leaves(value: object, path: KeyPath = ()) -> Iterator[tuple[KeyPath, object]]:
    """Every leaf under `value`: tables recurse, lists and empty tables are leaves."""
    if isinstance(value, Mapping) and (value or not path):
        for key, item in value.items():
            yield from leaves(item, (*path, str(key)))
    else:
        yield path, value


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
    """An environment value as a TOML literal where it parses (`3`, `true`, `["Bash"]`), else the text.

    dynaconf parses it (`parse_conf_data` with `tomlfy`, as its environment loader does; casting tokens off, so
    `@int 3` and `@format ...` stay text). `True`/`False` (as shells often spell them) count as booleans. Kept
    as text: where the schema wants a string (an API key `12345`), a value of several lines (it would parse as
    its first line), and one nested more than `MAX_DEPTH` levels.
    """
    if want_string or "\n" in raw or "\r" in raw:
        return raw
    from dynaconf.utils.parse_conf import parse_conf_data

    text = raw.strip().lower() if raw.strip() in ("True", "False") else raw
    try:
        value = parse_conf_data(text, tomlfy=True, box_settings=_PARSE_OPTIONS)
    except RecursionError:
        return raw  # nested thousands deep: kept as text, which the schema then names
    if value is text or too_deep(value):
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
