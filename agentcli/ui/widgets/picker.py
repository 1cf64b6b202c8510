"""`ListPicker`: the TUI's modal pick-one list (`/resume`'s sessions, `/plugin browse`'s plugins)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class ListPicker(ModalScreen[str | None]):
    """Pick one of `choices` (id, label): Enter (or a click) picks, Esc gives up. Dismisses with its id or None.
    Labels are shown as plain text: make them terminal-safe."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    ListPicker {
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
    #picker-choices {
        height: auto;
        max-height: 20;
    }
    """

    def __init__(self, question: str, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.question = question
        self.choices = choices

    def compose(self) -> Any:
        """The question and the list."""
        with Vertical(id="picker-dialog"):
            yield Static(f"{self.question} Enter picks, Esc cancels.", markup=False)
            yield OptionList(*(Option(Content(label), id=cid) for cid, label in self.choices), id="picker-choices")

    def on_mount(self) -> None:
        """The list takes the keys."""
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """A choice was picked."""
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Esc: nothing picked."""
        self.dismiss(None)
