"""The usage ledger: what an agent spent itself, what its subagents spent, and the total.

One meaning everywhere (the loop, the Task runtime, task records, `SubagentBlockUpdatedEvent`,
the one-shot json, and the TUI's status bar and `/cost`, which read the main session's ledger):

- `own`: the requests this agent's own loop made.
- `delegated`: every request made anywhere in the delegation tree below it (its subagents, theirs,
  and so on), counted live as each request finishes, not when a subagent ends.
- `total` = `own` + `delegated`.

Tokens follow `Usage`: `input_tokens` excludes cache traffic (Anthropic's convention),
`cache_read_tokens` and `cache_write_tokens` are their own fields, `output_tokens` includes
thinking. A cost is None while no request had a known price; once one had, unknown prices count 0.

A task's figures (its record's tokens AND cost, its block's counters) are its subagent's `total`:
the whole subtree under that Task call, never only the subagent's own requests.
`task_tool.max_tokens` budgets that same total, all billed tokens (`Usage.total_tokens`: input,
output, cache reads and cache writes) of the subtree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentcli.llm import Usage


def add_cost(a: float | None, b: float | None) -> float | None:
    """Sum two costs where None means "no known price": None only when both are None."""
    if a is None:
        return b
    return a if b is None else a + b


@dataclass(frozen=True, slots=True)
class Spend:
    """Tokens, cost and number of some set of requests."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    requests: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.usage + other.usage, add_cost(self.cost_usd, other.cost_usd), self.requests + other.requests)

    def as_dict(self) -> dict[str, Any]:
        """The json shape: every token field and the cost."""
        u = self.usage
        return {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_read_tokens": u.cache_read_tokens,
            "cache_write_tokens": u.cache_write_tokens,
            "reasoning_tokens": u.reasoning_tokens,
            "cost_usd": self.cost_usd,
            "requests": self.requests,
        }


@dataclass(slots=True)
class Ledger:
    """One agent's ledger (see the module docstring for what each figure means)."""

    own: Spend = field(default_factory=Spend)
    delegated: Spend = field(default_factory=Spend)

    def add_own(self, usage: Usage, cost: float | None) -> None:
        """One request of this agent's own loop."""
        self.own = self.own + Spend(usage, cost, 1)

    def add_delegated(self, usage: Usage, cost: float | None) -> None:
        """One request made somewhere below this agent in the delegation tree."""
        self.delegated = self.delegated + Spend(usage, cost, 1)

    @property
    def total(self) -> Spend:
        """Own plus delegated."""
        return self.own + self.delegated

    def as_dict(self) -> dict[str, Any]:
        """The json shape everywhere (one-shot json, `sessions list/show --json`): own, delegated, total."""
        return {"own": self.own.as_dict(), "delegated": self.delegated.as_dict(), "total": self.total.as_dict()}
