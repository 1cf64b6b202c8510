"""Which language servers there are: the built-in entries, the `[lsp.servers.NAME]` tables over them, the plugins'
(`plugin_servers`), and where each command is found (PATH, then the folder of agentcli's own Python: a virtual
environment's `bin`). Nothing is ever downloaded: a server not found is simply not used."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.config.schema import LspServerSettings
    from agentcli.plugins import Plugin


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One language server as configured: `language` groups the servers of which only the first found runs."""

    name: str
    language: str
    command: tuple[str, ...]
    extensions: tuple[str, ...]
    root_markers: tuple[str, ...] = ()
    initialization_options: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    builtin: bool = True
    # It may run the project's own code (build scripts, proc macros, a project-local tsserver, plugins from project
    # config): in a workspace not trusted, it starts only inside the Bash sandbox.
    runs_project_code: bool = False
    # How an edit's diagnostics are asked for when the server offers no LSP pull (`textDocument/diagnostic`):
    # "tsserver" asks typescript-language-server's tsserver directly (it publishes without versions, and not at all
    # when a file's findings stay empty); "" waits for what it publishes.
    pull: str = ""
    # A plugin's `extensionToLanguage`: the LSP language id of a file by its extension (else the usual ones).
    language_ids: Mapping[str, str] = field(default_factory=dict)

    def executable(self) -> str | None:
        """The command's program as found (an absolute path), or None."""
        return find_program(self.command[0]) if self.command else None

    def argv(self) -> list[str] | None:
        """The command line to start, the program resolved; None when it is not found."""
        program = self.executable()
        return None if program is None else [program, *self.command[1:]]

    def handles(self, path: Path) -> bool:
        """Whether this server serves files like `path` (by extension, case-sensitive as file systems are)."""
        return any(path.name.endswith(ext) for ext in self.extensions)


_PY = (".py", ".pyi")
_TS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
#: Built in, in the order they are preferred within a language.
BUILTIN_SERVERS: tuple[ServerSpec, ...] = (
    ServerSpec("basedpyright", "python", ("basedpyright-langserver", "--stdio"), _PY),
    ServerSpec("pyright", "python", ("pyright-langserver", "--stdio"), _PY),
    ServerSpec("pyrefly", "python", ("pyrefly", "lsp"), _PY),
    ServerSpec("ty", "python", ("ty", "server"), _PY),
    ServerSpec("pylsp", "python", ("pylsp",), _PY, runs_project_code=True),  # plugins read the project's config
    ServerSpec("typescript", "typescript", ("typescript-language-server", "--stdio"), _TS,
               ("tsconfig.json", "jsconfig.json", "package.json"), runs_project_code=True,  # node_modules/typescript
               pull="tsserver"),
    ServerSpec("gopls", "go", ("gopls",), (".go",), ("go.work", "go.mod")),
    ServerSpec("rust-analyzer", "rust", ("rust-analyzer",), (".rs",), ("Cargo.toml",),
               runs_project_code=True),  # build scripts and proc macros
)


PLUGIN_PREFIX = "plugin_"  # a plugin's server is `plugin_<plugin>_<server>` (`Plugin.server_name`)


def plugin_servers(plugins: Iterable[Plugin]) -> list[ServerSpec]:
    """The plugins' language servers (`.lsp.json`, `lspServers`; shapes checked when the plugin was read), named
    `plugin_<plugin>_<server>`, `${CLAUDE_PLUGIN_ROOT}` expanded. A plugin's server may run whatever the project
    configures, as far as agentcli knows: in a workspace not trusted it starts only inside the sandbox."""
    specs: list[ServerSpec] = []
    for plugin in plugins:
        for name, raw in plugin.language_servers.items():
            server = plugin.expand(raw)
            ids = {str(ext): str(lid) for ext, lid in server["extensionToLanguage"].items()}
            specs.append(ServerSpec(
                plugin.server_name(name), next(iter(ids.values())), (server["command"], *server.get("args", [])),
                tuple(ids), (), dict(server.get("initializationOptions") or {}), dict(server.get("env") or {}),
                builtin=False, runs_project_code=True, language_ids=ids,
            ))
    return specs


def with_plugin_servers(specs: list[ServerSpec], plugins: Iterable[Plugin],
                        tables: Mapping[str, LspServerSettings] | None = None) -> list[ServerSpec]:
    """`specs` with the plugins' servers after the person's own additions and before the built-ins, so a plugin's
    server is preferred for its files over a built-in one (a name already there is kept). A `[lsp.servers.NAME]`
    table of a plugin server's name changes it as it changes a built-in (`disabled = true` turns it off)."""
    known = {spec.name for spec in specs}
    added = [_changed(spec, (tables or {}).get(spec.name)) for spec in plugin_servers(plugins)
             if spec.name not in known]
    at = next((i for i, spec in enumerate(specs) if spec.builtin), len(specs))
    return [*specs[:at], *added, *specs[at:]]


