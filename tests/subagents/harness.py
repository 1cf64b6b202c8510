"""In-process harness for the subagent runtime: the real runner, loops and store against a scripted model.

The model is a `ScriptedLLM` (in-process, no SDK, no HTTP) unless a test hands `build_harness` a
`FakeLLMServer`, when the real SDKs talk to it over 127.0.0.1 (for tests about the request bodies).
Both take the same `Script` steps; recorded requests of both have a `.body` the helpers below read.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentcli.agent.loop import AgentLoop, RunOutcome
from agentcli.agent.session import Session
from agentcli.config.load import Settings, load_config
from agentcli.conversation import main_agent_tools
from agentcli.events import Event, EventBus, SubagentEvent
from agentcli.llm.base import RetryPolicy
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.llm.usage import Usage
from agentcli.store.db import Store
from agentcli.store.recorder import StoreRecorder
from agentcli.subagents.budget import SessionBudget
from agentcli.subagents.definitions.registry import AgentRegistry
from agentcli.subagents.runner import PriceFn, SubagentRunner
from agentcli.subagents.task_tool import ParentLink
from agentcli.testing.fake_llm import FakeLLMServer, RecordedRequest, ToolCall
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, ScriptedRequest, Step
from agentcli.tools.base import ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy

MAIN = "You are the main agent under test."

ModelServer = FakeLLMServer | ScriptedLLM
"""Where the harness's model requests go."""
AnyRequest = RecordedRequest | ScriptedRequest


def task_call(description: str, prompt: str, subagent_type: str = "explore", **extra: Any) -> ToolCall:
    """A Task tool call in a scripted reply."""
    return ToolCall(
        name="Task",
        input={"description": description, "prompt": prompt, "subagent_type": subagent_type, **extra},
    )


def sub(description: str) -> str:
    """The part of a subagent's system prompt that names its task (for `Match(system_contains=...)`)."""
    return f"# Task\n{description}"


def system_of(request: AnyRequest) -> str:
    """A recorded Anthropic (or scripted) request's system prompt as text."""
    system = request.body.get("system", "")
    if isinstance(system, list):
        return "\n".join(str(block.get("text", "")) for block in system)
    return str(system)


def tools_of(request: AnyRequest) -> set[str]:
    """The tool names a recorded Anthropic (or scripted) request offered, the deferred ones its system prompt names
    included (what the agent has; ToolSearch itself is how they are offered, not a tool of its own)."""
    names = {str(t["name"]) for t in request.body.get("tools") or []} - {"ToolSearch"}
    system = request.body.get("system") or ""
    text = system if isinstance(system, str) else "".join(str(block.get("text", "")) for block in system)
    deferred = text.split("# Deferred tools\n", 1)[1] if "# Deferred tools\n" in text else ""
    return names | set(re.findall(r"^- ([\w-]+): ", deferred, re.MULTILINE))


def requests_for(server: ModelServer, text: str) -> list[AnyRequest]:
    """The requests whose system prompt contains `text`, in arrival order."""
    requests: list[AnyRequest] = list(server.requests)
    return [r for r in requests if text in system_of(r)]


def write_agent(workspace: Path, name: str, description: str, body: str = "", tools: str | None = None) -> None:
    """A project agent file `.agentcli/agents/<name>.md`."""
    folder = workspace / ".agentcli" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    front = f"name: {name}\ndescription: {description}\n" + (f"tools: {tools}\n" if tools is not None else "")
    (folder / f"{name}.md").write_text(f"---\n{front}---\n{body or f'You are the {name}.'}\n", encoding="utf-8")


