"""One plugin folder as Claude Code lays it out, read into a `Plugin`.

A plugin is a folder with `.claude-plugin/plugin.json` (only `name` is required, kebab-case). Its parts sit in
default places, which the manifest's own paths add to (never replace):

- `commands/` (`*.md`, sub-folders namespace them), `agents/` (`*.md`), `skills/<name>/SKILL.md`,
  `output-styles/` (`*.md`);
- `hooks/hooks.json` (`{"hooks": {Event: [...]}}`, the settings files' shape) or `"hooks"` inline;
- `.mcp.json` (`{"mcpServers": {...}}`, or the servers at the top level) or `"mcpServers"` inline;
- `.lsp.json` (language servers by name: `command`, `args`, `extensionToLanguage`, `env`, ...) or `"lspServers"`.

A manifest's paths must start with `./` and stay inside the plugin (no `..`, no absolute path, and a symlink
that leaves the folder is refused): a plugin names files of its own, never the person's. `${CLAUDE_PLUGIN_ROOT}`
in a hook command or a server's strings is the plugin's folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from agentcli.config import ConfigError, read_config_text
from agentcli.text import one_line

#: Who turned it on: the person (installed, or their settings), a trusted project's settings, or --plugin-dir.
PluginScope = Literal["user", "project", "session"]
MANIFEST = ".claude-plugin/plugin.json"
#: The fields that name a plugin's parts, in a manifest or a marketplace entry.
COMPONENTS = ("commands", "agents", "skills", "outputStyles", "hooks", "mcpServers", "lspServers")
ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"
#: Claude Code's rule for a plugin's name: it prefixes commands, agents, skills and servers.
NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class PluginError(ValueError):
    """A plugin, marketplace or store that cannot be used; `str()` is the one line saying what and where."""


@dataclass(frozen=True, slots=True)
class Plugin:
    """A plugin's folder and the parts it brings, its paths resolved inside the folder."""

    name: str
    root: Path  # resolved
    scope: PluginScope
    plugin_id: str  # `name@marketplace`, or the folder for --plugin-dir
    version: str = ""
    description: str = ""
    commands: tuple[Path, ...] = ()  # folders or single files
    agents: tuple[Path, ...] = ()
    skills: tuple[Path, ...] = ()  # folders of skill folders, or one skill folder
    output_styles: tuple[Path, ...] = ()  # folders of style files, or one file
    hooks: Mapping[str, Any] = field(default_factory=dict)  # {Event: [groups]}, as written (`expand` them)
    hooks_origin: str = ""
    servers: Mapping[str, Any] = field(default_factory=dict)  # {name: definition}, as written (`expand` them)
    servers_origin: str = ""
    language_servers: Mapping[str, Any] = field(default_factory=dict)  # {name: .lsp.json definition}, as written
    warnings: tuple[str, ...] = ()

    def expand(self, value: Any) -> Any:
        """`value` (its hooks, a server's definition) with `${CLAUDE_PLUGIN_ROOT}` as the plugin's folder."""
        return expand_root(value, self.root)

    def server_name(self, name: str) -> str:
        """A server's session-wide name, Claude Code's `plugin_<plugin>_<server>`."""
        return f"plugin_{self.name}_{name}"


