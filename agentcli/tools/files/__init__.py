"""The file tools: Read and LS (`read`; PDFs by pages in `pdf`, notebooks' cells in `notebook`), Write, Edit and
MultiEdit (`write`), NotebookEdit (`notebook_edit`), LSP (`lsp`: the language servers' answers about a file's code),
and the one binary-file test (`sniff`).

Its modules are its face; other packages import their names from `agentcli.tools`.
"""

__all__ = [
    "lsp",
    "notebook",
    "notebook_edit",
    "pdf",
    "read",
    "sniff",
    "write",
]
