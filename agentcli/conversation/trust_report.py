"""What trusting a workspace arms, said wherever trust is asked for or given.

Trust applies a project's `.agentcli/config.toml` in full (the settings an untrusted project may not set:
`LoadedConfig.ignored_settings`) and the widening permissions of its Claude Code settings (`allow`, `ask`,
`defaultMode`, `additionalDirectories`: `LoadedConfig.claude_ignored`), and lets the workspace's own hooks and
MCP servers run. The settings' keys alone hide what would run, so the TUI's prompt (`ui/widgets/trust.py`),
`agentcli trust` and the warning line of an untrusted workspace (`cli_common.load`) name, read from the
workspace's files:

- every hook command of `.claude/settings.json`, `.claude/settings.local.json` and the project config's
  `[hooks]`, as agentcli would run them (`hooks.settings`);
- every MCP server of `.mcp.json`, the project config's `[mcp.servers]` and the project's agent files
  (`mcpServers:` definitions): its command line or URL, and the headers it sends;
- every language server of the project config's `[lsp.servers]` with a `command` (`agentcli.lsp`): its command line;
- the hook commands, MCP servers and language servers of the installed plugins only the project's
  `enabledPlugins` turns on (`agentcli.plugins`);
- every environment variable those servers' settings expand from the person's environment (`${VAR}`,
  `mcp.specs.expand`), a provider key or another secret named as such.

Reading only: nothing starts and no SDK is imported; `cli_common.load` asks on every start, so the module is
cheap to import and looks at files only when one that trusting could arm exists (`may_arm`). The texts come
from the workspace: callers show them terminal-safe (`text.terminal_safe`), and they are never cut (a long
command must not hide its end).
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli import paths
from agentcli.text import one_line

if TYPE_CHECKING:
    from agentcli.config import LoadedConfig
    from agentcli.hooks import HookCommand, HookConfig
    from agentcli.mcp import ServerSpec

_AGENT_FILE_PEEK = 256 * 1024  # bytes of an agent file looked at for `mcpServers` (its front matter is smaller)
#: The project's agent folders (`subagents.registry.agent_folders`; a test holds the two together).
AGENT_FOLDERS = (".agentcli/agents", ".claude/agents", ".opencode/agents", ".opencode/agent", ".codex/agents",
                 ".gemini/agents", ".qwen/agents")
#: The workspace's files and folders that trusting could arm (what `may_arm` looks for).
ARMING = (".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".agentcli/config.toml", *AGENT_FOLDERS)


@dataclass(frozen=True, slots=True)
class TrustReport:
    """What trusting `workspace` would apply, run and reach."""

    workspace: Path
    project_file: Path | None = None  # the project config, when it sets what only trust applies
    settings: tuple[str, ...] = ()  # those settings, `key = value`, secrets redacted
    hooks: tuple[HookCommand, ...] = ()
    servers: tuple[ServerSpec, ...] = ()
    language_servers: tuple[tuple[str, str], ...] = ()  # (name, command line): `[lsp.servers]`, project plugins'
    problems: tuple[str, ...] = ()  # files that could not be read (the lists may then be incomplete)

    @property
    def arms(self) -> bool:
        """Whether trusting would run a hook or start or reach an MCP server or a language server."""
        return bool(self.hooks or self.servers or self.language_servers)

    @property
    def changes(self) -> bool:
        """Whether trusting would change anything at all (a setting, a hook, a server)."""
        return bool(self.settings) or self.arms

    @property
    def variables(self) -> tuple[str, ...]:
        """The environment variables the servers' settings expand, each once."""
        from agentcli.mcp import variables

        return tuple(dict.fromkeys(name for spec in self.servers for name in variables(spec)))

    def _where(self, source: str) -> str:
        path = Path(source.removeprefix("agent file "))
        try:
            return path.relative_to(self.workspace).as_posix()
        except ValueError:
            return source

    def hook_lines(self) -> list[str]:
        """`SessionStart hook: touch x   (from .claude/settings.json)`, one per hook."""
        out = []
        for hook in self.hooks:
            when = f"{hook.event} hook" + (f" ({hook.matcher})" if hook.matcher not in ("", "*") else "")
            out.append(f"{when}: {one_line(hook.command)}   (from {self._where(hook.source)})")
        return out

    def server_lines(self) -> list[str]:
        """`MCP server 'x' starts: node srv.js   (from .mcp.json)` or `… is sent requests: URL`, one per server."""
        out = []
        for spec in self.servers:
            if spec.transport == "http":
                headers = ", ".join(name for name, _ in spec.headers)
                what = f"is sent requests: {spec.url}" + (f" with headers {headers}" if headers else "")
            else:
                what = f"starts: {one_line(spec.target)}"
            out.append(f"MCP server '{spec.name}' {what}   (from {self._where(spec.origin)})")
        return out

    def language_server_lines(self) -> list[str]:
        """`Language server 'x' starts: ruby-lsp   (from .agentcli/config.toml)`, one per server."""
        where = self._where(str(self.project_file or paths.project_config_file(self.workspace)))
        return [f"Language server '{name}' starts: {one_line(command)}   (from {where})"
                for name, command in self.language_servers]

    def variables_line(self) -> str:
        """The variables the servers are given from the person's environment, or "" when none."""
        from agentcli.config import is_secret_key
        from agentcli.tools import KEY_VARIABLES

        if not self.variables:
            return ""
        return "MCP servers are given these environment variables: " + ", ".join(
            f"${{{name}}}" + (" (a provider key)" if name in KEY_VARIABLES else " (a secret)" if is_secret_key(name)
                              else "")
            for name in self.variables
        )

    def lines(self) -> list[str]:
        """Every hook, server and variable, one line each (empty when trusting runs nothing)."""
        extra = [self.variables_line()] if self.variables else []
        return [*self.hook_lines(), *self.server_lines(), *self.language_server_lines(), *extra]

    def summary(self) -> str:
        """The hooks, servers and variables on one line (for the warning line)."""
        parts = [*self.hook_lines(), *self.server_lines(), *self.language_server_lines()]
        if self.variables:
            parts.append(self.variables_line())
        return "; ".join(" ".join(part.split()) for part in parts)


