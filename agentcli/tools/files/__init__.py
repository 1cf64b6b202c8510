"""The file tools: Read and LS (`read`), Write, Edit and MultiEdit (`write`), and the one binary-file test
(`sniff`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.tools.files.read import LSArgs, LSTool, ReadArgs, ReadTool, human_size
    from agentcli.tools.files.sniff import is_binary_file
    from agentcli.tools.files.write import (
        EditArgs,
        EditSpec,
        EditTool,
        MultiEditArgs,
        MultiEditTool,
        WriteArgs,
        WriteTool,
    )

__all__ = [
    "EditArgs",
    "EditSpec",
    "EditTool",
    "LSArgs",
    "LSTool",
    "MultiEditArgs",
    "MultiEditTool",
    "ReadArgs",
    "ReadTool",
    "WriteArgs",
    "WriteTool",
    "human_size",
    "is_binary_file",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.tools.files.read": ["LSArgs", "LSTool", "ReadArgs", "ReadTool", "human_size"],
    "agentcli.tools.files.sniff": ["is_binary_file"],
    "agentcli.tools.files.write": [
        "EditArgs",
        "EditSpec",
        "EditTool",
        "MultiEditArgs",
        "MultiEditTool",
        "WriteArgs",
        "WriteTool",
    ],
})
