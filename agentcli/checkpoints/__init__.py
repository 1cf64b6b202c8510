"""Checkpoints: the workspace's files as git trees in a shadow repository agentcli owns (`shadow`), put back
through git's checkout and descriptor-safe deletes (`restore`), and what a rewind will change and whose changes it
would undo (`plan`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.checkpoints.plan import FileChange, RewindPlan, Span, apply_plan, file_diff, plan_rewind
    from agentcli.checkpoints.shadow import (
        Change,
        CheckpointError,
        ShadowRepo,
        Skipped,
        Snapshot,
        checkpoints_root,
        workspace_key,
    )

__all__ = [
    "Change",
    "CheckpointError",
    "FileChange",
    "RewindPlan",
    "ShadowRepo",
    "Skipped",
    "Snapshot",
    "Span",
    "apply_plan",
    "checkpoints_root",
    "file_diff",
    "plan_rewind",
    "workspace_key",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.checkpoints.plan": ["FileChange", "RewindPlan", "Span", "apply_plan", "file_diff", "plan_rewind"],
    "agentcli.checkpoints.shadow": [
        "Change", "CheckpointError", "ShadowRepo", "Skipped", "Snapshot", "checkpoints_root", "workspace_key",
    ],
})
