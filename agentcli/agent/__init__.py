"""The agent loop: `AgentLoop` runs one agent's turns; `model_request` builds, sizes and streams one request,
`tool_calls` runs a turn's calls (`edit_diagnostics`: what the language servers say of its edits and
reads), `tool_offer` says which tools a request offers (a small window's lean prompt),
`spending` and `ledger` count what requests cost, `session` holds an agent's messages, `compaction` keeps its context
in its window and `cuts` says why a reply was cut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.agent.compaction import (
        Compaction,
        Compactor,
        ContextPolicy,
        Discover,
        Facts,
        SummaryReply,
        model_summarizer,
        window_and_source,
    )
    from agentcli.agent.ledger import Ledger, Spend
    from agentcli.agent.loop import AgentLoop, RunOutcome
    from agentcli.agent.session import Session, answer_open_calls, new_id
    from agentcli.agent.tool_calls import CANCELLED_RESULT
    from agentcli.agent.tool_offer import Offered

__all__ = [
    "CANCELLED_RESULT",
    "AgentLoop",
    "Compaction",
    "Compactor",
    "ContextPolicy",
    "Discover",
    "Facts",
    "Ledger",
    "Offered",
    "RunOutcome",
    "Session",
    "Spend",
    "SummaryReply",
    "answer_open_calls",
    "model_summarizer",
    "new_id",
    "window_and_source",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.agent.compaction": [
        "Compaction",
        "Compactor",
        "ContextPolicy",
        "Discover",
        "Facts",
        "SummaryReply",
        "model_summarizer",
        "window_and_source",
    ],
    "agentcli.agent.ledger": ["Ledger", "Spend"],
    "agentcli.agent.loop": ["AgentLoop", "RunOutcome"],
    "agentcli.agent.tool_offer": ["Offered"],
    "agentcli.agent.session": ["Session", "answer_open_calls", "new_id"],
    "agentcli.agent.tool_calls": ["CANCELLED_RESULT"],
})
