"""Bash: the tool (`bash`), commands that run in the background (`background`), the environment its commands get
(`env`), bash's lexer and syntax as permission rules need them (`lexer`, `syntax`), Bash rules and remembered answers
(`rules`) and the reaper that never lets a child outlive agentcli (`reaper`).

Its modules are its face; other packages import their names from `agentcli.tools`.
"""

__all__ = [
    "background",
    "bash",
    "env",
    "lexer",
    "reaper",
    "rules",
    "syntax",
]
