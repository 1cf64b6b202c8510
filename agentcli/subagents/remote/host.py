"""`RemoteWorker`: the Ray actor (made remote by `executor.py`) that runs remote subagents, up to `[executor]
subagents_per_worker` at once in one process (a subagent mostly waits on its model: one process, which costs seconds
of CPU to start and imports agentcli, serves several), each a `worker.RemoteAgent` of its own (its checkout, loop,
event queue and what it asked the parent). Every method names its task; one task's failure, stop or cancel leaves
the others running."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentcli.subagents.remote.job import Finished, PolicyRules, RemoteError, RemoteJob
from agentcli.subagents.remote.worker import RemoteAgent

if TYPE_CHECKING:
    from agentcli.agent import RunOutcome
    from agentcli.events import Event
    from agentcli.subagents.remote.job import Asked, Unread


class RemoteWorker:
    """The subagents one worker process runs, by task id."""

    def __init__(self) -> None:
        self.agents: dict[str, RemoteAgent] = {}

    def _agent(self, task_id: str) -> RemoteAgent:
        agent = self.agents.get(task_id)
        if agent is None:
            raise RemoteError(f"task {task_id} is not on this worker")
        return agent

    async def prepare(self, task_id: str, job: RemoteJob, key: str) -> None:
        """Check the task's snapshot out and build its loop with its model `key` (what it left behind is removed
        when this fails)."""
        agent = self.agents[task_id] = RemoteAgent()
        try:
            await agent.prepare(job, key)
        except BaseException:
            self.agents.pop(task_id, None)
            await agent.finish()
            raise

    async def run(self, task_id: str, message: str) -> AsyncIterator[list[Event | Asked | Unread] | RunOutcome]:
        """One turn of the task's loop: its events in batches, then its outcome (`RemoteAgent.run`)."""
        async for item in self._agent(task_id).run(message):
            yield item

    def stop(self, task_id: str, status: str, reason: str) -> bool:
        """End the task's running turn as the parent's supervisor asked (a cancel, a budget, a timeout)."""
        agent = self.agents.get(task_id)
        return agent is not None and agent.stop(status, reason)

    async def answer(self, task_id: str, number: int, reply: Any, rules: PolicyRules) -> None:
        if (agent := self.agents.get(task_id)) is not None:
            await agent.answer(number, reply, rules)

    async def follow(self, task_id: str, rules: PolicyRules) -> None:
        if (agent := self.agents.get(task_id)) is not None:
            await agent.follow(rules)

    async def deliver(self, task_id: str, letters: list[str]) -> None:
        if (agent := self.agents.get(task_id)) is not None:
            await agent.deliver(letters)

    async def finish(self, task_id: str) -> Finished:
        """What the task changed; its folder is removed and it leaves this worker."""
        agent = self.agents.pop(task_id, None)
        if agent is None:
            return Finished([], "the task never started")
        return await agent.finish()

    async def abort(self, task_id: str) -> None:
        """The parent gave up on the task (its run was cancelled): end its turn, drop what it changed."""
        agent = self.agents.pop(task_id, None)
        if agent is not None:
            agent.stop("cancelled", "cancelled")
            await agent.finish()

    def load(self) -> int:
        """How many tasks it runs now."""
        return len(self.agents)

    def pid(self) -> int:
        """The worker process's id (tests: where the subagents run)."""
        return os.getpid()
