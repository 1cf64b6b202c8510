"""`/resume` (and `agentcli --resume` without an ID): a modal list of this workspace's recent sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.figures import format_cost
from agentcli.text import terminal_safe
from agentcli.ui.widgets.picker import ListPicker

if TYPE_CHECKING:
    from agentcli.agent import Ledger
    from agentcli.store import SessionRecord

TITLE_CHARS = 60


def session_label(record: SessionRecord, spent: Ledger) -> str:
    """`fix the login bug · 2026-11-24 10:02 · anthropic:claude-x · $0.0123 · ses_…` (terminal-safe)."""
    title = record.title or "(untitled)"
    title = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
    when = record.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
    model = f"{record.provider}:{record.model}" if record.provider else record.model or "-"
    total = spent.total
    cost = format_cost(total.cost_usd) if total.requests else "-"
    return terminal_safe(f"{title} · {when} · {model} · {cost} · {record.id}")


class SessionPicker(ListPicker):
    """Pick a session to resume (most recent first)."""

    def __init__(self, choices: list[tuple[str, str]]) -> None:
        super().__init__("Resume which session?", choices)
