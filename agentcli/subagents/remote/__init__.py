"""Subagents on a Ray cluster (`isolation: "remote"`, `[executor] kind = "ray"`): nothing here imports Ray until a
remote task starts.

- `job.py`: what travels to the worker (`RemoteJob`) and back (`Finished`, the task's file changes), and applying
  those changes to the task's local worktree;
- `snapshot.py`: the worktree's snapshot as a git bundle, its checkout on the worker, and what changed there;
- `worker.py`: the worker's side, a Ray actor running the subagent's `AgentLoop` in its own checkout;
- `executor.py`: the parent's side, connecting to the cluster and standing in for the subagent's loop
  (`RemoteLoop`): the worker's events relayed live, its stop, its faults.

Its modules are its face; other packages import their names from `agentcli.subagents`.
"""

__all__ = [
    "executor",
    "job",
    "snapshot",
    "worker",
]
