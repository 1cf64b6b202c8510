"""Where MCP servers are configured, read into `ServerSpec`s; `${VAR}` / `${VAR:-default}` expansion.

Three places, as Claude Code reads them:

- `<workspace>/.mcp.json`: `{"mcpServers": {NAME: {"command", "args", "env"} | {"type": "http", "url",
  "headers"}}}` (project: started only in a trusted workspace);
- `[mcp.servers.NAME]` in agentcli's config (user, or a trusted project's `.agentcli/config.toml`);
- a loaded plugin's `.mcp.json` or manifest `mcpServers` (`plugin_servers`: named `plugin_<plugin>_<server>`);
- an agent file's `mcpServers:` front matter: a list of names of servers configured above, or of
  `{NAME: {...}}` definitions (a project agent file's are project servers).

A later place does not replace a server of an earlier one with the same name: the person's own config
wins over `.mcp.json`, which wins over an agent file's definition. Strings are expanded when the server
starts, from agentcli's environment; a variable that is unset and has no default is a start error.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentcli.config import ConfigError, read_config_text
from agentcli.text import one_line

if TYPE_CHECKING:
    from agentcli.plugins import Plugin

Transport = Literal["stdio", "http", "program"]  # program: a server in the program driving agentcli
MCP_JSON = ".mcp.json"
#: A server's name becomes part of tool names (`mcp__NAME__tool`, at most 64 characters for the providers).
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class SpecError(ValueError):
    """A server definition that cannot be used; `str()` is the one line saying what and where."""


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One configured MCP server, strings not yet expanded."""

    name: str
    transport: Transport
    origin: str  # where it was configured: a file path, or `agent file PATH`
    project: bool  # defined by the workspace (needs the workspace to be trusted before it starts)
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = ""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def target(self) -> str:
        """What it runs or reaches, for listings: the command line or the URL (unexpanded, so no secret shows)."""
        if self.transport == "http":
            return self.url
        if self.transport == "program":
            return "(in the program driving agentcli)"
        return " ".join([self.command, *self.args])


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a server, or None."""
    if not _NAME.match(name):
        return "a server name is 1-32 letters, digits, '_' or '-', starting with a letter or digit"
    if "__" in name:
        return "a server name may not contain '__' (it separates the parts of mcp__server__tool)"
    return None


def expand(text: str, env: Mapping[str, str] | None = None) -> str:
    """`text` with `${VAR}` and `${VAR:-default}` replaced from `env` (os.environ by default).

    Raises SpecError naming a variable that is unset (or empty) and has no default.
    """
    env = os.environ if env is None else env

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name, "")
        if value:
            return value
        if default is not None:
            return default
        raise SpecError(f"${{{name}}} is not set (write ${{{name}:-default}} for a default)")

    return _VAR.sub(one, text)


def variables(spec: ServerSpec) -> tuple[str, ...]:
    """The environment variables `expand` reads for `spec` (command, args, env, cwd, URL, headers), in order."""
    texts = [spec.command, *spec.args, *(v for _, v in spec.env), spec.cwd, spec.url, *(v for _, v in spec.headers)]
    return tuple(dict.fromkeys(m.group(1) for text in texts for m in _VAR.finditer(text)))


def _strings(value: object, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise SpecError(f"'{what}' must be a list of strings")
    return tuple(str(v) for v in value)


def _pairs(value: object, what: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping) or not all(isinstance(v, str | int | float) for v in value.values()):
        raise SpecError(f"'{what}' must be a table of strings")
    return tuple((str(k), str(v)) for k, v in value.items())


def parse_server(name: str, raw: object, *, origin: str, project: bool) -> ServerSpec:
    """One server definition (Claude Code's shape or `[mcp.servers.NAME]`); SpecError with the reason."""
    where = f"MCP server '{one_line(name, 40)}' in {origin}"
    if problem := name_problem(name):
        raise SpecError(f"{where}: {problem}")
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where}: expected a table/object")
    try:
        kind = raw.get("type")
        url, command = raw.get("url"), raw.get("command")
        if kind is None:
            kind = "http" if url and not command else "stdio"
        if kind in ("http", "streamable-http"):
            if not isinstance(url, str) or not url.strip():
                raise SpecError("an http server needs a 'url'")
            headers = _pairs(raw.get("headers"), "headers")
            return ServerSpec(name, "http", origin, project, url=url.strip(), headers=headers)
        if kind == "sdk":  # the Claude Agent SDK's in-process server, reached through the program that runs it
            return ServerSpec(name, "program", origin, project)
        if kind == "sse":
            raise SpecError("the SSE transport is not supported (use streamable HTTP: type \"http\")")
        if kind != "stdio":
            raise SpecError(f"unknown type {one_line(kind, 40)!r} (stdio or http)")
        if not isinstance(command, str) or not command.strip():
            raise SpecError("a stdio server needs a 'command'")
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise SpecError("'cwd' must be a string")
        return ServerSpec(
            name, "stdio", origin, project, command=command.strip(), args=_strings(raw.get("args"), "args"),
            env=_pairs(raw.get("env"), "env"), cwd=cwd or "",
        )
    except SpecError as exc:
        if str(exc).startswith(where):
            raise
        raise SpecError(f"{where}: {exc}") from None


