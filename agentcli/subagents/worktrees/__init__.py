"""Tasks isolated in git worktrees: the runner's side (`isolation`), the snapshot and the worktree (`worktree`),
the three-way merge back into the workspace (`merge_back`) and what isolated tasks leave behind (`admin`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.subagents.worktrees.admin import Leftover, age, leftovers, prune, prune_at_start
    from agentcli.subagents.worktrees.isolation import Isolation, Left
    from agentcli.subagents.worktrees.worktree import Worktree, WorktreeError

__all__ = [
    "Isolation",
    "Left",
    "Leftover",
    "Worktree",
    "WorktreeError",
    "age",
    "leftovers",
    "prune",
    "prune_at_start",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.subagents.worktrees.admin": ["Leftover", "age", "leftovers", "prune", "prune_at_start"],
    "agentcli.subagents.worktrees.isolation": ["Isolation", "Left"],
    "agentcli.subagents.worktrees.worktree": ["Worktree", "WorktreeError"],
})
