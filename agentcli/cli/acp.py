"""`agentcli acp`: serve an editor over the Agent Client Protocol on stdio (the server loads inside)."""

from __future__ import annotations

from typing import Annotated

import typer

from agentcli.cli.common import ConfigOption, ModelOption


def acp_command(
    model: ModelOption = None,
    config: ConfigOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log details to the log file.")] = False,
) -> None:
    """Serve an editor over the Agent Client Protocol on stdio (Zed, JetBrains, Neovim, Emacs): each session runs
    in the folder the editor names."""
    from agentcli.acp_agent import Options, serve

    raise typer.Exit(serve(Options(model=model, config=config, verbose=verbose)))
