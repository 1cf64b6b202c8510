"""`agentcli trust [DIR] [--list | --revoke]`, and recording trust for `--trust` and the TUI's prompt.

Only typer and the standard library at import time: the trust store and the config load inside.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common import echo
from agentcli.frontend import EXIT_USAGE, fail, workspace_dir

if TYPE_CHECKING:
    from agentcli.conversation import TrustReport


def record_trust(workspace: Path) -> None:
    """`--trust` / the TUI prompt: remember the workspace as trusted, or exit 1 saying why not."""
    from agentcli.config import trust

    try:
        trust.trust(workspace)
    except trust.TrustError as exc:
        fail(str(exc))


def trust_command(
    directory: Annotated[
        Path | None, typer.Argument(metavar="DIR", help="The workspace (default: the current directory).")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="Show the trusted workspaces.")] = False,
    revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting DIR.")] = False,
) -> None:
    """Trust a workspace: its .agentcli/config.toml may then widen permissions and set model endpoints, and its
    hooks and MCP servers run (each is named)."""
    from agentcli.config import trust

    if list_:
        for path in trust.trusted_paths():
            print(path)
        return
    if directory is not None and not directory.expanduser().is_dir():
        fail(f"{directory} is not a directory", EXIT_USAGE)
    workspace = workspace_dir(directory)
    if revoke:
        removed = trust.revoke(workspace)
        print(f"no longer trusted: {workspace}" if removed else f"{workspace} was not in the trusted list")
        ancestor = trust.trusted_by(workspace)
        if ancestor is not None:
            fail(f"{workspace} is still trusted through {ancestor} (run 'agentcli trust --revoke {ancestor}')")
        return
    report = _trust_report(workspace)
    try:
        recorded = trust.trust(workspace)
    except trust.TrustError as exc:
        fail(str(exc))
    print(f"trusted: {recorded} (recorded in {trust.store_path()})")
    if report.settings:
        echo(f"it applies these settings of {report.project_file or 'its Claude Code settings files'}:")
        echo("\n".join(f"  {line}" for line in report.settings))
    if report.arms:
        echo("it runs these hooks and MCP servers (with the environment variables they are given):")
        echo("\n".join(f"  {line}" for line in report.lines()))
    if report.problems:
        echo("not read, so what it runs may be more than listed:")
        echo("\n".join(f"  {line}" for line in report.problems))
    if report.changes:
        echo(f"('agentcli trust --revoke {shlex.quote(str(recorded))}' takes it back)")


def _trust_report(workspace: Path) -> TrustReport:
    """What trusting `workspace` applies, runs and reaches (its config's settings when the config loads)."""
    from agentcli.config import ConfigError, load_config
    from agentcli.conversation import what_trust_arms

    try:
        loaded = load_config(workspace=workspace, trusted=False)
    except ConfigError:
        return what_trust_arms(workspace)  # the config's own error is said when it is used
    return what_trust_arms(workspace, loaded)
