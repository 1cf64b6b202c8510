"""The status line: the person's own command (Claude Code's `statusLine` setting, or `[ui] status_line`) prints a
line shown under the status bar. It gets the session as JSON on stdin (Claude Code's fields: `session_id`, `cwd`,
`model`, `workspace`, `version`, `output_style`, `cost`, plus agentcli's `permission_mode`), runs at most every
`REFRESH_SECONDS` and only when that changed, under the session's Bash environment (no provider keys) with a time
limit, and its output is cleaned and cut to the terminal's width: colours and text attributes (SGR sequences) are
drawn as such, every other control sequence (cursor moves, titles, links, clears) and control character dropped.

It is a command agentcli runs, so it comes only from the person's own layers: the user config, their Claude Code
settings, and a project's only when trusted (`config.untrusted` drops a project's `[ui] status_line`).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import Static

from agentcli.text import one_line, terminal_safe

if TYPE_CHECKING:
    from agentcli.conversation import Conversation

REFRESH_SECONDS = 0.3
TIME_LIMIT_SECONDS = 2.0
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_SGR = re.compile(r"\x1b\[[0-9;:]{0,64}m")  # Select Graphic Rendition: colours and attributes, nothing else


def status_line_command(conversation: Conversation) -> str:
    """`[ui] status_line`, else the command of Claude Code's `statusLine`, else ""."""
    from agentcli.config import claude_status_line, trust

    configured = conversation.settings.ui.status_line.strip()
    if configured:
        return configured
    workspace = conversation.workspace
    return claude_status_line(workspace, trusted=trust.is_trusted(workspace),
                              sources=conversation.person_settings.sources)


def status_input(conversation: Conversation) -> dict[str, Any]:
    """What the command reads on stdin (what it is given changes only when the session's state does)."""
    from agentcli import __version__

    model, workspace, style = conversation.model, str(conversation.workspace), conversation.person_settings.style
    spent = conversation.session.ledger.total
    return {
        "hook_event_name": "Status", "session_id": conversation.session.id, "cwd": workspace,
        "model": {"id": model.model, "display_name": model.display},
        "workspace": {"current_dir": workspace, "project_dir": workspace}, "version": __version__,
        "output_style": {"name": style.name if style is not None else "default"},
        "cost": {"total_cost_usd": round(spent.cost_usd, 6)} if spent.cost_usd is not None else {},
        "permission_mode": conversation.permissions.mode,
    }


def cleaned(text: str, width: int) -> str:
    """The first line of the command's output, its control sequences dropped, cut to `width`."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    return one_line(terminal_safe(_ESCAPES.sub("", first)), max(width, 1))


def coloured(text: str, width: int) -> Text:
    """The first line of the command's output with its SGR sequences drawn (Rich reads them) and every other
    sequence or control character dropped, cut to `width`."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    kept: list[str] = []
    at = 0
    for match in _ESCAPES.finditer(first):
        kept.append(_plain(first[at:match.start()]))
        if _SGR.fullmatch(match.group()):
            kept.append(match.group())
        at = match.end()
    kept.append(_plain(first[at:]))
    line = Text.from_ansi("".join(kept), no_wrap=True)
    line.truncate(max(width, 1), overflow="ellipsis")
    return line


def _plain(text: str) -> str:
    return terminal_safe(text).replace("\t", " ")


class StatusLine(Static):
    """The line under the status bar; hidden when no command is set."""

    def __init__(self, command: str, workspace: Path, env: dict[str, str]) -> None:
        super().__init__("", id="status-line", markup=False)
        self.command, self.workspace, self.env = command, workspace, env
        self.display = bool(command)
        self._last_input: str | None = None  # the input of the last run
        self._last_run = 0.0
        self._busy = False

    def request(self, conversation: Conversation) -> None:
        """Run the command again when the session's state changed and the last run is `REFRESH_SECONDS` old."""
        if not self.command or self._busy or time.monotonic() - self._last_run < REFRESH_SECONDS:
            return
        given = json.dumps(status_input(conversation), ensure_ascii=False)
        if given != self._last_input:
            self._last_input, self._busy = given, True
            self.run_worker(self._run(given), exclusive=True, group="status-line")

    async def _run(self, given: str) -> None:
        from agentcli.hooks import run_command

        try:
            done = await run_command(self.command, given.encode(), cwd=self.workspace, env=self.env,
                                     timeout=TIME_LIMIT_SECONDS)
        finally:
            self._busy, self._last_run = False, time.monotonic()
        width = self.size.width or 80
        if done.timed_out:
            self.update(cleaned(f"status line: the command took over {TIME_LIMIT_SECONDS:g} s", width))
        elif done.error:
            self.update(cleaned(f"status line: {done.error}", width))
        else:
            self.update(coloured(done.stdout, width))
