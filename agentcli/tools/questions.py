"""What AskUserQuestion asks the person, what comes back, and the Protocol a front end answers it through.

The tool never knows who answers: the TUI's dialog, a driving program's `can_use_tool` callback (the Claude Agent
SDK), an editor's permission request (ACP). A front end that has a person gives every agent's `ToolContext` a
`QuestionAsker`; without one (a one-shot run) the tool says no one can answer. A remote subagent's call runs at
the parent (`subagents.remote`), where the person is.

An answer to one question is `Picked`: the option labels chosen (one, or several for a multiSelect question) and
the person's own words when they chose "Other" and typed them. Claude Code's programs answer with one string per
question (`answers`: question text → label, or the labels of a multiSelect joined with ", ", or free text);
`picked_from_program` reads that shape back into `Picked`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Choice:
    """One option of a question: its label (what is chosen) and what choosing it means."""

    label: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class Question:
    """One question as the model asked it: its text, a short chip label, 2–4 options, several picks or one."""

    text: str
    header: str
    options: tuple[Choice, ...]
    multi_select: bool = False

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(option.label for option in self.options)


@dataclass(frozen=True, slots=True)
class Picked:
    """The answer to one question: labels chosen, and the person's own words ("Other"), either or both."""

    labels: tuple[str, ...] = ()
    other: str = ""

    @property
    def empty(self) -> bool:
        return not self.labels and not self.other.strip()

    def as_text(self) -> str:
        """Claude Code's one string: the labels joined with ", ", then the typed words."""
        return ", ".join([*self.labels, *([self.other] if self.other.strip() else [])])


@dataclass(frozen=True, slots=True)
class QuestionRequest:
    """What the asker is asked: `[agent] asks` these questions (for a subagent, its label)."""

    agent: str
    questions: tuple[Question, ...]
    tool_input: dict[str, Any] = field(default_factory=dict)  # the call's arguments as the model sent them
    tool_call_id: str = ""
    session_id: str = ""  # the asking agent's session


@dataclass(frozen=True, slots=True)
class QuestionReply:
    """The person's answers by question text; `answers` None: they declined (`message`: the asker's own words for
    the model, e.g. a program's deny message; "" for the tool's)."""

    answers: dict[str, Picked] | None
    message: str = ""

    @classmethod
    def declined(cls, message: str = "") -> QuestionReply:
        return cls(None, message)


class QuestionAsker(Protocol):
    """Puts an AskUserQuestion call's questions to the person and waits for the answers (or the refusal)."""

    async def __call__(self, request: QuestionRequest) -> QuestionReply: ...


def picked_from_program(question: Question, value: object) -> Picked:
    """One of a program's `answers` values (a string as Claude Code writes it, or a list of strings) as `Picked`:
    labels where the text is the question's labels, else the person's own words."""
    labels = question.labels
    if isinstance(value, list):
        parts = [str(item) for item in value if str(item).strip()]
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        if text in labels:
            return Picked((text,))
        parts = [part.strip() for part in text.split(", ")] if question.multi_select else [text]
        if not all(part in labels for part in parts):
            return Picked(other=text)
    else:
        return Picked()
    chosen = tuple(dict.fromkeys(part for part in parts if part in labels))
    own = ", ".join(part for part in parts if part not in labels)
    return Picked(chosen, own)


def replies_from_program(questions: tuple[Question, ...], answers: object) -> dict[str, Picked]:
    """A program's `answers` mapping read against the questions asked (a question it left out: no answer)."""
    given = answers if isinstance(answers, dict) else {}
    return {q.text: picked_from_program(q, given.get(q.text)) for q in questions}
