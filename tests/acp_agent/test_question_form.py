"""AskUserQuestion as one ACP form (`elicitation/create`) for an editor that offers forms, driven by the ACP Python
SDK's client side; and the form read back from what an editor may send."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AcceptElicitationResponse,
    CancelElicitationResponse,
    ClientCapabilities,
    DeclineElicitationResponse,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationFormSessionMode,
    ToolCallProgress,
)

from agentcli.acp_agent.question_form import OWN_WORDS_MAX, form_answers, form_schema
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.tools import Choice, Picked, Question
from tests.acp_agent.test_acp import EditorClient, _prompt, run_acp, workspace
from tests.e2e.helpers import MAIN

__all__ = ["run_acp", "workspace"]  # the fixtures, shared with test_acp

FORMS = ClientCapabilities(elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()))
Response = AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse

_LIBRARY = {"question": "Which date library?", "header": "Library",
            "options": [{"label": "date-fns", "description": "small"}, {"label": "luxon", "description": "zones"}]}
_FEATURES = {"question": "Which features?", "header": "Features", "multiSelect": True,
             "options": [{"label": "Dark mode", "description": ""}, {"label": "Search", "description": "find"}]}
_ASK = ToolCall(name="AskUserQuestion", id="toolu_ask", input={"questions": [_LIBRARY, _FEATURES]})


class FormEditor(EditorClient):
    """An editor that fills forms: records each `elicitation/create` and answers with `response`."""

    def __init__(self, response: Response, answers: list[str] | None = None) -> None:
        super().__init__(answers)
        self.forms: list[tuple[str, ElicitationFormSessionMode, dict[str, Any]]] = []
        self.response = response

    async def create_elicitation(self, message: str, mode: Any, **meta: Any) -> Response:
        self.forms.append((message, mode, meta))
        return self.response


def _ask_script(answer_seen: str) -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_ASK])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains=answer_seen), reply=Reply(text="Noted.")),
    ])


def _body(workspace: Path) -> Callable[..., Any]:
    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> tuple[str, str]:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return session.session_id, await _prompt(conn, session.session_id, "which library?")
    return body


def test_an_editor_with_forms_gets_every_question_in_one_form_with_several_picks_and_own_words(
        run_acp: Callable[..., Any], workspace: Path) -> None:
    filled = AcceptElicitationResponse(action="accept", content={
        "q1": "luxon", "q2": ["Dark mode", "Search"], "q2_other": "and keyboard shortcuts"})
    client = FormEditor(filled)
    session_id, stop = run_acp(_ask_script('in their own words: "and keyboard shortcuts"'), _body(workspace),
                               client, FORMS, unstable=True)
    assert stop == "end_turn" and client.asked == []  # no permission request: the form asked everything
    ((message, mode, meta),) = client.forms
    assert mode.session_id == session_id and mode.tool_call_id == "toolu_ask"
    assert message == "The agent asks you 2 questions: Which date library? / Which features?"
    assert meta == {"agentcli": {"questions": 2}}
    fields = mode.requested_schema.properties
    assert list(fields) == ["q1", "q1_other", "q2", "q2_other"] and not mode.requested_schema.required
    assert fields["q1"].title == "Library: Which date library?"
    assert [(o.const, o.description) for o in fields["q1"].one_of] == [("date-fns", "small"), ("luxon", "zones")]
    assert fields["q2"].type == "array" and [o.const for o in fields["q2"].items.any_of] == ["Dark mode", "Search"]
    assert fields["q2_other"].max_length == OWN_WORDS_MAX
    done = {u.tool_call_id: u for u in client.of(ToolCallProgress)}["toolu_ask"]
    text = done.content[0].content.text
    assert done.status == "completed" and '(Library): "luxon"' in text
    assert '(Features): "Dark mode", "Search", in their own words: "and keyboard shortcuts"' in text


def test_declining_the_form_declines_every_question(run_acp: Callable[..., Any], workspace: Path) -> None:
    client = FormEditor(DeclineElicitationResponse(action="decline"))
    _, stop = run_acp(_ask_script("declined to answer"), _body(workspace), client, FORMS, unstable=True)
    assert stop == "end_turn" and len(client.forms) == 1
    done = {u.tool_call_id: u for u in client.of(ToolCallProgress)}["toolu_ask"]
    assert done.status == "failed" and done.raw_output["code"] == "permission_denied"


def test_a_closed_form_tells_the_model_no_one_answered(run_acp: Callable[..., Any], workspace: Path) -> None:
    client = FormEditor(CancelElicitationResponse(action="cancel"))
    script = _ask_script("closed your questions without answering")
    _, stop = run_acp(script, _body(workspace), client, FORMS, unstable=True)
    assert stop == "end_turn"


def test_an_editor_that_offers_forms_but_cannot_fill_them_is_asked_by_permission_requests(
        run_acp: Callable[..., Any], workspace: Path) -> None:
    client = EditorClient(answers=["choice_0", "choice_1"])  # no create_elicitation: "method not found"
    _, stop = run_acp(_ask_script('(Library): "date-fns"'), _body(workspace), client, FORMS, unstable=True)
    assert stop == "end_turn" and [call.title for call, _ in client.asked] == [
        "Library: Which date library?", "Features: Which features?"]


def test_a_subagents_form_names_the_subagent_and_its_task_call(run_acp: Callable[..., Any], workspace: Path) -> None:
    task = ToolCall(name="Task", id="toolu_task", input={
        "description": "Pick a library", "prompt": "Ask which library", "subagent_type": "general"})
    one = ToolCall(name="AskUserQuestion", id="toolu_sub_ask", input={"questions": [_LIBRARY]})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        Step(match=Match(system_contains="# Task\nPick a library", turn=0), reply=Reply(tool_calls=[one])),
        Step(match=Match(system_contains="# Task\nPick a library", turn=1, last_user_contains='"date-fns"'),
             reply=Reply(text="date-fns.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done.")),
    ])
    client = FormEditor(AcceptElicitationResponse(action="accept", content={"q1": "date-fns"}))
    _, stop = run_acp(script, _body(workspace), client, FORMS, unstable=True)
    assert stop == "end_turn"
    ((message, mode, meta),) = client.forms
    assert message.startswith("general") and message.endswith("asks you: Which date library?")
    assert mode.tool_call_id == "toolu_sub_ask" and meta["claudeCode"] == {"parentToolUseId": "toolu_task"}
    assert meta["agentcli"]["agent"] == message.split(" asks you")[0] and meta["agentcli"]["questions"] == 1


_QUESTIONS = (Question("Which one?", "Pick", (Choice("a"), Choice("b"))),
              Question("Which ones?", "Many", (Choice("x"), Choice("y"), Choice("z")), multi_select=True))


@pytest.mark.parametrize(("content", "expected"), [
    ({"q1": "b", "q2": ["z", "x"]}, (Picked(("b",)), Picked(("z", "x")))),
    ({"q1_other": " mine ", "q2": []}, (Picked(other="mine"), Picked())),
    ({"q1": "not offered", "q2": ["y", "made up", 7]}, (Picked(other="not offered"), Picked(("y",), "made up"))),
    ({"q1": ["a", "b"], "q2": "x", "q2_other": 12}, (Picked(("a",)), Picked(("x",)))),
    ("not an object", (Picked(), Picked())),
    ({"q1_other": "w" * (OWN_WORDS_MAX + 50)}, (Picked(other="w" * OWN_WORDS_MAX), Picked())),
])
def test_a_filled_form_is_read_as_untrusted(content: object, expected: tuple[Picked, Picked]) -> None:
    answers = form_answers(_QUESTIONS, content)
    assert (answers["Which one?"], answers["Which ones?"]) == expected


def test_the_form_is_valid_elicitation_json() -> None:
    schema = form_schema(_QUESTIONS).model_dump(mode="json", by_alias=True, exclude_none=True)
    assert schema["properties"]["q1"] == {"type": "string", "title": "Pick: Which one?", "description": "Pick one.",
                                          "oneOf": [{"const": "a", "title": "a"}, {"const": "b", "title": "b"}]}
    assert schema["properties"]["q2"]["items"] == {"anyOf": [{"const": c, "title": c} for c in "xyz"]}
