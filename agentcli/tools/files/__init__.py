"""The file tools: Read and LS (`read`; PDFs by pages in `pdf`, notebooks' cells in `notebook`), Write, Edit and
MultiEdit (`write`), NotebookEdit (`notebook_edit`), and the one binary-file test (`sniff`).

Its modules are its face; other packages import their names from `agentcli.tools`.
"""

__all__ = [
    "notebook",
    "notebook_edit",
    "pdf",
    "read",
    "sniff",
    "write",
]