def _project_config_parts(
    path: Path, hooks: HookConfig, servers: list[ServerSpec], problems: list[str],
    language: list[tuple[str, str]] | None = None,
) -> None:
    """The `[hooks]`, `[mcp.servers]` and `[lsp.servers]` (those with a command) of the project config at `path`."""
    from agentcli.config import ConfigError, read_toml
    from agentcli.hooks import add_hooks
    from agentcli.mcp import SpecError, parse_server

    try:
        doc = read_toml(path)
    except ConfigError as exc:
        problems.append(str(exc))
        return
    add_hooks(hooks, doc.get("hooks"), path)
    lsp = doc.get("lsp")
    lsp_table: Any = lsp.get("servers") if isinstance(lsp, dict) else None
    if language is not None and isinstance(lsp_table, dict):
        for name, raw in lsp_table.items():
            command = raw.get("command") if isinstance(raw, dict) else None
            if isinstance(command, list) and command:
                language.append((str(name), shlex.join(str(part) for part in command)))
    mcp = doc.get("mcp")
    table: Any = mcp.get("servers") if isinstance(mcp, dict) else None
    if not isinstance(table, dict):
        return
    for name, raw in table.items():
        try:
            servers.append(parse_server(str(name), raw, origin=str(path), project=True))
        except SpecError as exc:
            problems.append(str(exc))