def read_json(path: Path, what: str) -> Any:
    """A JSON file read as a config file is (a regular file of at most 1 MiB); PluginError with the reason."""
    try:
        text = read_config_text(path)
    except FileNotFoundError:
        raise PluginError(f"{what}: {path} not found") from None
    except ConfigError as exc:
        raise PluginError(f"{what}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = one_line(getattr(exc, "strerror", None) or exc, 120)
        raise PluginError(f"{what}: cannot read {path}: {why}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PluginError(f"{what}: {path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None


def inside(root: Path, relative: str, what: str, within: str = "the plugin") -> Path:
    """`relative` (a manifest's `./path`) resolved inside `root` (resolved, `within`); PluginError when it leaves
    it."""
    if not isinstance(relative, str) or not relative.strip():
        raise PluginError(f"{what}: a path must be a non-empty string")
    text = relative.strip()
    pure = PurePosixPath(text)
    if pure.is_absolute() or "\\" in text or ".." in pure.parts:
        raise PluginError(f"{what}: {one_line(text, 80)!r} must be a './' path inside {within}")
    try:
        target = (root / pure).resolve()
    except (OSError, RuntimeError) as exc:
        raise PluginError(f"{what}: cannot resolve {one_line(text, 80)!r}: {exc}") from None
    if not target.is_relative_to(root):
        raise PluginError(f"{what}: {one_line(text, 80)!r} leads outside {within} (to {target})")
    return target


def plugin_name_problem(name: object) -> str | None:
    """Why `name` cannot name a plugin, or None."""
    if not isinstance(name, str) or NAME.fullmatch(name) is None:
        return f"the name {one_line(str(name), 60)!r} is not lowercase letters, digits and hyphens (1-64)"
    return None


def _paths(root: Path, default: str, value: object, what: str, warnings: list[str],
           defaults: bool = True) -> tuple[Path, ...]:
    """The default place (when it exists, and `defaults`) and the manifest's extra paths, each once."""
    found: list[Path] = []
    if defaults and (root / default).exists():
        found.append(inside(root, default, what))
    extra = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    if value is not None and not isinstance(value, str | list):
        warnings.append(f"'{what}' ignored: expected a path or a list of paths")
    for item in extra:
        try:
            path = inside(root, item, what)
        except PluginError as exc:
            warnings.append(str(exc))
            continue
        if path.exists() and path not in found:
            found.append(path)
        elif not path.exists():
            warnings.append(f"{what}: {one_line(str(item), 80)!r} does not exist")
    return tuple(found)


def expand_root(value: Any, root: Path) -> Any:
    """`value` (JSON) with `${CLAUDE_PLUGIN_ROOT}` replaced by the plugin's folder in every string."""
    if isinstance(value, str):
        return value.replace(ROOT_VARIABLE, str(root))
    if isinstance(value, list):
        return [expand_root(item, root) for item in value]
    if isinstance(value, dict):
        return {key: expand_root(item, root) for key, item in value.items()}
    return value


def _hooks(root: Path, value: object, warnings: list[str], defaults: bool = True) -> tuple[dict[str, Any], str]:
    """The hooks by event: `hooks/hooks.json` (with `defaults`), and the manifest's (a path, or inline)."""
    hooks: dict[str, Any] = {}
    origins: list[str] = []
    sources: list[tuple[object, str]] = []
    if defaults and (root / "hooks" / "hooks.json").is_file():
        sources.append(("./hooks/hooks.json", "hooks"))
    if value is not None:
        sources.append((value, "hooks"))
    for source, what in sources:
        try:
            if isinstance(source, str):
                path = inside(root, source, what)
                if str(path) in origins:
                    continue
                doc, origin = read_json(path, what), str(path)
            else:
                doc, origin = {"hooks": source}, f"{root / MANIFEST} (hooks)"
        except PluginError as exc:
            warnings.append(str(exc))
            continue
        events = doc.get("hooks") if isinstance(doc, dict) else None
        if not isinstance(events, dict):
            warnings.append(f"{origin}: expected an object with \"hooks\" by event")
            continue
        origins.append(origin)
        for event, groups in events.items():
            hooks.setdefault(str(event), []).extend(groups if isinstance(groups, list) else [groups])
    return hooks, ", ".join(origins)


def _servers(root: Path, value: object, warnings: list[str], defaults: bool = True, *, default: str = "./.mcp.json",
             key: str = "mcpServers", kind: str = "MCP servers") -> tuple[dict[str, Any], str]:
    """Servers by name: the `default` file (with `defaults`; `{key: {...}}`, or the servers at the top level), and
    the manifest's `key` (a path, or inline)."""
    servers: dict[str, Any] = {}
    origins: list[str] = []
    sources: list[object] = [default] if defaults and (root / default).is_file() else []
    if value is not None:
        sources.append(value)
    for source in sources:
        try:
            if isinstance(source, str):
                path = inside(root, source, key)
                if str(path) in origins:
                    continue
                doc, origin = read_json(path, key), str(path)
            else:
                doc, origin = source, f"{root / MANIFEST} ({key})"
        except PluginError as exc:
            warnings.append(str(exc))
            continue
        if isinstance(doc, dict) and isinstance(doc.get(key), dict):
            doc = doc[key]
        if not isinstance(doc, dict):
            warnings.append(f"{origin}: expected an object of {kind}")
            continue
        origins.append(origin)
        for name, definition in doc.items():
            servers.setdefault(str(name), definition)
    return servers, ", ".join(origins)


def _language_servers(root: Path, value: object, warnings: list[str],
                      defaults: bool = True) -> tuple[dict[str, Any], str]:
    """The language servers by name (`.lsp.json` and the manifest's `lspServers`), those agentcli can run: a
    `command`, an `extensionToLanguage` object, string `args` and `env`, stdio (a socket transport is skipped)."""
    found, origin = _servers(root, value, warnings, defaults, default="./.lsp.json", key="lspServers",
                             kind="language servers")
    usable: dict[str, Any] = {}
    for name, server in found.items():
        problem = _language_server_problem(server)
        if problem:
            warnings.append(f"language server {one_line(name, 60)!r} ({origin}) skipped: {problem}")
        else:
            usable[name] = server
    return usable, origin


def _language_server_problem(server: object) -> str:
    if not isinstance(server, dict):
        return "not an object"
    if not isinstance(server.get("command"), str) or not server["command"].strip():
        return "'command' must be a non-empty string"
    extensions = server.get("extensionToLanguage")
    if not isinstance(extensions, dict) or not extensions or not all(
            isinstance(k, str) and k.startswith(".") and isinstance(v, str) for k, v in extensions.items()):
        return "'extensionToLanguage' must map extensions ('.py') to language ids"
    args = server.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return "'args' must be a list of strings"
    env = server.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        return "'env' must be an object of strings"
    if not isinstance(server.get("initializationOptions", {}), dict):
        return "'initializationOptions' must be an object"
    if server.get("transport", "stdio") != "stdio":
        return "only the stdio transport is run by agentcli"
    return ""


def with_entry(manifest: dict[str, Any], entry: Mapping[str, Any] | None) -> tuple[dict[str, Any], bool]:
    """The manifest with the marketplace entry the plugin was installed from applied (`{"strict": …, parts…}`),
    and whether the default places count. A `strict: false` entry is the whole definition: only what it lists
    loads, never the default places (a marketplace whose plugins share one folder lists each one's part of it).
    Otherwise the entry's parts fill in those the manifest does not name."""
    if not entry:
        return manifest, True
    parts = {key: entry[key] for key in COMPONENTS if key in entry}
    if entry.get("strict") is False:
        return {**{k: v for k, v in manifest.items() if k not in COMPONENTS}, **parts}, False
    return {**parts, **manifest}, True


def read_plugin(folder: Path, *, scope: PluginScope, plugin_id: str = "", name: str = "",
                entry: Mapping[str, Any] | None = None) -> Plugin:
    """The plugin in `folder`. Without a manifest its name is `name` (a marketplace's entry) or the folder's.
    `entry`: the marketplace entry agentcli's store installed it from (`with_entry`). Raises PluginError when it
    cannot be used at all; what is only skipped is in `warnings`."""
    try:
        root = folder.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise PluginError(f"plugin {folder}: not found ({getattr(exc, 'strerror', None) or exc})") from None
    if not root.is_dir():
        raise PluginError(f"plugin {folder}: not a folder")
    manifest: dict[str, Any] = {}
    if (root / MANIFEST).exists():
        doc = read_json(inside(root, "./" + MANIFEST, "plugin.json"), f"plugin {folder}")
        if not isinstance(doc, dict):
            raise PluginError(f"plugin {folder}: {MANIFEST} must be an object")
        manifest = doc
    manifest, defaults = with_entry(manifest, entry)
    plugin_name = manifest.get("name", name or root.name)
    if problem := plugin_name_problem(plugin_name):
        raise PluginError(f"plugin {folder}: {problem}")
    warnings: list[str] = []
    hooks, hooks_origin = _hooks(root, manifest.get("hooks"), warnings, defaults)
    servers, servers_origin = _servers(root, manifest.get("mcpServers"), warnings, defaults)
    language_servers, _ = _language_servers(root, manifest.get("lspServers"), warnings, defaults)
    return Plugin(
        name=plugin_name, root=root, scope=scope, plugin_id=plugin_id or str(root),
        version=one_line(str(manifest.get("version") or ""), 40),
        description=one_line(str(manifest.get("description") or ""), 300),
        commands=_paths(root, "commands", manifest.get("commands"), "commands", warnings, defaults),
        agents=_paths(root, "agents", manifest.get("agents"), "agents", warnings, defaults),
        skills=_paths(root, "skills", manifest.get("skills"), "skills", warnings, defaults),
        output_styles=_paths(root, "output-styles", manifest.get("outputStyles"), "outputStyles", warnings, defaults),
        hooks=hooks, hooks_origin=hooks_origin, servers=servers, servers_origin=servers_origin,
        language_servers=language_servers, warnings=tuple(warnings),
    )
