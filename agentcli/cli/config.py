"""`agentcli config show`: the effective merged config, the layer each value came from, secrets redacted.

Only typer and the standard library at import time: the config, sandbox and model modules load inside.
"""

from __future__ import annotations

from typing import Annotated

import typer

from agentcli.cli.common import ConfigOption, CwdOption, context_windows
from agentcli.frontend import load, workspace_dir

config_app = typer.Typer(help="Inspect the effective configuration.", rich_markup_mode=None)


@config_app.command("show")
def config_show(
    cwd: CwdOption = None,
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON with each value's layer.")] = False,
) -> None:
    """Print the effective merged config, the layer each value came from, secrets redacted."""
    from agentcli.config import render_config
    from agentcli.lsp import found_line
    from agentcli.subagents import deferred_line
    from agentcli.text import json_safe, terminal_safe
    from agentcli.tools import session_sandbox

    workspace = workspace_dir(cwd)
    loaded = load(workspace, config)
    text = render_config(loaded, json=as_json)
    if not as_json:  # what [sandbox] amounts to on this system: on or off, with what
        sandbox = session_sandbox(loaded.settings, workspace)
        sandbox.add_write_roots([d.path for d in loaded.additional_dirs[0]])
        windows = "".join(f"# {line}\n" for line in context_windows(loaded.settings))
        servers = f"# {found_line(loaded.settings)}\n"  # which language servers a session would start
        deferred = f"# {deferred_line(loaded.settings.tools.defer)}\n"
        text = text.replace("\n\n", f"\n# {sandbox.describe()}\n{servers}{deferred}{windows}\n", 1)
    print(json_safe(text) if as_json else terminal_safe(text))  # project config values are untrusted
