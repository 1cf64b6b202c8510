"""Claude Code's headless mode: `agentcli` with Claude Code's flags and no command, driven by the Claude Agent SDK
(or any program that speaks its stream-json and control protocol on stdio).

- `flags`: Claude Code's command line, read into `HeadlessArgs` (each flag honoured, or accepted with a warning);
- `settings_map`: those flags as config overrides, tool filters and permission rules;
- `control`: the control protocol's plumbing (requests both ways, answers, cancellations);
- `printer`: the lines in Claude Code's exact shapes (init every turn, a result per turn, session state);
- `approver`: the permission questions as `can_use_tool` requests;
- `requests`: what each control request from the program does; `rewind`: `rewind_files`, the workspace's files put
  back as they were before a user message's turn;
- `driver`: one session, turn by turn, from the user messages and control requests on standard input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.headless.driver import main
    from agentcli.headless.flags import is_headless

__all__ = [
    "is_headless",
    "main",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.headless.driver": ["main"],
    "agentcli.headless.flags": ["is_headless"],
})
