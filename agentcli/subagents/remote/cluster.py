"""The session's link to its Ray cluster (`RayExecutor`): Ray imported and the cluster joined at the first remote
task, never before; the worker processes (`host.RemoteWorker` actors) its remote tasks run in, each serving up to
`[executor] subagents_per_worker` tasks at once and reserving the CPUs and memory of that many; idle workers kept
for the next tasks up to `keep_warm`; a lost worker dropped and ended."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentcli.subagents.remote.host import RemoteWorker
from agentcli.subagents.remote.job import RemoteError
from agentcli.text import one_line

if TYPE_CHECKING:
    from agentcli.config import ExecutorSettings


@dataclass(eq=False, slots=True)
class Worker:
    """One worker process of the session: its actor, how many tasks it takes, its tasks now."""

    actor: Any
    slots: int  # how many tasks it takes at once (it reserves their resources)
    tasks: int = 0


class RayExecutor:
    """Where the session's remote tasks run (`[executor]`)."""

    def __init__(self, settings: ExecutorSettings) -> None:
        self.settings = settings
        self._lock = asyncio.Lock()
        self._actor: Any = None  # RemoteWorker as a Ray actor class
        self._started = False  # this process called ray.init (and shuts it down)
        self.workers: list[Worker] = []

    def unavailable(self) -> str | None:
        """Why a remote task cannot run here (one line), or None."""
        if self.settings.kind != "ray":
            return 'isolation "remote" needs [executor] kind = "ray" (a Ray cluster to run on)'
        if importlib.util.find_spec("ray") is None:
            return "isolation \"remote\" needs Ray, which is not installed: pip install 'agentcli[ray]'"
        return None

    async def _actor_class(self) -> Any:
        """`RemoteWorker` as an actor class, the cluster joined first (under `_lock`). Raises `RemoteError`."""
        if self._actor is None:
            await asyncio.to_thread(self._connect)
            import ray

            self._actor = ray.remote(max_restarts=0, max_task_retries=0)(RemoteWorker)
        return self._actor

    def _connect(self) -> None:
        import ray

        if ray.is_initialized():
            return
        address = self.settings.address or None
        try:
            ray.init(address=address, namespace="agentcli", log_to_driver=False, logging_level=logging.WARNING,
                     configure_logging=False, include_dashboard=False if address is None else None)
        except Exception as exc:
            raise RemoteError(f"cannot reach the Ray cluster at {address or 'RAY_ADDRESS'}: {one_line(exc)}"
                              [:300]) from None
        self._started = True

    async def lease(self) -> tuple[Worker, bool]:
        """A worker with room for one more task (the fullest such, so fewer processes run), else a new one; and
        whether it is new."""
        async with self._lock:  # siblings that start together fill one worker before the next is made
            room = [w for w in self.workers if w.tasks < w.slots]
            if room:
                worker, new = max(room, key=lambda w: w.tasks), False
            else:
                cls = await self._actor_class()
                slots = await asyncio.to_thread(self._slots)
                worker, new = Worker(cls.options(**self.options(slots)).remote(), slots), True
                self.workers.append(worker)
            worker.tasks += 1
            return worker, new

    def give_back(self, worker: Worker, lost: bool = False) -> None:
        """A task left `worker` (`lost`: the worker died under it, so it is dropped and ended); an idle worker past
        `keep_warm` is ended."""
        worker.tasks -= 1
        if worker not in self.workers:
            return
        idle = [w for w in self.workers if w.tasks == 0]
        if lost or (worker.tasks == 0 and len(idle) > self.settings.keep_warm):
            self.workers.remove(worker)
            kill(worker.actor)

    def _slots(self) -> int:
        """`subagents_per_worker`, fewer when the largest node of the cluster could not hold that many tasks'
        CPUs (a worker must fit on one node); as configured while no node has CPUs (an autoscaler adds them)."""
        import ray

        wanted = self.settings.subagents_per_worker
        nodes: Callable[[], list[dict[str, Any]]] = ray.nodes
        try:
            largest = max((float(n["Resources"].get("CPU", 0.0)) for n in nodes() if n.get("Alive")), default=0.0)
        except Exception:  # the cluster's state cannot be read: as configured
            return wanted
        return max(1, min(wanted, int(largest // self.settings.num_cpus))) if largest else wanted

    def options(self, tasks: int) -> dict[str, Any]:
        """A worker's actor options: the resources of its `tasks` (no key: each task's comes with its call)."""
        found: dict[str, Any] = {"num_cpus": self.settings.num_cpus * tasks}
        if self.settings.memory_mb:
            found["memory"] = (self.settings.memory_mb * tasks) << 20
        return found

    async def aclose(self) -> None:
        """End the workers and leave the cluster (a Ray started by this process stops with it)."""
        for worker in self.workers:
            kill(worker.actor)
        self.workers.clear()
        if self._started:
            import ray

            self._started = False
            await asyncio.to_thread(ray.shutdown)


def kill(actor: Any) -> None:
    """End `actor`, whatever state it or its cluster is in."""
    import ray

    with contextlib.suppress(Exception):
        ray.kill(actor, no_restart=True)
