"""Session: one agent's conversation, identity, place in the delegation tree and usage."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.llm.base import Message, Usage
from agentcli.llm.models import ResolvedModel

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
    id: str = field(default_factory=lambda: new_id("ses"))
    agent: str = "main"  # label: main, explore#2
    agent_type: str = "main"
    depth: int = 0
    chain: tuple[str, ...] = ("main",)  # agent types from the root to this session
    lineage: tuple[tuple[str, str], ...] = ()  # (type, normalized prompt) of each delegation above
    parent_session_id: str | None = None
    task_id: str | None = None
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    turns: int = 0
    tool_calls: int = 0
    delegated_usage: Usage = field(default_factory=Usage)  # rolled up from every subagent below
    delegated_cost_usd: float | None = None

    def append(self, message: Message) -> int:
        """Add a message to the history; returns its sequence number."""
        self.messages.append(message)
        return len(self.messages) - 1

    def add_usage(self, usage: Usage, cost: float | None) -> None:
        """Account one request's usage and cost."""
        self.usage = self.usage + usage
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    def add_delegated(self, usage: Usage, cost: float | None) -> None:
        """Roll a finished subagent's usage (its own and its subtree's) up into this session."""
        self.delegated_usage = self.delegated_usage + usage
        if cost is not None:
            self.delegated_cost_usd = (self.delegated_cost_usd or 0.0) + cost

    @property
    def total_usage(self) -> Usage:
        """This session's usage plus everything it delegated."""
        return self.usage + self.delegated_usage

    @property
    def total_cost_usd(self) -> float | None:
        """This session's cost plus its subagents', None when no price is known."""
        if self.cost_usd is None and self.delegated_cost_usd is None:
            return None
        return (self.cost_usd or 0.0) + (self.delegated_cost_usd or 0.0)
