"""The file tools: Read and LS (`read`), Write, Edit and MultiEdit (`write`), and the one binary-file test
(`sniff`).

Its modules are its face; other packages import their names from `agentcli.tools`.
"""

__all__ = [
    "read",
    "sniff",
    "write",
]
