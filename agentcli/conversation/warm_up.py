"""What the first answer or the first Task call would otherwise wait for, done ahead: the schema of relayed
subagent events (~10 ms; first, as a Task call can follow the first answer at once) and the price and model table
(its first lookup takes ~0.1 s; the cost and the context window of the model read it)."""

from __future__ import annotations

import logging

from agentcli.events import build_relay_schema
from agentcli.llm import ResolvedModel, Usage, context_window, cost_usd

log = logging.getLogger(__name__)


def warm_up(model: ResolvedModel) -> None:
    """Build the relay schema and load the price and model table for `model`."""
    build_relay_schema()
    cost_usd(model.provider, model.model, Usage())
    context_window(model.provider, model.model)


def warm_up_quietly(model: ResolvedModel) -> None:
    """`warm_up` in a daemon thread: a broken table is said by the first cost looked up, not here."""
    try:
        warm_up(model)
    except Exception:
        log.debug("warm-up failed", exc_info=True)
