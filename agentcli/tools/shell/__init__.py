"""Bash: the tool (`bash`), the environment its commands get (`env`), bash's lexer and syntax as permission rules
need them (`lexer`, `syntax`), Bash rules and remembered answers (`rules`) and the reaper that never lets a child
outlive agentcli (`reaper`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.tools.shell.bash import (
        DRAIN_GRACE_SECONDS,
        TERM_GRACE_SECONDS,
        BashArgs,
        BashTool,
        stop_process_group,
    )
    from agentcli.tools.shell.env import KEY_VARIABLES, bash_environment, session_bash_env
    from agentcli.tools.shell.reaper import parent_death_hook
    from agentcli.tools.shell.rules import (
        BashAnswers,
        deny_candidates,
        every_part_allowed,
        normalize_ws,
        rule_stem,
        wild_match,
    )
    from agentcli.tools.shell.syntax import collapse_blanks, split_command

__all__ = [
    "DRAIN_GRACE_SECONDS",
    "KEY_VARIABLES",
    "TERM_GRACE_SECONDS",
    "BashAnswers",
    "BashArgs",
    "BashTool",
    "bash_environment",
    "collapse_blanks",
    "deny_candidates",
    "every_part_allowed",
    "normalize_ws",
    "parent_death_hook",
    "rule_stem",
    "session_bash_env",
    "split_command",
    "stop_process_group",
    "wild_match",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.tools.shell.bash": [
        "BashArgs",
        "BashTool",
        "DRAIN_GRACE_SECONDS",
        "TERM_GRACE_SECONDS",
        "stop_process_group",
    ],
    "agentcli.tools.shell.env": ["KEY_VARIABLES", "bash_environment", "session_bash_env"],
    "agentcli.tools.shell.reaper": ["parent_death_hook"],
    "agentcli.tools.shell.rules": [
        "BashAnswers",
        "deny_candidates",
        "every_part_allowed",
        "normalize_ws",
        "rule_stem",
        "wild_match",
    ],
    "agentcli.tools.shell.syntax": ["collapse_blanks", "split_command"],
})
