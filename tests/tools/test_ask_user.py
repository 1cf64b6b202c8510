"""AskUserQuestion: Claude Code's input shape validated, the asker's answers (or refusal) as the model reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.tools import (
    ALL_TOOLS,
    READ_ONLY_TOOLS,
    FileLocks,
    PermissionPolicy,
    Picked,
    QuestionReply,
    QuestionRequest,
    ToolContext,
    ToolError,
)
from agentcli.tools.ask_user import DECLINED, NO_PERSON, AskUserQuestionTool
from agentcli.tools.questions import Choice, Question, picked_from_program, replies_from_program


def _question(text: str = "Which library?", header: str = "Library", multi: bool = False,
              labels: tuple[str, ...] = ("date-fns", "luxon")) -> dict[str, Any]:
    return {"question": text, "header": header, "multiSelect": multi,
            "options": [{"label": label, "description": f"use {label}"} for label in labels]}


def _ctx(tmp_path: Path, asker: Any = None) -> ToolContext:
    return ToolContext(workspace=tmp_path, agent="explore#2", session_id="s1", permissions=PermissionPolicy("ask"),
                       file_locks=FileLocks(), tool_call_id="toolu_q", questions=asker)


@pytest.mark.parametrize(("raw", "problem"), [
    ({}, "questions: Field required"),
    ({"questions": []}, "questions: List should have at least 1 item"),
    ({"questions": [_question(text=f"Q{i}?") for i in range(5)]}, "questions: List should have at most 4 items"),
    ({"questions": [_question(header="Far too long a chip")]}, "questions.0.header: String should have at most 12"),
    ({"questions": [_question(labels=("only",))]}, "questions.0.options: List should have at least 2 items"),
    ({"questions": [_question(labels=("a", "b", "c", "d", "e"))]}, "questions.0.options: List should have at most 4"),
    ({"questions": [_question(labels=("same", "same"))]}, "option labels must be distinct"),
    ({"questions": [_question(), _question()]}, "question texts must be distinct"),
    ({"questions": [{**_question(), "answers": {"Which library?": "luxon"}}]}, "answers: Extra inputs"),
    ({"questions": [_question()], "answers": {"Which library?": "luxon"}}, "answers: Extra inputs are not permitted"),
    ({"questions": [{**_question(), "multiSelect": "several"}]}, "questions.0.multiSelect: Input should be a valid"),
    ({"questions": [{"question": "Q?", "header": "H", "options": [{"label": "a"}, {"label": "b"}]}]},
     "questions.0.options.0.description: Field required"),
])
def test_bad_shapes_are_invalid_parameters_naming_the_field(raw: dict[str, Any], problem: str) -> None:
    with pytest.raises(ToolError) as caught:
        AskUserQuestionTool().parse(raw)
    assert str(caught.value).startswith("Invalid arguments for AskUserQuestion: ")
    assert problem in str(caught.value)


def test_traits_keep_it_read_only_deferred_and_without_a_deadline() -> None:
    tool = AskUserQuestionTool()
    assert ALL_TOOLS["AskUserQuestion"] is AskUserQuestionTool and "AskUserQuestion" in READ_ONLY_TOOLS
    assert tool.read_only and not tool.mutating and tool.on_demand and tool.own_time_limit
    schema = tool.input_schema()
    assert schema["properties"]["questions"]["maxItems"] == 4
    item = schema["properties"]["questions"]["items"]
    assert set(item["properties"]) == {"question", "header", "options", "multiSelect"}
    assert item["properties"]["header"]["maxLength"] == 12
    assert tool.lean_description() != tool.description()


async def test_without_anyone_to_ask_the_call_is_a_refusal_the_model_can_act_on(tmp_path: Path) -> None:
    tool = AskUserQuestionTool()
    result = await tool.run(tool.parse({"questions": [_question()]}), _ctx(tmp_path))
    assert result.is_error and result.content == NO_PERSON
    assert result.metadata == {"code": "permission_denied"}
    assert "decide yourself" in NO_PERSON.lower() and "assumption" in NO_PERSON


async def test_the_answers_are_listed_per_question_and_kept_in_the_metadata(tmp_path: Path) -> None:
    asked: list[QuestionRequest] = []

    async def asker(request: QuestionRequest) -> QuestionReply:
        asked.append(request)
        return QuestionReply({"Which library?": Picked(("luxon",)),
                              "Which features?": Picked(("Dark mode", "Search"), "keyboard shortcuts")})

    tool = AskUserQuestionTool()
    args = tool.parse({"questions": [_question(), _question("Which features?", "Features", True,
                                                             ("Dark mode", "Search", "Export"))]})
    result = await tool.run(args, _ctx(tmp_path, asker))
    (request,) = asked
    assert (request.agent, request.tool_call_id, request.session_id) == ("explore#2", "toolu_q", "s1")
    assert request.questions[1] == Question("Which features?", "Features", (
        Choice("Dark mode", "use Dark mode"), Choice("Search", "use Search"), Choice("Export", "use Export")), True)
    assert request.tool_input["questions"][0]["header"] == "Library"
    assert not result.is_error
    assert result.content.splitlines() == [
        "The person answered your questions:",
        '- "Which library?" (Library): "luxon"',
        '- "Which features?" (Features): "Dark mode", "Search", in their own words: "keyboard shortcuts"',
        "Go on with these answers in mind; follow what they actually say.",
    ]
    assert result.metadata["answers"] == {
        "Which library?": {"labels": ["luxon"], "other": ""},
        "Which features?": {"labels": ["Dark mode", "Search"], "other": "keyboard shortcuts"}}
    assert tool.summary(args) == "2 questions: Library, Features"


async def test_a_decline_is_a_refusal_with_the_askers_words_or_the_tools(tmp_path: Path) -> None:
    replies = [QuestionReply.declined(), QuestionReply.declined("not now, program says")]

    async def asker(request: QuestionRequest) -> QuestionReply:
        return replies.pop(0)

    tool = AskUserQuestionTool()
    args = tool.parse({"questions": [_question()]})
    first, second = [await tool.run(args, _ctx(tmp_path, asker)) for _ in range(2)]
    assert first.is_error and first.content == DECLINED and "declined to answer" in DECLINED
    assert second.is_error and second.content == "not now, program says"
    assert first.metadata["code"] == second.metadata["code"] == "permission_denied"


async def test_an_unanswered_question_says_so(tmp_path: Path) -> None:
    async def asker(request: QuestionRequest) -> QuestionReply:
        return QuestionReply({})

    tool = AskUserQuestionTool()
    result = await tool.run(tool.parse({"questions": [_question()]}), _ctx(tmp_path, asker))
    assert result.content.splitlines()[:2] == ["The person gave no answer to these questions:",
                                               '- "Which library?" (Library): (no answer)']


def test_a_programs_answers_are_read_back_as_labels_or_own_words() -> None:
    single = Question("Which?", "W", (Choice("A"), Choice("B")))
    multi = Question("Which ones?", "Ws", (Choice("A"), Choice("B"), Choice("C, D")), multi_select=True)
    assert picked_from_program(single, "B") == Picked(("B",))
    assert picked_from_program(single, "something else") == Picked(other="something else")
    assert picked_from_program(multi, "A, B") == Picked(("A", "B"))
    assert picked_from_program(multi, "C, D") == Picked(("C, D",))  # a label with a comma, whole
    assert picked_from_program(multi, "A, my own") == Picked(other="A, my own")
    assert picked_from_program(multi, ["A", "mine"]) == Picked(("A",), "mine")
    assert picked_from_program(single, None) == Picked() and picked_from_program(single, 3) == Picked()
    assert replies_from_program((single, multi), {"Which?": "A"}) == {"Which?": Picked(("A",)),
                                                                      "Which ones?": Picked()}
    assert replies_from_program((single,), "not a mapping") == {"Which?": Picked()}
