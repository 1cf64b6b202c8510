"""Switching the main agent's model: `/model`, a custom command's own `model:`, `--fallback-model` when the main
model fails, and the thinking effort. A mixin of `Conversation`: it works on the conversation's model, session
and agent loop, declared here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.events import EventBus, NoticeEvent
from agentcli.llm import ProviderError, ProviderPool, ResolvedModel, resolve_model

if TYPE_CHECKING:
    from agentcli.agent import AgentLoop, Session
    from agentcli.config import Settings
    from agentcli.subagents import SubagentRunner


class ModelSwitching:
    """The main agent's model, switched between turns or on a failure (the conversation's parts it uses below)."""

    settings: Settings
    model: ResolvedModel
    session: Session
    pool: ProviderPool
    runner: SubagentRunner
    bus: EventBus
    _loop: AgentLoop | None
    _fallback: str  # the model to go on with when the main one fails (--fallback-model)

    def set_model(self, spec: str) -> ResolvedModel:
        """Switch the main agent's model for the next turns (`/model`)."""
        return self.use_model(resolve_model(spec, self.settings))

    def use_model(self, model: ResolvedModel) -> ResolvedModel:
        """Switch the main agent to a model already resolved (`set_model`; the TUI gives the model back after a
        custom command's turn that used its own `model:`)."""
        self.model = model
        self.session.model = model
        if self._loop is not None:
            self._loop.provider = self.pool.get(model)
            self._loop.use_compactor(self.runner.compactor(self.session, self._loop.context))  # its own window
        return model

    def use_fallback(self, spec: str) -> None:
        """When the main model is overloaded or failing after its retries, go on with `spec` (the turn is tried again
        on it); `--fallback-model`. Raises what `resolve_model` raises for a spec that cannot be used."""
        resolve_model(spec, self.settings)  # a spec that cannot be used fails now, not when the main model does
        self._fallback = spec
        if self._loop is not None:
            self._loop.fallback = self._fall_back

    def arm_fallback(self, loop: AgentLoop) -> None:
        """Give a new agent loop the fallback model, when there is one."""
        if self._fallback:
            loop.fallback = self._fall_back

    def _fall_back(self, error: ProviderError) -> bool:
        from agentcli.llm import OverloadedError, ProviderConnectionError, RateLimitError, ServerError

        spec = self._fallback
        if not spec or not isinstance(error, OverloadedError | ServerError | RateLimitError | ProviderConnectionError):
            return False
        failed = self.model.display
        if self.set_model(spec).display == failed:
            return False
        self.bus(NoticeEvent(session_id=self.session.id, agent=self.session.agent,
                             message=f"{failed} failed ({str(error).splitlines()[0]}); going on with {spec}"))
        return True

    def use_effort(self, effort: str) -> None:
        """Think with `effort` (low | medium | high), as a Task call's `effort` does (`llm.models.with_effort`)."""
        from agentcli.llm import with_effort

        self.model = self.session.model = with_effort(self.model, effort)
