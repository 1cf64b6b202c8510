"""AskUserQuestion in the TUI: a modal that puts the model's questions to the person, one after the other.

Each question shows its chip (`header`), its text and its options, numbered, with "Other…" last. ↑/↓ move, a
number picks (toggles in a multiSelect question), Space toggles, Enter chooses the highlighted option (confirms the
toggled ones in a multiSelect question). "Other…" opens a line to type an answer in; Enter there answers with it
(with the toggled options of a multiSelect question), Esc there goes back to the options. Esc on the options
declines every question: the model is told the person declined to answer.

Everything shown comes from the model and is untrusted: it is made terminal-safe and drawn as plain text, never as
markup.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from agentcli.text import terminal_safe
from agentcli.tools import Picked, Question, QuestionRequest

Answers = dict[str, Picked]
OTHER = "Other…"
HINT = "↑↓ move · 1-{n} pick · Enter choose · Esc decline"
MULTI_HINT = "↑↓ move · 1-{n} or Space toggle · Enter confirm · Esc decline"


def asker_line(request: QuestionRequest, index: int) -> str:
    """`[explore#2] asks you (question 1 of 2):`."""
    total = len(request.questions)
    which = f" (question {index + 1} of {total})" if total > 1 else ""
    return terminal_safe(f"[{request.agent}] asks you{which}:")


class QuestionScreen(ModalScreen[Answers | None]):
    """The model's questions, one at a time; dismissed with every answer, or None when the person declines."""

    AUTO_FOCUS = None  # the keys are the screen's; the Other line takes the focus only when opened
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("space", "toggle_option", "Toggle", show=False),
        Binding("enter", "choose", "Choose"),
        Binding("escape", "back_or_decline", "Decline"),
        *(Binding(str(n), f"pick({n - 1})", str(n), show=False) for n in range(1, 6)),
    ]

    def __init__(self, request: QuestionRequest) -> None:
        super().__init__(classes="question-screen")
        self.request = request
        self.index = 0  # the question shown
        self.cursor = 0  # the highlighted row (the options, then Other)
        self.toggled: set[int] = set()  # a multiSelect question's chosen options
        self.answers: Answers = {}

    @property
    def question(self) -> Question:
        return self.request.questions[self.index]

    def compose(self) -> Any:
        with Vertical(id="question-dialog"):
            yield Static(id="question-asker", markup=False)
            yield Static(id="question-header", markup=False)
            yield Static(id="question-text", markup=False)
            yield Static(id="question-options", markup=False)
            yield Input(id="question-other", placeholder="Your answer, then Enter (Esc: back to the options)",
                        disabled=True)  # never focused until opened
            yield Static(id="question-hint", markup=False)

    def on_mount(self) -> None:
        self._show()

    def _show(self) -> None:
        """Draw the current question and its rows."""
        question = self.question
        self.query_one("#question-asker", Static).update(asker_line(self.request, self.index))
        self.query_one("#question-header", Static).update(
            Content.assemble((f" {terminal_safe(question.header)} ", "bold reverse")))
        self.query_one("#question-text", Static).update(Content(terminal_safe(question.text)))
        self.query_one("#question-options", Static).update(self._rows())
        rows = len(question.options) + 1
        hint = MULTI_HINT if question.multi_select else HINT
        self.query_one("#question-hint", Static).update(Content(hint.format(n=rows)))
        self._other_line(False)

    def _rows(self) -> Content:
        """Each option, numbered (checked in a multiSelect question), its description muted; Other last."""
        question = self.question
        lines: list[Content] = []
        for i, option in enumerate(question.options):
            mark = ("[x] " if i in self.toggled else "[ ] ") if question.multi_select else ""
            pointer = "❯ " if i == self.cursor else "  "
            line = Content.assemble((f"{pointer}{i + 1}. {mark}", ""),
                                    (terminal_safe(option.label), "bold" if i == self.cursor else ""))
            if option.description:
                line = Content.assemble(line, (f" — {terminal_safe(option.description)}", "$text-muted"))
            lines.append(line)
        last = len(question.options)
        pointer = "❯ " if self.cursor == last else "  "
        lines.append(Content.assemble((f"{pointer}{last + 1}. {OTHER}", "bold" if self.cursor == last else ""),
                                      (" (type your own answer)", "$text-muted")))
        return Content("\n").join(lines)

    # --- keys -------------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        rows = len(self.question.options) + 1
        self.cursor = (self.cursor + step) % rows
        self.query_one("#question-options", Static).update(self._rows())

    def action_pick(self, row: int) -> None:
        """A number: choose that option (toggle it in a multiSelect question), or open Other."""
        if row > len(self.question.options):
            return
        self.cursor = row
        if row == len(self.question.options):
            self._open_other()
        elif self.question.multi_select:
            self.toggled ^= {row}
            self.query_one("#question-options", Static).update(self._rows())
        else:
            self._answer(Picked((self.question.options[row].label,)))

    def action_toggle_option(self) -> None:
        """Space: toggle the highlighted option of a multiSelect question (elsewhere: as Enter)."""
        if self.question.multi_select:
            self.action_pick(self.cursor)
        else:
            self.action_choose()

    def action_choose(self) -> None:
        """Enter: the highlighted option (a multiSelect question: the toggled ones, else the highlighted one)."""
        question = self.question
        if self.cursor == len(question.options):
            self._open_other()
        elif question.multi_select and self.toggled:
            self._answer(Picked(self._toggled_labels()))
        else:
            self._answer(Picked((question.options[self.cursor].label,)))

    def action_back_or_decline(self) -> None:
        """Esc: from the typed answer back to the options; on the options, decline every question."""
        if self.query_one("#question-other", Input).display:
            self._other_line(False)
            return
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the Other line: answer with the typed words (and a multiSelect question's toggled options)."""
        event.stop()
        text = event.value.strip()
        if not text:
            return
        labels = self._toggled_labels() if self.question.multi_select else ()
        self._answer(Picked(labels, text))

    # --- answering --------------------------------------------------------------------------------

    def _toggled_labels(self) -> tuple[str, ...]:
        return tuple(option.label for i, option in enumerate(self.question.options) if i in self.toggled)

    def _open_other(self) -> None:
        self._other_line(True)
        self.query_one("#question-options", Static).update(self._rows())

    def _other_line(self, shown: bool) -> None:
        """Show the Other line with the focus, or hide it (disabled: the screen's keys work again)."""
        other = self.query_one("#question-other", Input)
        other.display = shown
        other.disabled = not shown
        if shown:
            other.focus()
        else:
            self.set_focus(None)

    def _answer(self, picked: Picked) -> None:
        """Keep this question's answer; the next question, or the answers once every one is answered."""
        self.answers[self.question.text] = picked
        if self.index + 1 >= len(self.request.questions):
            self.dismiss(self.answers)
            return
        self.index += 1
        self.cursor = 0
        self.toggled = set()
        self.query_one("#question-other", Input).value = ""
        self._show()