def read_mcp_json(workspace: Path) -> tuple[list[ServerSpec], list[str]]:
    """The servers of `<workspace>/.mcp.json` and the one-line problems of those that cannot be used."""
    path = workspace / MCP_JSON
    try:  # like a config file: a named pipe, a device or a huge file is one line, never a hang
        text = read_config_text(path)
    except FileNotFoundError:
        return [], []
    except ConfigError as exc:
        return [], [f"{MCP_JSON} ignored: {exc}"]
    except OSError as exc:
        return [], [f"{path}: cannot read: {exc.strerror or exc}"]
    except UnicodeDecodeError as exc:
        return [], [f"{path}: not valid JSON ({one_line(exc, 120)})"]
    try:
        doc = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        return [], [f"{path}: not valid JSON ({one_line(exc, 120)})"]
    servers = doc.get("mcpServers") if isinstance(doc, dict) else None
    if not isinstance(servers, dict):
        return [], [f"{path}: expected an object with \"mcpServers\""]
    return _parse_all(servers, origin=str(path), project=True)


def _parse_all(servers: Mapping[str, Any], *, origin: str, project: bool) -> tuple[list[ServerSpec], list[str]]:
    specs: list[ServerSpec] = []
    problems: list[str] = []
    for name, raw in servers.items():
        try:
            specs.append(parse_server(str(name), raw, origin=origin, project=project))
        except SpecError as exc:
            problems.append(str(exc))
    return specs, problems


def from_config(
    servers: Mapping[str, Mapping[str, Any]], origins: Mapping[str, tuple[str, bool]]
) -> tuple[list[ServerSpec], list[str]]:
    """The servers of `[mcp.servers]`; `origins` maps a name to (file, is the project's file)."""
    specs: list[ServerSpec] = []
    problems: list[str] = []
    for name, raw in servers.items():
        origin, project = origins.get(name, ("config", False))
        try:
            specs.append(parse_server(name, raw, origin=origin, project=project))
        except SpecError as exc:
            problems.append(str(exc))
    return specs, problems


def agent_servers(value: object, *, origin: str, project: bool) -> tuple[tuple[str, ...], list[ServerSpec], list[str]]:
    """An agent file's `mcpServers:`: (names it uses, the servers it defines, warnings).

    Accepts a list of names and `{NAME: definition}` items, or one `{NAME: definition, ...}` mapping.
    """
    if value is None:
        return (), [], []
    items: list[object] = []
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, list):
        items = value
    if not items and value not in ([], {}):
        return (), [], ["'mcpServers' ignored: expected a list of server names or definitions"]
    names: list[str] = []
    specs: list[ServerSpec] = []
    warnings: list[str] = []
    for item in items:
        pairs: list[tuple[object, object]] = []
        if isinstance(item, str):
            if problem := name_problem(item):
                warnings.append(f"mcpServers entry '{one_line(item, 40)}' ignored: {problem}")
            elif item not in names:
                names.append(item)
            continue
        if isinstance(item, tuple):
            pairs = [item]
        elif isinstance(item, Mapping):
            pairs = list(item.items())
        else:
            warnings.append("mcpServers entry ignored: expected a server name or {name: definition}")
            continue
        for name, raw in pairs:
            try:
                spec = parse_server(str(name), raw, origin=origin, project=project)
            except SpecError as exc:
                warnings.append(str(exc))
                continue
            specs.append(spec)
            if spec.name not in names:
                names.append(spec.name)
    return tuple(names), specs, warnings


def plugin_servers(plugins: Iterable[Plugin], *, project: bool = False) -> tuple[list[ServerSpec], list[str]]:
    """The plugins' MCP servers, named `plugin_<plugin>_<server>`, `${CLAUDE_PLUGIN_ROOT}` expanded (and given to a
    stdio server's environment), and the one-line problems of those that cannot be used."""
    specs: list[ServerSpec] = []
    problems: list[str] = []
    for plugin in plugins:
        for name, written in plugin.servers.items():
            raw = plugin.expand(written)
            if isinstance(raw, dict) and isinstance(raw.get("env", {}), dict) and raw.get("command"):
                raw = {**raw, "env": {"CLAUDE_PLUGIN_ROOT": str(plugin.root), **raw.get("env", {})}}
            try:
                specs.append(parse_server(plugin.server_name(name), raw, project=project,
                                          origin=f"plugin {plugin.plugin_id} ({plugin.servers_origin})"))
            except SpecError as exc:
                problems.append(str(exc))
    return specs, problems
