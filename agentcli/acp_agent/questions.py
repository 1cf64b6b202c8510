"""AskUserQuestion in the editor: one form when the editor offers forms, else one permission request a question.

An editor that advertises `elicitation.form` at `initialize` gets the whole call as one `elicitation/create` form
(`question_form`): a choice field per question (several picks for a multiSelect one) and an own-words field
("Other"), tied to the call's `tool_call_id`; declining or cancelling the form declines every question. An editor
that answers the form request with "method not found" is asked the other way from then on.

Otherwise each question is one `session/request_permission` about the AskUserQuestion call: the question as its
title (a subagent's label before it, its Task call in `_meta` as for approvals), the options with their
descriptions as its text, one permission option per choice (`allow_once`) plus "Decline to answer"
(`reject_once`), asked one after the other; declining one, or a cancelled prompt, declines them all (the model is
told). A permission option cannot take typed words, so there is no "Other" there (the text says to decline and
write in the chat instead), and one option only is selected, so a multiSelect question is a pick of one (said so).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    CreateElicitationResponse,
    ElicitationSchema,
    PermissionOption,
    ToolCallUpdate,
)

from agentcli.acp_agent import tool_info
from agentcli.acp_agent.approver import Ask
from agentcli.acp_agent.question_form import form_answers, form_schema
from agentcli.acp_agent.updates import EventMapper, Outbox, subagent_meta
from agentcli.text import one_line
from agentcli.tools import Picked, Question, QuestionReply, QuestionRequest

log = logging.getLogger(__name__)

DECLINE = PermissionOption(option_id="decline", name="Decline to answer", kind="reject_once")
ONE_OF_SEVERAL = "Several may apply, but the editor can take one choice here: pick the one that matters most."
OWN_WORDS = "To answer in your own words, decline and write your answer in the chat."
METHOD_NOT_FOUND = -32601

# `elicitation/create` in the session: the message, the form, the tool call it is about and `_meta`
Elicit = Callable[[str, ElicitationSchema, str, dict[str, Any]], Awaitable[CreateElicitationResponse]]
SessionElicit = Callable[[str, str, ElicitationSchema, str, dict[str, Any]], Awaitable[CreateElicitationResponse]]


class AcpQuestions:
    """The `QuestionAsker` of one ACP session (`elicit`: the editor offers forms)."""

    def __init__(self, ask: Ask, outbox: Outbox, mapper: EventMapper, elicit: Elicit | None = None) -> None:
        self.ask = ask
        self.outbox = outbox
        self.mapper = mapper
        self.elicit = elicit

    async def __call__(self, request: QuestionRequest) -> QuestionReply:
        await self.outbox.flush()  # the call's `tool_call` reaches the editor before the questions about it
        if self.elicit is not None:
            try:
                return await self.by_form(request, self.elicit)
            except RequestError as exc:
                if exc.code != METHOD_NOT_FOUND:
                    raise
                log.info("the editor offered forms but has no elicitation/create; asking by permission requests")
                self.elicit = None
        return await self.by_permission(request)

    async def by_form(self, request: QuestionRequest, elicit: Elicit) -> QuestionReply:
        """All the questions as one form; its answers, or declined."""
        count = len(request.questions)
        meta = self.meta(request, {"questions": count})
        asks = "asks you" if count == 1 else f"asks you {count} questions"
        message = f"{'The agent' if request.agent == 'main' else request.agent} {asks}: " + " / ".join(
            q.text for q in request.questions)
        try:
            response = await elicit(message, form_schema(request.questions), request.tool_call_id, meta)
        except Exception as exc:
            if isinstance(exc, RequestError) and exc.code == METHOD_NOT_FOUND:
                raise
            log.warning("question form failed: %s", exc)
            return QuestionReply.declined(_failed(exc))
        if isinstance(response, AcceptElicitationResponse):
            return QuestionReply(form_answers(request.questions, response.content))
        if getattr(response, "action", "") == "cancel":
            return QuestionReply.declined("The person closed your questions without answering them.")
        return QuestionReply.declined()

    async def by_permission(self, request: QuestionRequest) -> QuestionReply:
        """One permission request a question, one after the other."""
        answers: dict[str, Picked] = {}
        for index, question in enumerate(request.questions):
            try:
                response = await self.ask(self.tool_call(request, index), options(question))
            except Exception as exc:
                log.warning("question request failed: %s", exc)
                return QuestionReply.declined(_failed(exc))
            outcome = response.outcome
            choice = getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None
            if choice is None:
                return QuestionReply.declined("The prompt was cancelled before the person answered your questions.")
            label = _label(question, choice)
            if label is None:
                return QuestionReply.declined()
            answers[question.text] = Picked((label,))
        return QuestionReply(answers)

    def meta(self, request: QuestionRequest, about: dict[str, Any]) -> dict[str, Any]:
        """A request's `_meta`: a subagent's Task call (as approvals carry it), and `about` under `agentcli`."""
        sub = self.mapper.subagents.get(request.session_id)
        meta: dict[str, Any] = subagent_meta(sub) if sub is not None else {}
        meta.setdefault("agentcli", {}).update(about)
        return meta

    def tool_call(self, request: QuestionRequest, index: int) -> ToolCallUpdate:
        """The AskUserQuestion call, asking its `index`th question."""
        question = request.questions[index]
        meta = self.meta(request, {"question": {"index": index + 1, "of": len(request.questions),
                                                "header": question.header, "multiSelect": question.multi_select}})
        title = f"{question.header}: {question.text}"
        return ToolCallUpdate(
            tool_call_id=request.tool_call_id, title=title if request.agent == "main" else f"{request.agent} · {title}",
            kind="other", status="pending", content=[tool_info.text(_body(question))],
            raw_input=request.tool_input, field_meta=meta,
        )


def _failed(exc: Exception) -> str:
    """What the model reads when the editor's request failed: its reason on one short line."""
    why = one_line(str(exc) or type(exc).__name__, 200)
    return f"Asking the person in the editor failed ({why}); nothing was answered."


def options(question: Question) -> list[PermissionOption]:
    """One option per choice (its description in `_meta`), then "Decline to answer"."""
    return [
        PermissionOption(option_id=f"choice_{i}", name=choice.label, kind="allow_once",
                         field_meta={"agentcli": {"description": choice.description}} if choice.description else None)
        for i, choice in enumerate(question.options)
    ] + [DECLINE]


def _body(question: Question) -> str:
    """The question's text for the editor: the question, each choice with what it means, the limits."""
    lines = [question.text, ""]
    lines += [f"- {c.label}: {c.description}" if c.description else f"- {c.label}" for c in question.options]
    lines += ["", *([ONE_OF_SEVERAL] if question.multi_select else []), OWN_WORDS]
    return "\n".join(lines)


def _label(question: Question, choice: str) -> str | None:
    """The label an option id stands for; None: declined (or an id this question never offered)."""
    number = choice.removeprefix("choice_")
    if choice.startswith("choice_") and number.isdigit() and int(number) < len(question.options):
        return question.options[int(number)].label
    return None
