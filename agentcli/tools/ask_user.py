"""AskUserQuestion: the model asks the person one to four multiple-choice questions instead of guessing.

The input is Claude Code's: `questions`, each with its `question`, a short `header` (a chip label of at most 12
characters), two to four `options` (`label`, `description`) and `multiSelect`; the person may also answer in their
own words ("Other"). Who answers is the front end's `QuestionAsker` on the agent's `ToolContext` (`questions`): the
TUI's dialog, the driving program's `can_use_tool` callback, the editor's permission request. Without one (a
one-shot run) the call is refused with words the model can act on.

The tool writes nothing, so it is `read_only` (read-only subagents keep it; their questions reach the same person,
labelled with the subagent); it waits for a person, so it keeps no deadline of its own (`own_time_limit`); it is
rarely needed, so it is `on_demand` (deferred behind ToolSearch by default: the fixed prompt does not grow).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentcli.status import PERMISSION_DENIED
from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from agentcli.tools.questions import Choice, Picked, Question, QuestionReply, QuestionRequest

NAME = "AskUserQuestion"
HEADER_CHARS = 12  # Claude Code's chip limit

NO_PERSON = ("No person is available to answer questions in this run, so nothing was asked. Decide yourself, "
             "state the assumption you made in your answer, and go on.")
DECLINED = ("The person declined to answer your questions. Do not ask them again now: go on with your best "
            "judgment and state your assumptions, or end your turn and ask in plain words.")


class OptionArg(BaseModel):
    """One choice of a question."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1, max_length=80, description="What the person picks: concise, 1-5 words")
    description: str = Field(max_length=500, description="What choosing it means or leads to (trade-offs)")


class QuestionArg(BaseModel):
    """One question."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=1000,
                          description="The whole question, clear and specific, ending with a question mark")
    header: str = Field(min_length=1, max_length=HEADER_CHARS,
                        description=f"A very short label shown as a chip (at most {HEADER_CHARS} characters)")
    options: list[OptionArg] = Field(min_length=2, max_length=4, description=(
        "2-4 distinct choices; no 'Other' option (the person can always answer in their own words)"))
    multiSelect: bool = Field(False, description="True lets the person pick several options")

    @model_validator(mode="after")
    def _distinct_labels(self) -> QuestionArg:
        labels = [option.label for option in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError("option labels must be distinct within a question")
        return self


class AskUserQuestionArgs(ToolArgs):
    """Arguments of AskUserQuestion."""

    questions: list[QuestionArg] = Field(min_length=1, max_length=4, description="The questions to ask (1-4)")

    @model_validator(mode="after")
    def _distinct_questions(self) -> AskUserQuestionArgs:
        texts = [q.question for q in self.questions]
        if len(set(texts)) != len(texts):
            raise ValueError("question texts must be distinct")
        return self

    def asked(self) -> tuple[Question, ...]:
        """The questions as the front ends show them."""
        return tuple(Question(q.question, q.header, tuple(Choice(o.label, o.description) for o in q.options),
                              q.multiSelect) for q in self.questions)


def answers_text(questions: tuple[Question, ...], answers: dict[str, Picked]) -> str:
    """The result the model reads: each question with the person's answer(s)."""
    lines = []
    for question in questions:
        picked = answers.get(question.text, Picked())
        said = [f'"{label}"' for label in picked.labels]
        if picked.other.strip():
            said.append(f'in their own words: "{picked.other.strip()}"')
        lines.append(f'- "{question.text}" ({question.header}): {", ".join(said) if said else "(no answer)"}')
    head = "The person answered your questions:" if any(not p.empty for p in answers.values()) else (
        "The person gave no answer to these questions:")
    return "\n".join([head, *lines, "Go on with these answers in mind; follow what they actually say."])


def answers_metadata(answers: dict[str, Picked]) -> dict[str, dict[str, object]]:
    """The answers for `ToolResult.metadata["answers"]`: question text → the labels chosen and the typed words."""
    return {text: {"labels": list(p.labels), "other": p.other} for text, p in answers.items()}


class AskUserQuestionTool(Tool[AskUserQuestionArgs]):
    """Ask the person multiple-choice questions and wait for the answers."""

    name: ClassVar[str] = NAME
    args_model: ClassVar[type[ToolArgs]] = AskUserQuestionArgs
    read_only: ClassVar[bool] = True  # writes nothing
    own_time_limit: ClassVar[bool] = True  # a person answers when they answer
    on_demand: ClassVar[bool] = True

    def summary(self, args: AskUserQuestionArgs) -> str:
        heads = ", ".join(q.header for q in args.questions)
        count = len(args.questions)
        return f"{count} question{'s' if count != 1 else ''}: {heads}"

    def permission_target(self, args: AskUserQuestionArgs) -> str:
        return ""

    async def run(self, args: AskUserQuestionArgs, ctx: ToolContext) -> ToolResult:
        if ctx.questions is None:
            return ToolResult(NO_PERSON, is_error=True, metadata={"code": PERMISSION_DENIED})
        questions = args.asked()
        request = QuestionRequest(agent=ctx.agent, questions=questions,
                                  tool_input=args.model_dump(mode="json"), tool_call_id=ctx.tool_call_id,
                                  session_id=ctx.session_id)
        reply: QuestionReply = await ctx.questions(request)
        if reply.answers is None:
            return ToolResult(reply.message.strip() or DECLINED, is_error=True, metadata={"code": PERMISSION_DENIED})
        answers = {q.text: reply.answers.get(q.text, Picked()) for q in questions}
        return ToolResult(answers_text(questions, answers), metadata={"answers": answers_metadata(answers)})
