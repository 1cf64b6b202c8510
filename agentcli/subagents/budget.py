"""Budgets: what a Task call's subtree and a whole session may spend, and the checks that enforce them.

Figures are the usage ledger's (`agentcli.agent.ledger`): a task's budget holds its subagent's
`total` (the whole subtree below the Task call), a session's budget the main session's `total`
(the main agent and every subagent under it), tokens as `Usage.total_tokens` (input, output,
cache reads and writes). A dollar budget holds where prices are known: a request of a model with
no known price counts $0, and the person is told once per session that dollar limits cannot be
checked for that model (`PriceNotices`); token budgets hold regardless.

The supervisor checks a task's `Budgets` after each request below it; `SessionBudget` subscribes
to the main session's event stream and, when the tree passes `[budget]`, stops every running
subagent and the main agent's turn, all with status `budget_exceeded`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentcli.agent import Spend
from agentcli.events import Event, EventSink, NoticeEvent, UsageEvent, unwrap

if TYPE_CHECKING:
    from agentcli.agent import AgentLoop, Session
    from agentcli.config import BudgetSettings


def token_reason(used: int, limit: int, what: str = "token budget") -> str:
    """Why a token budget stopped the work: what was spent against the limit."""
    return f"{what} exceeded: {used} > {limit} tokens"


def cost_reason(cost: float, limit: float, what: str = "cost budget") -> str:
    """Why a dollar budget stopped the work: what was spent against the limit."""
    return f"{what} exceeded: ${cost:.4f} > ${limit:.4f}"


def over(spend: Spend, max_tokens: int | None, max_cost_usd: float | None, prefix: str = "") -> str | None:
    """The reason `spend` is over a token or dollar limit (None: within both, or no limit set).

    A cost of None (no known price yet) cannot be over a dollar limit.
    """
    used = spend.usage.total_tokens
    if max_tokens is not None and used > max_tokens:
        return token_reason(used, max_tokens, f"{prefix}token budget")
    cost = spend.cost_usd
    if max_cost_usd is not None and cost is not None and cost > max_cost_usd:
        return cost_reason(cost, max_cost_usd, f"{prefix}cost budget")
    return None


@dataclass(frozen=True, slots=True)
class Budgets:
    """A subagent's limits besides its wall-clock timeout (the Task call's, else task_tool's)."""

    max_tokens: int  # the task's subtree, every billed token (see agentcli.agent.ledger)
    max_tool_calls: int  # the subagent's own calls
    idle_seconds: float  # no model output and no tool in flight for this long: stop
    max_cost_usd: float | None = None  # the task's subtree, where prices are known; None: no limit

    def exceeded(self, spend: Spend) -> str | None:
        """Why the task's subtree, having spent `spend`, must stop (None: within its budgets)."""
        return over(spend, self.max_tokens, self.max_cost_usd)


@dataclass(slots=True)
class PriceNotices:
    """Unpriced models already reported in one session tree: each kind of dollar budget (the session's,
    the tasks') says so once per model, so every budget that goes unchecked is named."""

    told: set[tuple[str, str]] = field(default_factory=set)  # (provider:model, budget kind)

    def check(
        self, usage: UsageEvent, limit: str, emit: EventSink, session_id: str, agent: str, kind: str = "session"
    ) -> None:
        """Tell `emit` once per model and budget `kind` when `usage` had no known price while the dollar budget
        `limit` (its text for the person) applies."""
        if usage.cost_usd is not None:
            return
        model = f"{usage.provider}:{usage.model}"
        if (model, kind) in self.told:
            return
        self.told.add((model, kind))
        line = (
            f"no price is known for {model}: {limit} cannot be checked for its requests "
            "(they count $0; token budgets still hold)"
        )
        emit(NoticeEvent(session_id=session_id, agent=agent, message=line))


class SessionBudget:
    """`[budget]` of one session tree, as a subscriber of the main session's events.

    After each request anywhere in the tree (a `UsageEvent`, wrapped or not) it compares the main
    session's ledger total with `session_max_tokens` and `session_max_usd`; the first time it is
    over, it stops every running subagent (`stop_subagents`) and the main agent's turn, with status
    `budget_exceeded` and the reason, which says what was spent against which limit.
    """

    def __init__(
        self,
        limits: BudgetSettings,
        session: Session,
        loop: AgentLoop,
        stop_subagents: Callable[[str], None],
        emit: EventSink,
        prices: PriceNotices,
    ) -> None:
        self.limits = limits
        self.session = session
        self.loop = loop
        self.stop_subagents = stop_subagents
        self.emit = emit  # where the unknown-price notice goes (the main session's stream)
        self.prices = prices
        self.tripped: str | None = None  # the reason, once the session went over

    def exceeded(self) -> str | None:
        """Why the session may spend no more (None: within its budgets, or none set)."""
        limits, total = self.limits, self.session.ledger.total
        checks = (
            (limits.session_max_tokens, None, "session_max_tokens"),
            (None, limits.session_max_usd, "session_max_usd"),
        )
        for max_tokens, max_cost_usd, key in checks:
            if reason := over(total, max_tokens, max_cost_usd, "session "):
                return f"{reason} (budget.{key})"
        return None

    def __call__(self, event: Event) -> None:
        _, inner = unwrap(event)
        if not isinstance(inner, UsageEvent):
            return
        if self.limits.session_max_usd is not None:
            self.prices.check(inner, "budget.session_max_usd", self.emit, self.session.id, self.session.agent)
        if self.tripped is not None:
            return
        reason = self.exceeded()
        if reason is None:
            return
        self.tripped = reason
        self.stop_subagents(reason)
        self.loop.stop("budget_exceeded", reason)
