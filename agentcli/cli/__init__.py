"""The command line: the typer app (`app`, whose command groups load only when named) and one module per command
group; `common` holds what the commands share (options, output, the store, a transcript).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.cli.app import entry

__all__ = [
    "entry",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.cli.app": ["entry"],
})
