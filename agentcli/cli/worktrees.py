"""`agentcli worktrees list|prune`: what isolated tasks left in this workspace's repository.

`list` shows agentcli's kept branches (`agentcli/<task id>`) and live worktrees, each with its task's status and
merge outcome from the task record and its age; `prune` removes the worktrees whose process is gone and, with
`--branches`, the kept branches of finished tasks, saying what it removed. Only typer and the standard library at
import time: git and the store are reached inside the commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common import CwdOption, JsonOption, echo, open_store, print_json, table
from agentcli.frontend import fail, workspace_dir

if TYPE_CHECKING:
    from pathlib import Path

    from agentcli.store import TaskRecord
    from agentcli.subagents import Leftover

worktrees_app = typer.Typer(help="Git worktrees and branches of isolated tasks (isolation: worktree).",
                            rich_markup_mode=None)

_RUNNING = ("running", "queued")


def _leftovers(workspace: Path) -> list[Leftover]:
    from agentcli.subagents import WorktreeError, leftovers

    try:
        return leftovers(workspace)
    except WorktreeError as exc:
        fail(str(exc))


def _records(task_ids: list[str]) -> dict[str, TaskRecord]:
    """The stored records of these tasks (those the store knows)."""
    if not task_ids:
        return {}
    store = open_store()
    try:
        return {t: record for t in task_ids if (record := store.get_task(t)) is not None}
    finally:
        store.close()


def _merge(record: TaskRecord | None) -> str:
    if record is None:
        return "-"
    return record.merge or ("pending" if record.status in _RUNNING else "not merged")


@worktrees_app.command("list")
def worktrees_list(cwd: CwdOption = None, as_json: JsonOption = False) -> None:
    """List agentcli's kept branches and live worktrees in this workspace's repository, oldest first."""
    from agentcli.subagents import age

    workspace = workspace_dir(cwd)
    found = _leftovers(workspace)
    records = _records([item.task_id for item in found])
    if as_json:
        print_json([{"task_id": item.task_id, "branch": item.branch, "worktree": str(item.path) if item.path else None,
                     "live": item.live, "pid": item.owner.pid if item.owner else None,
                     "status": records[item.task_id].status if item.task_id in records else None,
                     "merge": records[item.task_id].merge if item.task_id in records else None,
                     "since": item.since} for item in found])
        return
    if not found:
        echo("No agentcli worktrees or branches in this repository.")
        return
    rows = []
    for item in found:
        record = records.get(item.task_id)
        if item.path is None:
            where = "-"
        else:
            owner = f"pid {item.owner.pid}" if item.owner is not None else "no owner"
            where = f"{item.path} ({owner}, {'live' if item.live else 'process gone'})"
        rows.append([item.task_id, item.branch or "-", record.status if record else "-", _merge(record),
                     age(item.since), where])
    echo(table(["TASK", "BRANCH", "STATUS", "MERGE", "AGE", "WORKTREE"], rows))


@worktrees_app.command("prune")
def worktrees_prune(
    cwd: CwdOption = None,
    branches: Annotated[bool, typer.Option("--branches", help="Also remove the kept branches of finished tasks.")]
    = False,
) -> None:
    """Remove worktrees whose agentcli process is gone (their changes kept on their branch) and, with --branches,
    the kept branches of finished tasks."""
    from agentcli.subagents import WorktreeError, prune

    workspace = workspace_dir(cwd)
    records: dict[str, TaskRecord] = {}
    if branches:
        records = _records([item.task_id for item in _leftovers(workspace) if item.branch is not None])
    try:
        done = prune(workspace, branches=branches,
                     finished=lambda task_id: task_id not in records or records[task_id].status not in _RUNNING)
    except WorktreeError as exc:
        fail(str(exc))
    for line in done:
        echo(line)
    if not done:
        echo("Nothing to prune.")
