"""Glob and Grep (`tools`): the file walk, ripgrep or the Python fallback in a child process, and reading what
the child found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.tools.search.child import PACKAGE_ROOT, child_env, kill
    from agentcli.tools.search.tools import GlobArgs, GlobTool, GrepArgs, GrepTool
    from agentcli.tools.search.walk import SKIP_DIRS, Walk

__all__ = [
    "PACKAGE_ROOT",
    "SKIP_DIRS",
    "GlobArgs",
    "GlobTool",
    "GrepArgs",
    "GrepTool",
    "Walk",
    "child_env",
    "kill",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.tools.search.child": ["PACKAGE_ROOT", "child_env", "kill"],
    "agentcli.tools.search.tools": ["GlobArgs", "GlobTool", "GrepArgs", "GrepTool"],
    "agentcli.tools.search.walk": ["SKIP_DIRS", "Walk"],
})
