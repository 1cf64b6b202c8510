"""`--json-schema`: every turn's answer is a JSON document the schema validates, reported as the result's
`structured_output` (and, as compact JSON, its `result`). agentcli asks for it the way it asks its subagents
(`output_schema`): the schema goes with the prompt, an answer that misses it gets one repair turn, and a turn
whose answer still misses it fails with `error_max_structured_output_retries`, as Claude Code's does.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from agentcli.headless.flags import FlagError
from agentcli.llm import Message, TextBlock
from agentcli.subagents import answer_format, compile_schema, document_text, schema_problem

if TYPE_CHECKING:
    from agentcli.agent import RunOutcome
    from agentcli.conversation import Conversation

RETRIES_EXHAUSTED = "error_max_structured_output_retries"


def read_schema(text: str) -> dict[str, Any]:
    """`--json-schema`'s JSON schema, checked before the session starts (`FlagError`: why it cannot be used)."""
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FlagError(f"--json-schema: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(schema, dict):
        raise FlagError("--json-schema: a JSON schema is an object")
    try:
        compile_schema(schema)
    except Exception as exc:
        raise FlagError(f"--json-schema: {str(exc).splitlines()[0] if str(exc) else exc}") from None
    return schema


@dataclass(frozen=True, slots=True)
class Structured:
    """A turn's outcome and, when its answer satisfied the schema, the parsed document."""

    outcome: RunOutcome
    document: Any = None
    subtype: str | None = None  # the result's subtype when the retries ran out


async def structured_turn(conversation: Conversation, prompt: str | Message, schema: dict[str, Any],
                          message_id: str | None = None) -> Structured:
    """Run one turn whose answer must satisfy `schema`, with one repair turn (`message_id`: the user message's
    uuid, for the checkpoint of its prompt; the repair prompt gets one of its own)."""
    outcome = await conversation.send(_with_format(prompt, schema), message_id=message_id)
    for attempt in range(2):
        if outcome.status != "completed":
            return Structured(outcome)
        problem = await asyncio.to_thread(schema_problem, outcome.result, schema)
        if problem is None:
            return Structured(outcome, json.loads(document_text(outcome.result)))
        if attempt == 0:
            outcome = await conversation.send(f"Your answer does not satisfy the required JSON schema: {problem}. "
                                              "Reply again with only the corrected JSON document.")
    why = f"the answer does not satisfy --json-schema after one repair turn: {problem}"
    return Structured(replace(outcome, status="failed", error=why), subtype=RETRIES_EXHAUSTED)


def _with_format(prompt: str | Message, schema: dict[str, Any]) -> str | Message:
    instruction = answer_format(schema).strip()
    if isinstance(prompt, str):
        return f"{prompt}\n\n{instruction}"
    return Message(role=prompt.role, content=[*prompt.content, TextBlock(text=instruction)])
