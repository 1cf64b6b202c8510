"""The hooks around a turn's prompt: SessionStart (the first turn of a session) and UserPromptSubmit, and the
notes told once with the first turn, and what the model is told once with the next prompt (`for_model`)."""

from __future__ import annotations

from agentcli.agent import RunOutcome, Session
from agentcli.events import EventBus, NoticeEvent
from agentcli.hooks import HookEngine
from agentcli.llm import Message, TextBlock
from agentcli.text import defang_tags


class PromptHooks:
    """SessionStart's source until it fired for the current session (`startup`, `clear`, `resume`), and the
    hooks run on each prompt before it is sent."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.source: str | None = "startup"
        self.for_model: list[str] = []  # what the session learnt since the last prompt (a plugin joined), told once

    def restart(self, source: str) -> None:
        """A new session of the conversation (`clear`, `resume`): SessionStart fires with `source`, and what the
        last one's model was yet to be told is moot (the new prompt lists it)."""
        self.source, self.for_model = source, []

    async def apply(self, prompt: str | Message, session: Session, hooks: HookEngine,
                    notes: list[str]) -> tuple[str | Message, RunOutcome | None]:
        """Tell `notes`, then run SessionStart (first turn of a session) and UserPromptSubmit hooks: the prompt with
        what they add for the model, or the outcome of a prompt they block (it is not sent)."""
        context: list[str] = []
        for note in notes:
            self.bus(NoticeEvent(session_id=session.id, agent=session.agent, message=note))
        fire = hooks.fire
        if self.source is not None and hooks.has("SessionStart"):
            verdict = await fire("SessionStart", {"source": self.source}, session_id=session.id,
                                 agent=session.agent, emit=self.bus, target=self.source)
            context += verdict.context
        self.source = None
        if hooks.has("UserPromptSubmit"):
            blocks = [] if isinstance(prompt, str) else [b for b in prompt.content if isinstance(b, TextBlock)]
            text = prompt if isinstance(prompt, str) else blocks[0].text if blocks else ""  # the typed prompt
            verdict = await fire("UserPromptSubmit", {"prompt": text}, session_id=session.id, agent=session.agent,
                                 emit=self.bus)
            if verdict.blocked or verdict.stop:
                why = verdict.reason if verdict.blocked else verdict.stop_reason or verdict.reason
                return prompt, RunOutcome("failed", "", 0, f"prompt blocked by a UserPromptSubmit hook: {why}")
            context += verdict.context
        told, self.for_model = self.for_model, []  # kept while prompts are blocked
        if not context and not told:
            return prompt, None
        message = Message.user(prompt) if isinstance(prompt, str) else prompt
        lines = [*told, *("Hook context: " + c for c in context)]
        extra = [TextBlock(text=f"<system-notice>{defang_tags(line)}</system-notice>") for line in lines]
        return Message(role=message.role, content=[*message.content, *extra]), None
