"""Subagents on a Ray cluster (`isolation: "remote"`, `[executor] kind = "ray"`): nothing here imports Ray until a
remote task starts.

- `job.py`: what travels to the worker (`RemoteJob`), what the worker asks of the parent while it runs (`Question`,
  `McpCall`, `HookCall`, `ToolHere`) and what comes back at the end (`Finished`, the task's file changes), and
  applying those changes to the task's local worktree;
- `snapshot.py`: the worktree's snapshot as a git bundle, its checkout on the worker, and what changed there;
- `worker.py`: one task on the worker (`RemoteAgent`): its checkout, its `AgentLoop`, its event stream;
- `host.py`: the Ray actor (`RemoteWorker`), one process that runs several tasks' `RemoteAgent`s;
- `cluster.py`: the session's link to the cluster (`RayExecutor`): joining it, the worker processes, keeping idle
  ones;
- `parent_side.py`: what the parent serves a running remote task (the person, hooks, MCP, messaging, letters);
- `executor.py`: the parent's stand-in for the subagent's loop (`RemoteLoop`): the worker's events relayed live,
  its stop, its faults, its changes brought back; and the job it sends (`make_job`).

Its modules are its face; other packages import their names from `agentcli.subagents`.
"""

__all__ = [
    "cluster",
    "executor",
    "host",
    "job",
    "parent_side",
    "snapshot",
    "worker",
]
