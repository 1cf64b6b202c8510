"""StoreRecorder: persists the event stream (sessions, messages, tool calls, usage, outcomes) without blocking."""

from __future__ import annotations

import logging

from agentcli.events import (
    AgentMessageEvent,
    CompactionEvent,
    HookRunEvent,
    MessageAddedEvent,
    MessageManager,
    RunFinishedEvent,
    SessionStartedEvent,
    SubagentEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    UsageEvent,
    unwrap,
)
from agentcli.llm import PROVIDERS
from agentcli.store.db import Store, StoreClosedError
from agentcli.store.jobs import WriteJob
from agentcli.store.writes import (
    add_agent_message,
    add_compaction,
    add_hook_run,
    add_message,
    add_usage,
    create_session,
    finish_session,
    tool_call_finished,
    tool_call_started,
)

log = logging.getLogger("agentcli.store")


def split_model(model: str) -> tuple[str | None, str]:
    """`provider:model` → (provider, model); a label such as `main` → (None, label)."""
    provider, sep, name = model.partition(":")
    if sep and provider in PROVIDERS and name:
        return provider, name
    return None, model


class StoreRecorder(MessageManager):
    """Subscribe it to the event stream: every event becomes a queued record (`Store.record`: an append,
    committed in batches off the event loop; `Store.flush`/`close` commit whatever is queued).

    Subagent events arrive wrapped in `SubagentEvent`; they are unwrapped (at any nesting depth) and
    recorded as the child session's own rows. Text deltas are not stored: the finished message is.
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    def _submit(self, job: WriteJob[None]) -> None:
        try:
            self.store.record(job)
        except StoreClosedError:
            log.debug("store closed: event not recorded")

    def on_session_started(self, event: SessionStartedEvent, agent_type: str | None = None) -> None:
        """A session began (its title comes from its first user message)."""
        if event.provider and event.model_id:
            provider: str | None = event.provider
            model = event.model_id
        else:
            provider, model = split_model(event.model)
        self._submit(
            create_session(
                event.session_id,
                model=model,
                provider=provider,
                workspace=event.workspace,
                agent=event.agent,
                depth=event.depth,
                parent_session_id=event.parent_session_id,
                task_id=event.task_id,
                agent_type=agent_type or event.agent_type,
            )
        )

    def on_message_added(self, event: MessageAddedEvent) -> None:
        """A message joined the history."""
        self._submit(add_message(event.session_id, event.seq, event.message))

    def on_tool_call_started(self, event: ToolCallStartedEvent) -> None:
        """A tool call began."""
        self._submit(tool_call_started(event.session_id, event.tool_call_id, event.name, event.args, event.summary))

    def on_tool_call_finished(self, event: ToolCallFinishedEvent) -> None:
        """A tool call ended."""
        self._submit(
            tool_call_finished(
                event.session_id,
                event.tool_call_id,
                event.name,
                is_error=event.is_error,
                output=event.output,
                duration_ms=event.duration_ms,
                files_modified=event.files_modified,
                code=event.code,
                short_result=event.short_result,
            )
        )

    def on_usage(self, event: UsageEvent) -> None:
        """One request's usage, into the ledger and the session's totals."""
        self._submit(add_usage(event.session_id, event.provider, event.model, event.usage, event.cost_usd,
                               estimated=event.estimated))

    def on_compaction(self, event: CompactionEvent) -> None:
        """A summary compaction is recorded (a resumed session starts from it); pruning changes no row."""
        if event.mode == "summary" and event.kept_from_seq is not None:
            self._submit(
                add_compaction(
                    event.session_id,
                    event.kept_from_seq,
                    event.summary,
                    trigger=event.trigger,
                    tokens_before=event.tokens_before,
                    tokens_after=event.tokens_after,
                )
            )

    def on_hook_run(self, event: HookRunEvent) -> None:
        """A hook command ran: one row, whatever it decided."""
        self._submit(add_hook_run(event))

    def on_agent_message(self, event: AgentMessageEvent) -> None:
        """A message to an agent of the tree: one row with sender, recipient and delivery."""
        self._submit(add_agent_message(event))

    def on_run_finished(self, event: RunFinishedEvent) -> None:
        """A run ended."""
        self._submit(finish_session(event.session_id, event.status, event.error, turns=event.turns))

    def on_subagent_event(self, event: SubagentEvent) -> None:
        """A child's event: record it as the child's own (the innermost wrapper names the child's type)."""
        wrappers, inner = unwrap(event)
        if isinstance(inner, SessionStartedEvent):
            innermost = wrappers[-1]
            if inner.task_id is None:
                inner = inner.model_copy(update={"task_id": innermost.task_id})
            self.on_session_started(inner, agent_type=innermost.subagent_type)
        else:
            self(inner)
