"""Permission questions as the Claude Agent SDK's `can_use_tool` control requests (`--permission-prompt-tool
stdio`): the program's callback answers allow (with `updatedInput`, and `updatedPermissions` that add rules or
change the mode for the rest of the session) or deny (with the message the model reads, and `interrupt` to end
the turn). While it decides, the session state is `requires_action`.

AskUserQuestion is asked the way Claude Code asks it: a `can_use_tool` request for the tool, its questions as the
input; the program puts the person's answers in `updatedInput.answers` (question text → the label, the labels of
a multiSelect question joined with ", ", or free text), and a deny is the refusal the model reads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from agentcli.headless.control import ControlChannel, ControlError
from agentcli.headless.printer import MODES_BY_NAME, HeadlessPrinter
from agentcli.tools import (
    EDIT_TOOLS,
    Answer,
    AskUserQuestionTool,
    PermissionPolicy,
    PermissionRequest,
    PermissionRule,
    QuestionReply,
    QuestionRequest,
    replies_from_program,
)

log = logging.getLogger(__name__)


class SdkApprover:
    """The `Approver` of a session driven over the control protocol."""

    def __init__(self, channel: ControlChannel, printer: HeadlessPrinter) -> None:
        self.channel = channel
        self.printer = printer
        self.policy: PermissionPolicy | None = None  # set once the conversation exists
        self.interrupt: Callable[[], object] = lambda: None  # ends the running turn

    async def __call__(self, request: PermissionRequest) -> Answer:
        body: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": request.tool,
            "input": request.tool_input,
            "permission_suggestions": suggestions(request),
            "tool_use_id": request.tool_call_id,
            "description": request.summary,
        }
        if request.target and request.tool in EDIT_TOOLS:
            body["blocked_path"] = request.target
        self.printer.set_state("requires_action")
        try:
            reply = await self.channel.request(body)
        except ControlError as exc:
            return Answer("deny", message=f"Permission denied: the program's permission callback failed: {exc}")
        finally:
            self.printer.set_state("running")
        if reply.get("behavior") == "allow":
            self._update(reply.get("updatedPermissions"))
            changed = reply.get("updatedInput")
            return Answer("allow_once", updated_input=changed if isinstance(changed, dict) else None)
        if reply.get("interrupt"):
            self.interrupt()
        message = reply.get("message")
        return Answer("deny", message=message if isinstance(message, str) and message.strip() else
                      f"Permission denied: the program denied this {request.tool} call")

    async def ask_questions(self, request: QuestionRequest) -> QuestionReply:
        """The conversation's `QuestionAsker`: the program's `can_use_tool` callback answers AskUserQuestion."""
        count = len(request.questions)
        body: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": AskUserQuestionTool.name,
            "input": request.tool_input,
            "permission_suggestions": [],
            "tool_use_id": request.tool_call_id,
            "description": f"[{request.agent}] asks {count} question{'s' if count != 1 else ''}",
        }
        self.printer.set_state("requires_action")
        try:
            reply = await self.channel.request(body)
        except ControlError as exc:
            return QuestionReply.declined(f"The program's permission callback failed, so nothing was answered: {exc}")
        finally:
            self.printer.set_state("running")
        if reply.get("behavior") == "allow":
            changed = reply.get("updatedInput")
            answers = changed.get("answers") if isinstance(changed, dict) else None
            return QuestionReply(replies_from_program(request.questions, answers))
        if reply.get("interrupt"):
            self.interrupt()
        message = reply.get("message")
        return QuestionReply.declined(message if isinstance(message, str) and message.strip() else
                                      "The program declined to answer these questions.")

    def _update(self, updates: object) -> None:
        """`updatedPermissions`: rules added to allow or deny, or a new mode, for the rest of the session."""
        if not isinstance(updates, list) or self.policy is None:
            return
        for update in updates:
            if not isinstance(update, dict):
                continue
            kind = update.get("type")
            if kind == "setMode" and update.get("mode") in MODES_BY_NAME:
                self.policy.set_mode(MODES_BY_NAME[update["mode"]])  # type: ignore[arg-type]
            elif kind == "addRules" and update.get("behavior") in ("allow", "deny"):
                target = self.policy.allow if update["behavior"] == "allow" else self.policy.deny
                for rule in update.get("rules") or []:
                    text = _rule_text(rule)
                    try:
                        target.append(PermissionRule.parse(text))
                    except ValueError as exc:
                        log.warning("permission update %r not applied: %s", text, exc)


def suggestions(request: PermissionRequest) -> list[dict[str, Any]]:
    """What "allow always" would mean, in Claude Code's permission update shapes."""
    if request.tool in EDIT_TOOLS:
        return [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]
    rule: dict[str, Any] = {"toolName": request.tool}
    if request.tool == "Bash" and request.target:
        rule["ruleContent"] = request.target
    return [{"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session"}]


def _rule_text(rule: object) -> str:
    if not isinstance(rule, dict):
        return str(rule)
    name, content = str(rule.get("toolName") or ""), rule.get("ruleContent")
    return f"{name}({content})" if content else name