def _changed(spec: ServerSpec, table: LspServerSettings | None) -> ServerSpec:
    if table is None:
        return spec
    return replace(
        spec, command=tuple(table.command or spec.command), extensions=tuple(table.extensions or spec.extensions),
        root_markers=tuple(table.root_markers if table.root_markers is not None else spec.root_markers),
        initialization_options={**spec.initialization_options, **table.initialization_options},
        env={**spec.env, **table.env}, disabled=table.disabled,
    )


def find_program(program: str) -> str | None:
    """`program` on PATH, else beside `sys.executable` (the venv agentcli runs from), else None."""
    if os.sep in program:
        path = Path(program).expanduser()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which(program)
    if found is not None:
        return found
    return shutil.which(program, path=str(Path(sys.executable).parent))


def configured_servers(settings: Settings) -> list[ServerSpec]:
    """Every server of `[lsp]`: the built-ins with their tables applied, then the added ones in table order. An added
    table without `command` or `extensions` is left out (`problems` names it)."""
    return _merge(settings)[0]


def problems(settings: Settings) -> list[str]:
    """One line per `[lsp.servers.NAME]` table that cannot make a server."""
    return _merge(settings)[1]


def _merge(settings: Settings) -> tuple[list[ServerSpec], list[str]]:
    tables = settings.lsp.servers
    specs: list[ServerSpec] = []
    for spec in BUILTIN_SERVERS:
        table = tables.get(spec.name)
        if table is None:
            specs.append(spec)
            continue
        specs.append(ServerSpec(
            spec.name, spec.language, tuple(table.command or spec.command), tuple(table.extensions or spec.extensions),
            tuple(table.root_markers if table.root_markers is not None else spec.root_markers),
            dict(table.initialization_options), dict(table.env), table.disabled,
            runs_project_code=spec.runs_project_code, pull=spec.pull,
        ))
    builtin = {spec.name for spec in BUILTIN_SERVERS}
    added: list[ServerSpec] = []
    bad: list[str] = []
    for name, table in tables.items():
        if name in builtin:
            continue
        if name.startswith(PLUGIN_PREFIX) and not (table.command and table.extensions):
            continue  # changes a plugin's server of that name (`with_plugin_servers`)
        if not table.command or not table.extensions:
            bad.append(f"[lsp.servers.{name}]: needs `command` and `extensions` (it is not a built-in server)")
            continue
        added.append(ServerSpec(name, name, tuple(table.command), tuple(table.extensions),
                                tuple(table.root_markers or ()), dict(table.initialization_options), dict(table.env),
                                table.disabled, builtin=False))
    # An added server is preferred over the built-ins for its extensions: it is the one configured.
    return added + specs, bad


def server_for(specs: list[ServerSpec], path: Path, project_code: bool = True) -> ServerSpec | None:
    """The server that serves `path`: the first enabled one that handles it and is found (one that may run the
    project's code only when `project_code`)."""
    for spec in specs:
        if spec.disabled or not spec.handles(path) or (spec.runs_project_code and not project_code):
            continue
        if spec.executable() is not None:
            return spec
    return None


def chosen(specs: list[ServerSpec]) -> dict[str, ServerSpec]:
    """Per language, the server that would run (the first enabled and found), by the server's name."""
    taken: dict[str, ServerSpec] = {}
    for spec in specs:
        if not spec.disabled and spec.language not in taken and spec.executable() is not None:
            taken[spec.language] = spec
    return {spec.name: spec for spec in taken.values()}


def found_line(settings: Settings) -> str:
    """`config show`'s `[lsp]` line: which servers would run, or that none is found."""
    if not settings.lsp.enabled:
        return "[lsp] off (enabled = false)"
    running = chosen(configured_servers(settings))
    if not running:
        return "[lsp] no language server found (agentcli lsp list)"
    return "[lsp] found: " + ", ".join(f"{name} ({spec.language})" for name, spec in running.items())


def root_for(spec: ServerSpec, path: Path, workspace: Path) -> Path:
    """The root a file's server runs in: the nearest folder at or below `workspace` holding one of the server's
    root markers, else `workspace`."""
    if spec.root_markers:
        folder = path.parent
        while folder == workspace or workspace in folder.parents:
            if any((folder / marker).exists() for marker in spec.root_markers):
                return folder
            folder = folder.parent
    return workspace