@dataclass
class Harness:
    """One main agent with a SubagentRunner, wired like `agentcli run` but in-process."""

    server: ModelServer
    workspace: Path
    settings: Settings
    registry: AgentRegistry
    store: Store
    pool: ProviderPool
    runner: SubagentRunner
    session: Session
    loop: AgentLoop
    events: list[Event] = field(default_factory=list)
    bus: EventBus = field(default_factory=EventBus)
    budget: SessionBudget | None = None  # [budget], subscribed to the bus as the conversation does

    async def run(self, prompt: str = "go", timeout: float = 15.0) -> RunOutcome:
        """Run the main agent on `prompt` to its end."""
        async with asyncio.timeout(timeout):
            return await self.loop.run(prompt)

    def subagent_events(self, task_id: str | None = None) -> list[SubagentEvent]:
        """Every wrapped child event (of one task when given)."""
        return [e for e in self.events if isinstance(e, SubagentEvent) and (task_id is None or e.task_id == task_id)]

    async def wait_for(self, condition: Callable[[], bool], timeout: float = 5.0) -> None:
        """Wait (bounded) until `condition()` holds, letting the event loop run meanwhile."""
        async with asyncio.timeout(timeout):
            while not condition():
                await asyncio.sleep(0.005)

    async def aclose(self) -> None:
        """End the session: cancel leftovers, close clients and the store."""
        await self.runner.aclose()
        await self.pool.aclose()
        if not self.store.closed:  # another harness may share it
            await self.store.flush()
            self.store.close()


Make = Callable[..., Harness]
"""The `make` fixture: builds a harness (overrides, then build_harness's keywords)."""


def build_harness(
    server: ModelServer,
    workspace: Path,  # its parent holds the database
    monkeypatch: pytest.MonkeyPatch,
    overrides: dict[str, object] | None = None,
    *,
    registry: AgentRegistry | None = None,
    store: Store | None = None,
    system_prompt: str = MAIN,
    max_turns: int = 10,
    price: PriceFn | None = None,
) -> Harness:
    """Settings, registry, store, pool, runner, main session and loop for one test.

    `price` prices every request (the runner's and the main loop's); without it costs are unknown.
    """
    policy = RetryPolicy(max_retries=0)
    pool: ProviderPool
    if isinstance(server, FakeLLMServer):
        base_url: str | None = server.base_url
        pool = ProviderPool(policy)
    else:
        base_url, pool = None, server.pool(policy)
    env = {"ANTHROPIC_API_KEY": "k"} | ({"ANTHROPIC_BASE_URL": base_url} if base_url else {})
    for name, value in env.items():
        monkeypatch.setenv(name, value)  # resolve_model(spec, settings) reads os.environ
    cfg: dict[str, object] = {"models.main.model": "m", "models.light.model": "m-light"}
    cfg.update(overrides or {})
    settings = load_config(workspace=workspace, env=env, overrides=cfg).settings
    registry = registry if registry is not None else AgentRegistry.load(workspace)
    store = store if store is not None else Store.open(workspace.parent / "db.sqlite")
    permissions = PermissionPolicy("auto")
    runner = SubagentRunner(
        settings=settings,
        registry=registry,
        pool=pool,
        workspace=workspace,
        permissions=permissions,
        store=store,
        price=price,
    )
    model = ResolvedModel("main", "anthropic", "m", base_url, "k", 1024)
    session = Session(system_prompt=system_prompt, model=model, workspace=workspace)
    events: list[Event] = []
    bus = EventBus()
    bus.subscribe(events.append)
    bus.subscribe(StoreRecorder(store))
    runner.cache.attach(bus)  # as the conversation does: reused results see every agent's tool calls
    context = ToolContext(
        workspace=workspace,
        agent="main",
        session_id=session.id,
        permissions=permissions,
        file_locks=runner.file_locks,
    )
    loop = AgentLoop(
        session,
        pool.get(model),
        main_agent_tools(runner, ParentLink(session, bus)),
        context,
        bus,
        max_turns=max_turns,
        price=price,
        notices=runner.notices_for(session.id),
    )
    budget = SessionBudget(
        settings.budget, session, loop, lambda reason: runner.stop_all("budget_exceeded", reason), bus, runner.prices
    )
    bus.subscribe(budget)
    return Harness(server, workspace, settings, registry, store, pool, runner, session, loop, events, bus, budget)


def main_step(turn: int, reply: Reply, **match: Any) -> Step:
    """A scripted reply of the main agent at `turn`."""
    return Step(match=Match(system_contains=MAIN, turn=turn, **match), reply=reply)


def price(provider: str, model: str, usage: Usage) -> float:
    """A made-up price: a thousandth of a dollar per input token, a hundredth per output token."""
    return usage.input_tokens * 0.001 + usage.output_tokens * 0.01
