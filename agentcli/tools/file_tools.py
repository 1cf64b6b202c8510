"""The file tools in one place: Read, Write, Edit, MultiEdit, LS, Glob, Grep.

They live in `files_read`, `files_write` and `search`; this module re-exports them.
"""

from __future__ import annotations

from agentcli.tools.files.read import LSArgs, LSTool, ReadArgs, ReadTool
from agentcli.tools.files.write import (
    EditArgs,
    EditSpec,
    EditTool,
    MultiEditArgs,
    MultiEditTool,
    WriteArgs,
    WriteTool,
)
from agentcli.tools.search.tools import GlobArgs, GlobTool, GrepArgs, GrepTool

__all__ = [
    "EditArgs",
    "EditSpec",
    "EditTool",
    "GlobArgs",
    "GlobTool",
    "GrepArgs",
    "GrepTool",
    "LSArgs",
    "LSTool",
    "MultiEditArgs",
    "MultiEditTool",
    "ReadArgs",
    "ReadTool",
    "WriteArgs",
    "WriteTool",
]
