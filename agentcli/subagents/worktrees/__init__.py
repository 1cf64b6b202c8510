"""Tasks isolated in git worktrees: the runner's side (`isolation`), the snapshot and the worktree (`worktree`),
the three-way merge back into the workspace (`merge_back`) and what isolated tasks leave behind (`admin`).

Its modules are its face; other packages import their names from `agentcli.subagents`.
"""

__all__ = [
    "admin",
    "isolation",
    "merge_back",
    "worktree",
]
