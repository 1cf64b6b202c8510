"""`/resume` (and `agentcli --resume` without an ID): a modal list of this workspace's recent sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agentcli.figures import format_cost
from agentcli.text import terminal_safe

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


class SessionPicker(ModalScreen[str | None]):
    """Pick a session to resume: Enter (or a click) picks, Esc gives up. Dismisses with its id or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    SessionPicker {
        align: center middle;
    }
    #picker-dialog {
        width: 90%;
        max-width: 140;
        height: auto;
        max-height: 80%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    #picker-sessions {
        height: auto;
        max-height: 20;
    }
    """

    def __init__(self, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.choices = choices  # (session id, label)

    def compose(self) -> Any:
        """The question and the list, most recent first."""
        with Vertical(id="picker-dialog"):
            yield Static("Resume which session? Enter picks, Esc cancels.", markup=False)
            yield OptionList(*(Option(Content(label), id=sid) for sid, label in self.choices), id="picker-sessions")

    def on_mount(self) -> None:
        """The list takes the keys."""
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """A session was picked."""
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Esc: resume nothing."""
        self.dismiss(None)
