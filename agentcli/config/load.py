"""Layered configuration: load, validate, explain where each value came from.

Layers, later wins: the shipped `default_config.toml` → `$XDG_CONFIG_HOME/agentcli/config.toml`
→ `<workspace>/.agentcli/config.toml` → `--config FILE` → environment (seed 002's `LLM_*`,
then `AGENTCLI_SECTION__KEY`) → command-line overrides. What each layer says is read by
`agentcli.config.layers` (and narrowed by `agentcli.config.untrusted` for an untrusted project); keys the
schema does not know are refused here, by name and origin; dynaconf merges the rest
(`agentcli.config.merge`: tables merge, scalars and lists replace) and keeps the history `config show`
reads each value's origin from; pydantic-settings validates the merged tables into `Settings`.

Importing this module is cheap (`agentcli --help` must stay fast): dynaconf, pydantic-settings and the
schema are imported on first use. `Settings`, `ModelSettings`… resolve lazily.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli import paths, resources
from agentcli.config.layers import (
    ConfigError,
    KeyPath,
    LayerName,
    Source,
    dotted,
    env_assignments,
    override_assignments,
    read_toml,
)
from agentcli.config.values import leaves, show_value

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

    from agentcli.config.additional_dirs import AdditionalDir
    from agentcli.config.claude_settings import ClaudePermissions
    from agentcli.config.merge import LayerStack
    from agentcli.config.schema import (
        AgentSettings,
        LightModelSettings,
        LlmSettings,
        LoggingSettings,
        ModelSettings,
        ModelsSettings,
        PermissionsSettings,
        Settings,
        TaskToolSettings,
    )

__all__ = [
    "AgentSettings",
    "ConfigError",
    "LayerName",
    "LightModelSettings",
    "LlmSettings",
    "LoadedConfig",
    "LoggingSettings",
    "ModelSettings",
    "ModelsSettings",
    "PermissionsSettings",
    "Settings",
    "Source",
    "TaskToolSettings",
    "load_config",
]

_LAZY_SCHEMA_NAMES = frozenset(
    {
        "AgentSettings",
        "LightModelSettings",
        "LlmSettings",
        "LoggingSettings",
        "ModelSettings",
        "ModelsSettings",
        "PermissionsSettings",
        "Settings",
        "TaskToolSettings",
    }
)
BUILTIN = Source("builtin", "agentcli.config.schema")


def __getattr__(name: str) -> Any:
    """Resolve the pydantic models on first use, keeping `import agentcli.config.load` light."""
    if name in _LAZY_SCHEMA_NAMES:
        from agentcli.config import schema as config_schema

        return getattr(config_schema, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class LoadedConfig:
    """Validated settings plus where every value came from."""

    settings: Settings
    layers: list[Source]
    workspace: Path | None = None
    trusted: bool = True
    #: Keys of the project file not applied because the workspace is untrusted (they would widen).
    ignored: tuple[str, ...] = ()
    project_file: Path | None = None
    ignored_values: Mapping[str, object] = field(default_factory=dict, repr=False)
    #: The layers as dynaconf merged them; each value's origin is read from its history when first needed.
    stack: LayerStack | None = field(default=None, repr=False, compare=False)
    #: The permission rules of Claude Code's settings files (`claude_settings`), for `config show` (`config.show`).
    claude: ClaudePermissions | None = field(default=None, repr=False, compare=False)
    home: Path | None = field(default=None, repr=False, compare=False)  # `~` of additional directories

    @functools.cached_property
    def provenance(self) -> Mapping[str, Source]:
        """Every effective leaf (`"task_tool.max_depth"`) with its layer and location; `builtin` where no layer
        sets it."""
        origins = self.stack.provenance() if self.stack is not None else {}
        return {dotted(path): origins.get(path, BUILTIN) for path, _ in leaves(self.settings)}

    @functools.cached_property
    def additional_dirs(self) -> tuple[list[AdditionalDir], list[str]]:
        """The usable additional directories (`additional_dirs`) with where each was named, and one line per
        skipped one."""
        from agentcli.config.additional_dirs import session_additional_dirs

        configured = self.settings.permissions.additional_directories
        location = self.source_of("permissions.additional_directories").location if configured else ""
        claude = self.claude.directories if self.claude is not None else []
        return session_additional_dirs(self.workspace or Path.cwd(), configured, claude, location, self.home)

    def ignored_settings(self) -> list[str]:
        """`key = value` of each ignored project setting, secrets redacted (for the TUI's trust prompt)."""
        items = self.ignored_values.items()
        return [f"{key} = {show_value(tuple(key.split(' ')[0].split('.')), value)}" for key, value in items]

    def claude_ignored(self) -> list[str]:
        """`permissions.allow from /ws/.claude/settings.json`: what an untrusted project's Claude Code settings
        may not set (they would widen), grouped by file."""
        by_file: dict[str, list[str]] = {}
        for source, key in self.claude.ignored if self.claude is not None else ():
            by_file.setdefault(source, []).append(f"permissions.{key}")
        return [f"{', '.join(keys)} from {source}" for source, keys in by_file.items()]

    def ignored_parts(self) -> list[str]:
        """`X, Y from FILE`, one per file whose settings trust would apply."""
        parts = [f"{', '.join(self.ignored)} from {self.project_file}"] if self.ignored and self.project_file else []
        return parts + self.claude_ignored()

    def untrusted_warning(self) -> str | None:
        """The one warning line naming the ignored project keys, the file and the fix; None if none."""
        parts = self.ignored_parts()
        if not parts:
            return None
        if self.workspace is not None:
            ws = self.workspace
        else:
            ws = self.project_file.parent.parent if self.project_file is not None else Path.cwd()
        return (
            f"untrusted workspace {ws}: ignored {'; '.join(parts)} "
            f"(run 'agentcli trust {shlex.quote(str(ws))}' to apply them)"
        )

    def source_of(self, key: str) -> Source:
        """The layer and location of an effective leaf value, e.g. `"task_tool.max_depth"`."""
        try:
            return self.provenance[key]
        except KeyError:
            raise KeyError(f"no config value {key!r}") from None


def load_config(
    workspace: Path,
    config_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
    *,
    override_origins: Mapping[str, str] | None = None,
    trusted: bool = False,
    claude_sources: frozenset[str] | None = None,
) -> LoadedConfig:
    """Read, merge and validate every layer; ConfigError (one line) on any problem.

    Unless `trusted`, the project file may only narrow what agentcli may do (see
    `agentcli.config.untrusted`); what it could not set is in `LoadedConfig.ignored`.
    `overrides` maps dotted keys to values (None values are skipped); `override_origins` may
    name the flag each came from (`{"models.main.model": "--model"}`) for messages and
    `config show`. Claude Code's settings files (`claude_settings`; `claude_sources` limits which, as its
    `--setting-sources` does) give `permissions.mode` a layer of its own under the user file.
    """
    from agentcli.config import schema_paths
    from agentcli.config.claude_settings import read_claude_permissions
    from agentcli.config.merge import LayerStack

    env = os.environ if env is None else env
    stack = LayerStack()
    unknown: dict[KeyPath, list[Source]] = {}

    workspace = Path(workspace).expanduser().absolute()
    project_file = paths.project_config_file(workspace)
    files = _config_files(env, project_file, config_file)
    claude = read_claude_permissions(workspace, trusted=trusted, env=env, sources=claude_sources)
    layers, ignored = _apply_files(stack, files, claude, trusted, unknown)

    sections = schema_paths.top_level_sections()
    assignments = [
        *env_assignments(env, sections, schema_paths.expects_string),
        *override_assignments(overrides or {}, override_origins or {}),
    ]
    for key_path, value, source in assignments:
        _apply(stack, key_path, value, source, unknown)
        layers.append(source)

    settings = _validate(stack, unknown)
    return LoadedConfig(
        settings=settings,
        layers=layers,
        workspace=workspace,
        trusted=trusted,
        ignored=tuple(ignored),
        project_file=project_file if ignored else None,
        ignored_values=ignored,
        stack=stack,
        claude=claude,
        home=Path(env["HOME"]) if env.get("HOME") else None,
    )


def _config_files(
    env: Mapping[str, str], project_file: Path, config_file: Path | None
) -> list[tuple[LayerName, Path, bool]]:
    """The config files in layer order, each with whether it must exist; ConfigError for a wrong `--config`."""
    files: list[tuple[LayerName, Path, bool]] = [
        ("default", resources.default_config_path(), True),
        ("user", paths.user_config_file(env), False),
        ("project", project_file, False),
    ]
    if config_file is not None:
        explicit = Path(config_file).expanduser().absolute()
        if not explicit.exists():
            raise ConfigError(f"--config file {explicit} does not exist")
        if not explicit.is_file():
            raise ConfigError(f"--config file {explicit} is not a file")
        files.append(("config-file", explicit, True))
    return files


def _apply_files(
    stack: LayerStack,
    files: list[tuple[LayerName, Path, bool]],
    claude: ClaudePermissions,
    trusted: bool,
    unknown: dict[KeyPath, list[Source]],
) -> tuple[list[Source], dict[str, object]]:
    """Apply each file's layer (Claude Code's defaultMode under the user file; an untrusted project's narrowed):
    the layers applied, and the project values left out."""
    layers: list[Source] = []
    ignored: dict[str, object] = {}
    for layer, path, required in files:
        if layer == "user" and claude.mode is not None:  # Claude Code's defaultMode, under agentcli's own files
            source = Source("claude", claude.mode_source)
            _apply(stack, ("permissions", "mode"), claude.mode, source, unknown)
            layers.append(source)
        if not required and not path.exists():
            continue
        source = Source(layer, str(path))
        data = read_toml(path)
        if layer == "project" and not trusted:
            from agentcli.config.untrusted import MISSING, narrow_project_layer

            kept, ignored = narrow_project_layer(data, functools.partial(_lookup, stack.data(), missing=MISSING))
        else:
            kept = [((str(key),), value) for key, value in data.items()]
        for key_path, value in kept:
            _apply(stack, key_path, value, source, unknown)
        layers.append(source)
    return layers, ignored


_DROP = object()


def _apply(
    stack: LayerStack, path: KeyPath, value: object, source: Source, unknown: dict[KeyPath, list[Source]]
) -> None:
    """Hand one layer's value to dynaconf, without the keys the schema does not know (noted in `unknown`).

    Keys are matched exactly: dynaconf matches keys case-insensitively when it merges, so `permissions.Allow`
    must never reach it as `permissions.allow`. Unknown top-level keys never reach it at all (`_secrets_dir`,
    `AUTO_CAST_FOR_DYNACONF`: options of pydantic-settings and of dynaconf).
    """
    known = _known(path, value, source, unknown)
    if known is not _DROP:
        stack.apply(path, known, source)


def _known(path: KeyPath, value: object, source: Source, unknown: dict[KeyPath, list[Source]]) -> object:
    from agentcli.config.schema_paths import table_keys

    for depth in range(len(path)):
        keys = table_keys(path[:depth])
        if keys is not None and path[depth] not in keys:
            unknown.setdefault(path[: depth + 1], []).append(source)
            return _DROP
    if not isinstance(value, Mapping) or table_keys(path) is None:
        return value
    kept = {}
    for key, item in value.items():
        known = _known((*path, str(key)), item, source, unknown)
        if known is not _DROP:
            kept[str(key)] = known
    return kept


def _lookup(data: Mapping[str, Any], path: KeyPath, missing: object) -> Any:
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return missing
        node = node[part]
    return node


class _Origins:
    """The merged tables and each leaf's origin, for error messages."""

    def __init__(self, data: Mapping[str, Any], sources: Mapping[KeyPath, Source]) -> None:
        self.data = data
        self.sources = sources

    def value_at(self, path: KeyPath) -> Any:
        found = _lookup(self.data, path, _DROP)
        if found is _DROP:
            raise KeyError(path)
        return found

    def sources_under(self, prefix: KeyPath) -> list[Source]:
        found = [s for k, s in self.sources.items() if k[: len(prefix)] == prefix]
        return list(dict.fromkeys(found))


def _validate(stack: LayerStack, unknown: Mapping[KeyPath, list[Source]]) -> Settings:
    """Validate the merged tables; every problem goes into one ConfigError line."""
    from pydantic import ValidationError

    from agentcli.config.schema import Settings

    problems = [_unknown_key(names, list(dict.fromkeys(sources))) for names, sources in unknown.items()]
    data = stack.data()
    try:
        settings = Settings(**data)
    except ValidationError as exc:
        merged = _Origins(data, stack.provenance())
        problems += [_describe_error(err, merged) for err in exc.errors(include_url=False)]
        raise ConfigError("; ".join(dict.fromkeys(problems))) from None
    if problems:
        raise ConfigError("; ".join(problems))
    return settings


def _unknown_key(names: KeyPath, sources: list[Source]) -> str:
    return f"{dotted(names)} ({_where(sources)}): unknown key{_suggest(names)}"


def _describe_error(err: ErrorDetails, merged: _Origins) -> str:
    loc = tuple(err["loc"])
    names = tuple(str(part) for part in loc)
    if err["type"] == "extra_forbidden":
        return _unknown_key(names, merged.sources_under(names))
    if err["type"] == "cross_field":
        ctx = err.get("ctx") or {}
        first, other = (*names, str(ctx["field"])), (*names, str(ctx["other"]))
        return f"{_key_value(first, merged)}: must be <= {_key_value(other, merged)}"
    message = err["msg"].removeprefix("Value error, ")
    leaf = next((loc[:n] for n in range(len(loc), 0, -1) if loc[:n] in merged.sources), None)
    if leaf is None:
        sources = merged.sources_under(names)
        return f"{dotted(names)}{f' ({_where(sources)})' if sources else ''}: {message}"
    leaf_names = tuple(str(part) for part in leaf)
    rest = loc[len(leaf) :]
    if rest == ("[key]",):
        return f"{dotted(leaf_names)} ({_where([merged.sources[leaf_names]])}): {message}"
    key = dotted(leaf_names) + "".join(f"[{part}]" for part in rest)
    value = err["input"] if rest else merged.value_at(leaf_names)
    return f"{key} = {show_value(leaf_names, value)} ({_where([merged.sources[leaf_names]])}): {message}"


def _key_value(path: KeyPath, merged: _Origins) -> str:
    try:
        value = merged.value_at(path)
    except KeyError:
        return dotted(path)
    source = merged.sources.get(path, BUILTIN)
    return f"{dotted(path)} = {show_value(path, value)} ({_where([source])})"


def _where(sources: list[Source]) -> str:
    return "from " + ", ".join(s.describe() for s in sources) if sources else "from unknown source"


def _suggest(path: KeyPath) -> str:
    import difflib

    from agentcli.config.schema_paths import known_keys

    close = difflib.get_close_matches(path[-1], known_keys(path[:-1]), n=1)
    return f" (did you mean {dotted((*path[:-1], close[0]))}?)" if close else ""
