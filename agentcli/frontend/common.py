"""What every front end shares when it starts: the exit codes, failing with one line, the workspace, the config.

The command line, the one-shot, headless mode and ACP open a workspace through here. Only typer and the standard
library at import time: the config and store modules are imported inside the functions that use them.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from agentcli.text import terminal_safe

if TYPE_CHECKING:
    from agentcli.agent import Ledger
    from agentcli.config import LoadedConfig
    from agentcli.store import TreeSpend

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

_warned: set[str] = set()


class Failure(typer.Exit):
    """`fail`'s exit: carries the one-line message (`run` repeats it as a JSON result line)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(code)
        self.message = message


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """Print a one-line error for the person (terminal escapes neutralised) and exit with `code`."""
    print(f"agentcli: {terminal_safe(message)}", file=sys.stderr)
    raise Failure(message, code)


def workspace_dir(cwd: Path | None) -> Path:
    """The workspace `--cwd` names (default: the current directory), resolved; exit 2 if not a directory."""
    path = (cwd or Path.cwd()).expanduser()
    if not path.is_dir():
        fail(f"--cwd {path} is not a directory", EXIT_USAGE)
    return path.resolve()


def load(
    workspace: Path,
    config_file: Path | None,
    overrides: dict[str, object] | None = None,
    origins: dict[str, str] | None = None,
    *,
    trusted: bool | None = None,
    claude_sources: frozenset[str] | None = None,
) -> LoadedConfig:
    """Load the layered config or exit 2 with the config error. `claude_sources`: which of Claude Code's settings
    files may set the permission mode (`--setting-sources`; None: all).

    The project file applies in full only in a trusted workspace (`agentcli trust`); otherwise
    what it could not set, and the hooks and MCP servers that do not run until it is trusted
    (`trust_report.untrusted_warning`: each command line, URL and variable), are named once in a warning line.
    """
    from agentcli.config import ConfigError, load_config

    asked_trust = trusted is None
    if trusted is None:
        from agentcli import paths
        from agentcli.config import project_claude_settings, trust

        project_files = [paths.project_config_file(workspace), *project_claude_settings(workspace)]
        trusted = not any(path.exists() for path in project_files) or trust.is_trusted(workspace)
    try:
        loaded = load_config(
            workspace=workspace,
            config_file=config_file,
            overrides=overrides,
            override_origins=origins,
            trusted=trusted,
            claude_sources=claude_sources,
        )
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    if asked_trust or not trusted:  # `trusted=True`: the person has just trusted it, or it was said already
        from agentcli.conversation import untrusted_warning

        warning = untrusted_warning(workspace, loaded)
    else:
        warning = loaded.untrusted_warning()
    warning = terminal_safe(warning) if warning else None  # key names and commands come from the workspace
    if warning and warning not in _warned:
        _warned.add(warning)
        print(f"agentcli: warning: {warning}", file=sys.stderr)
    return loaded


def stored_ledger(spent: TreeSpend) -> Ledger:
    """A stored session's usage as the live `Ledger` it was: own, delegated (every session below), total.

    The one conversion of the store's split (`Store.session_spend`, `conversation.stored_ledger`): `sessions
    list` and `sessions show` print and dump this, so their figures mean what the TUI's and the one-shot json's do.
    """
    from agentcli.conversation import stored_ledger as convert

    return convert(spent)


def format_when(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M") if value else "-"