def _names_servers(path: Path) -> bool:
    """Whether the agent file at `path` may define MCP servers: a look at its start, never a hang (a regular
    file only, opened without blocking), so the registry is loaded only for files that do."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    with os.fdopen(fd, "rb") as handle:
        return stat.S_ISREG(os.fstat(fd).st_mode) and b"mcpServers" in handle.read(_AGENT_FILE_PEEK)


def _agent_file_servers(workspace: Path, env: Mapping[str, str]) -> list[ServerSpec]:
    """The servers the project's agent files define (the registry is loaded only when a file names some)."""
    folders = [workspace / name for name in AGENT_FOLDERS if (workspace / name).is_dir()]
    if not any(_names_servers(path) for folder in folders for path in folder.glob("*.md")):
        return []
    from agentcli.subagents import AgentRegistry

    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    registry = AgentRegistry.load(workspace, env=env, home=home)
    return [spec for agent in registry.types.values() if agent.scope == "project" for spec in agent.mcp_specs]


def what_trust_arms(
    workspace: Path, loaded: LoadedConfig | None = None, env: Mapping[str, str] | None = None
) -> TrustReport:
    """What trusting `workspace` would apply (`loaded`'s ignored settings), run and reach (see the module)."""
    from agentcli.hooks import project_hooks
    from agentcli.mcp import read_mcp_json

    env = os.environ if env is None else env
    hooks = project_hooks(workspace, env)
    servers, problems = read_mcp_json(workspace)
    problems = list(problems)
    config_file = paths.project_config_file(workspace)
    language: list[tuple[str, str]] = []
    if config_file.exists():
        _project_config_parts(config_file, hooks, servers, problems, language)
    servers += _agent_file_servers(workspace, env)
    _project_plugins(workspace, env, hooks, servers, problems, language)
    with_settings = loaded is not None and loaded.project_file is not None
    claude = loaded.claude_ignored() if loaded is not None else []
    return TrustReport(
        workspace=workspace,
        project_file=loaded.project_file if loaded is not None and with_settings else None,
        settings=(tuple(loaded.ignored_settings()) if loaded is not None and with_settings else ()) + tuple(claude),
        hooks=tuple(hook for event in hooks.by_event.values() for hook in event),
        servers=tuple(servers),
        language_servers=tuple(language),
        problems=tuple(problems + [note for note in hooks.notes if "not read" in note]),
    )


def _project_plugins(workspace: Path, env: Mapping[str, str], hooks: HookConfig, servers: list[ServerSpec],
                     problems: list[str], language: list[tuple[str, str]]) -> None:
    """The hooks, MCP servers and language servers of the plugins only the project's `enabledPlugins` would turn
    on."""
    from agentcli.hooks import add_plugin_hooks
    from agentcli.lsp.specs import plugin_servers as plugin_language_servers
    from agentcli.mcp import plugin_servers
    from agentcli.plugins import session_plugins

    if not any((workspace / ".claude" / name).exists() for name in ("settings.json", "settings.local.json")):
        return
    already = {plugin.plugin_id for plugin in session_plugins(workspace, trusted=False, env=env).plugins}
    added = [p for p in session_plugins(workspace, trusted=True, env=env).plugins if p.plugin_id not in already]
    add_plugin_hooks(hooks, added)
    found, skipped = plugin_servers(added, project=True)
    servers += found
    problems += skipped
    language += [(spec.name, shlex.join(spec.command)) for spec in plugin_language_servers(added)]


def may_arm(workspace: Path) -> bool:
    """Whether the workspace has a file or folder that trusting could arm (existence checks only)."""
    return any(os.path.lexists(workspace / name) for name in ARMING)


def untrusted_warning(workspace: Path, loaded: LoadedConfig) -> str | None:
    """The one warning line of an untrusted workspace: the settings it could not set (`loaded`), and the hooks
    and MCP servers that do not run until it is trusted; None when there is nothing to say."""
    base = loaded.untrusted_warning()
    if not may_arm(workspace):
        return base
    from agentcli.config import trust

    if trust.is_trusted(workspace):
        return base
    report = what_trust_arms(workspace)
    if not report.arms:
        return base
    parts = [f"ignored {'; '.join(loaded.ignored_parts())}"] if base else []
    parts.append(f"not run until trusted: {report.summary()}")
    return (f"untrusted workspace {workspace}: {'; '.join(parts)} "
            f"(run 'agentcli trust {shlex.quote(str(workspace))}' to {'apply' if base else 'allow'} them)")
