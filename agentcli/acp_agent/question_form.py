"""AskUserQuestion as one ACP form (`elicitation/create`, form mode), for an editor that offers forms.

Every question of the call is one field: a single-select (`oneOf`, each choice titled with its label and
described) or, for a multiSelect question, a multi-select (`items.anyOf`), followed by an optional text field for
the person's own words ("Other"). No field is required: a question left empty has no answer, as in the TUI.

What the editor sends back is untrusted: a value that is not one of the question's labels counts as the person's
own words (as a program's answer does, `tools.picked_from_program`), and typed words are cut at `OWN_WORDS_MAX`.
"""

from __future__ import annotations

from typing import Any

from acp.schema import (
    ElicitationMultiSelectPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    EnumOption,
    TitledMultiSelectItems,
)

from agentcli.tools import Picked, Question, picked_from_program

OWN_WORDS_MAX = 2000


def pick_field(index: int) -> str:
    """The form field of question `index` (0-based): its choices."""
    return f"q{index + 1}"


def words_field(index: int) -> str:
    """The form field of question `index`: the person's own words."""
    return f"q{index + 1}_other"


def form_schema(questions: tuple[Question, ...]) -> ElicitationSchema:
    """The form asking `questions`: a choice field and an own-words field each, none required."""
    properties: dict[str, Any] = {}
    for index, question in enumerate(questions):
        choices = [EnumOption(const=c.label, title=c.label, description=c.description or None)
                   for c in question.options]
        title = f"{question.header}: {question.text}"
        if question.multi_select:
            properties[pick_field(index)] = ElicitationMultiSelectPropertySchema(
                type="array", title=title, description="Pick any that apply.",
                items=TitledMultiSelectItems(any_of=choices))
        else:
            properties[pick_field(index)] = ElicitationStringPropertySchema(
                type="string", title=title, description="Pick one.", one_of=choices)
        properties[words_field(index)] = ElicitationStringPropertySchema(
            type="string", title=f"{question.header}: other", max_length=OWN_WORDS_MAX,
            description="Optional: your answer in your own words, if no choice fits.")
    return ElicitationSchema(type="object", properties=properties, required=[])


def form_answers(questions: tuple[Question, ...], content: object) -> dict[str, Picked]:
    """The answers a filled form holds, by question text (an empty or missing field: no answer)."""
    values = content if isinstance(content, dict) else {}
    answers: dict[str, Picked] = {}
    for index, question in enumerate(questions):
        picked = picked_from_program(question, _choice_value(values.get(pick_field(index))))
        typed = values.get(words_field(index))
        labels = picked.labels if question.multi_select else picked.labels[:1]
        words = [picked.other.strip(), typed.strip() if isinstance(typed, str) else ""]
        answers[question.text] = Picked(labels, ", ".join(w for w in words if w)[:OWN_WORDS_MAX])
    return answers


def _choice_value(value: object) -> object:
    """A choice field's value as `picked_from_program` reads it: a string or a list of strings, else nothing."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return None
