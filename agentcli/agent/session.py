"""Session: one agent's conversation, identity, place in the delegation tree and usage ledger."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.agent.ledger import Ledger
from agentcli.llm import Message, ResolvedModel, ToolResultBlock, Usage

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def new_id(prefix: str) -> str:
    """A short, time-sortable id: `ses_` + base36 milliseconds + random."""
    ms = time.time_ns() // 1_000_000
    stamp = ""
    while ms:
        ms, digit = divmod(ms, 36)
        stamp = _ALPHABET[digit] + stamp
    return f"{prefix}_{stamp}{secrets.token_hex(3)}"


@dataclass(slots=True)
class Session:
    """State owned by exactly one AgentLoop; a child session never references its parent's messages."""

    system_prompt: str
    model: ResolvedModel
    workspace: Path
    system_stable: int = 0  # leading characters of system_prompt that do not change per day or commit (caching)
    id: str = field(default_factory=lambda: new_id("ses"))
    agent: str = "main"  # label: main, explore#2
    agent_type: str = "main"
    depth: int = 0
    chain: tuple[str, ...] = ("main",)  # agent types from the root to this session
    lineage: tuple[tuple[str, str], ...] = ()  # (type, normalized prompt) of each delegation above
    parent_session_id: str | None = None
    task_id: str | None = None
    messages: list[Message] = field(default_factory=list)  # the context the next request sends
    next_seq: int = 0  # stored sequence number of the next message (compaction shortens `messages`, not this)
    ledger: Ledger = field(default_factory=Ledger)  # own, delegated (the subtree below) and total usage
    turns: int = 0
    images_off: bool = False  # the model refused images: requests leave them out (`agent/image_refusal`)

    def append(self, message: Message) -> int:
        """Add a message to the context; returns its stored sequence number."""
        self.messages.append(message)
        seq, self.next_seq = self.next_seq, self.next_seq + 1
        return seq

    def last_text(self) -> str:
        """The latest assistant text of the context ("" when there is none): what a stopped run produced so far."""
        for message in reversed(self.messages):
            if message.role == "assistant" and (text := message.text()):
                return text
        return ""

    @property
    def usage(self) -> Usage:
        """Tokens of this agent's own requests (`ledger.own`)."""
        return self.ledger.own.usage

    @property
    def total_usage(self) -> Usage:
        """Tokens of this agent and everything below it (`ledger.total`)."""
        return self.ledger.total.usage

    @property
    def total_cost_usd(self) -> float | None:
        """Cost of this agent and everything below it, None when no price is known (`ledger.total`)."""
        return self.ledger.total.cost_usd


def answer_open_calls(messages: list[Message], text: str) -> Message | None:
    """The tool results a stored history still owes (its process died between a tool call and its result),
    each an error `text`, so a resumed session's next request is valid; None when nothing is owed."""
    if not messages or messages[-1].role != "assistant":
        return None
    calls = messages[-1].tool_uses()
    if not calls:
        return None
    return Message(role="user", content=[ToolResultBlock(tool_use_id=c.id, content=text, is_error=True) for c in calls])
