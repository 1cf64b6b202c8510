"""Glob and Grep (`tools`): the file walk, ripgrep or the Python fallback in a child process, and reading what
the child found.

Its modules are its face; other packages import their names from `agentcli.tools`.
"""

__all__ = [
    "child",
    "grep_engine",
    "grep_hits",
    "grep_parse",
    "grep_worker",
    "rg_listing",
    "tools",
    "walk",
]
