"""`agentcli lsp list`: the language servers a session here would use: each built-in or configured server, where its
command is found (or that it is not), the files it serves, and which runs per language. Nothing is started (running
servers live inside a session). Only typer and the standard library at import time."""

from __future__ import annotations

from typing import Any

import typer

from agentcli.cli.common import ConfigOption, CwdOption, JsonOption, echo, print_json
from agentcli.frontend import load, workspace_dir

lsp_app = typer.Typer(help="Language servers: which are found, and which a session would start.",
                      rich_markup_mode=None)


@lsp_app.command("list")
def list_servers(cwd: CwdOption = None, config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """Each language server: found (its path) or not, its extensions, and whether a session would start it."""
    from agentcli.lsp import chosen, configured_servers, problems
    from agentcli.lsp.specs import with_plugin_servers
    from agentcli.plugins import session_plugins

    workspace = workspace_dir(cwd)
    settings = load(workspace, config).settings
    plugins = session_plugins(workspace, dirs=settings.plugins.dirs, enabled=settings.plugins.enabled)
    specs = with_plugin_servers(configured_servers(settings), plugins.plugins, settings.lsp.servers)
    runs = chosen(specs) if settings.lsp.enabled else {}
    rows: list[dict[str, Any]] = []
    for spec in specs:
        rows.append({
            "name": spec.name, "language": spec.language, "command": list(spec.command),
            "found": spec.executable(), "extensions": list(spec.extensions), "disabled": spec.disabled,
            "builtin": spec.builtin, "used": spec.name in runs, "runs_project_code": spec.runs_project_code,
        })
    if as_json:
        print_json({"enabled": settings.lsp.enabled, "servers": rows, "problems": problems(settings)})
        return
    if not settings.lsp.enabled:
        echo("Language servers are off ([lsp] enabled = false).")
    for row in rows:
        state = "disabled" if row["disabled"] else f"found: {row['found']}" if row["found"] else "not found"
        used = "  (used)" if row["used"] else ""
        used += "  [may run project code: untrusted workspaces only in the sandbox]" if row["runs_project_code"] else ""
        echo(f"{row['name']:<14} {row['language']:<11} {' '.join(row['extensions']):<24} {state}{used}")
    for line in problems(settings):
        echo(line)
