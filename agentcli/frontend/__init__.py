"""What every front end shares (the TUI, the one-shot, headless mode, ACP): what a person types (custom slash
commands in `slash_commands` and `command_files`, `@path` mentions in `mentions`, `!command` in `person_command`)
and opening a workspace's config with one-line failures and exit codes (`common`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.frontend.command_files import command_message
    from agentcli.frontend.common import (
        EXIT_FAILURE,
        EXIT_OK,
        EXIT_USAGE,
        Failure,
        fail,
        format_when,
        load,
        stored_ledger,
        workspace_dir,
    )
    from agentcli.frontend.mentions import (
        ATTACHMENT_MARK,
        MAX_MENTIONS,
        attach_mentions,
        attached_paths,
        attachment_blocks,
        quote_mention,
        user_message,
        with_mentions,
    )
    from agentcli.frontend.person_command import is_person_command, run_person_command
    from agentcli.frontend.slash_commands import CommandSet, CustomCommand, model_spec

__all__ = [
    "ATTACHMENT_MARK",
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "MAX_MENTIONS",
    "CommandSet",
    "CustomCommand",
    "Failure",
    "attach_mentions",
    "attached_paths",
    "attachment_blocks",
    "command_message",
    "fail",
    "format_when",
    "is_person_command",
    "load",
    "model_spec",
    "quote_mention",
    "run_person_command",
    "stored_ledger",
    "user_message",
    "with_mentions",
    "workspace_dir",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.frontend.command_files": ["command_message"],
    "agentcli.frontend.common": [
        "EXIT_FAILURE",
        "EXIT_OK",
        "EXIT_USAGE",
        "Failure",
        "fail",
        "format_when",
        "load",
        "stored_ledger",
        "workspace_dir",
    ],
    "agentcli.frontend.mentions": [
        "ATTACHMENT_MARK",
        "MAX_MENTIONS",
        "attach_mentions",
        "attached_paths",
        "attachment_blocks",
        "quote_mention",
        "user_message",
        "with_mentions",
    ],
    "agentcli.frontend.person_command": ["is_person_command", "run_person_command"],
    "agentcli.frontend.slash_commands": ["CommandSet", "CustomCommand", "model_spec"],
})
