"""Forks (`fork_context`): a subagent that starts from its parent's conversation so far.

A fork's requests begin exactly as its parent's do: the parent's system prompt, its tool list
(`ParentLink.specs`, the parent loop's `offered`: its list and the deferred tools the system prompt names,
byte-identical) and its messages, unchanged, from
its first prompt on, so the provider's prompt cache serves that prefix. All three are taken when the
Task call is made (`fork_point`), so a background fork does not see what its parent does later.

The parent's last message is the assistant turn that holds the Task call, whose result does not exist
yet. The fork's first message closes that turn: its own call is answered `OWN_CALL` ("forked here"),
any other call of that turn `OTHER_CALL` (the parent runs those), and the Task prompt follows in the
same user message, after the type's role, task and confinement, which a subagent's own system prompt
would carry (`plan.fork_message`). Anthropic takes tool results first in a user message, then text;
the OpenAI adapter sends them as tool messages, then a user message: both see a valid conversation.

What a fork may do is its plan's, as for any subagent (type policy, depth rule, `deny_tools`, write
confinement, read-only below read-only). A tool of the parent's list outside that stays in the list
(the prefix must not change) and is refused when called, with the reason (`ForkPoint.tools`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentcli.agent import Offered, Session
from agentcli.llm import Message, TextBlock, ToolResultBlock
from agentcli.subagents.plan import Planner, Refusal, TaskPlan
from agentcli.subagents.task_tool import ParentLink
from agentcli.tools import Tool

if TYPE_CHECKING:
    from agentcli.store import Store

OWN_CALL = "Forked here: you are the fork this Task call started, and its task is yours to do (it follows)."
OTHER_CALL = "Not run in this fork: this call is your parent's, and so is its result."


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """What a fork starts from, as it was when the parent made the Task call `tool_call_id`."""

    messages: tuple[Message, ...]  # the parent's context, its Task call's assistant turn last
    offered: Offered  # the parent's tool list and deferred tools, as its requests send them
    tool_call_id: str

    def history(self) -> list[Message]:
        """The fork's copy of the parent's messages: a list of its own, each message's block list its own
        (blocks are frozen; messages are never changed in place, but a shared list must never be either)."""
        return [m.model_copy(update={"content": list(m.content)}) for m in self.messages]

    def opening(self, text: str) -> Message:
        """The fork's first message: results for the parent's open calls (see the module docstring), then `text`."""
        last = self.messages[-1] if self.messages else None
        calls = last.tool_uses() if last is not None and last.role == "assistant" else []
        results = [
            ToolResultBlock(
                tool_use_id=call.id,
                content=OWN_CALL if call.id == self.tool_call_id else OTHER_CALL,
                is_error=call.id != self.tool_call_id,
            )
            for call in calls
        ]
        return Message(role="user", content=[*results, TextBlock(text=text)])

    def start(self, session: Session, text: str, store: Store | None) -> Message:
        """Give the fork's session the parent's messages (stored too, so a resume finds a valid context) and
        return its first message, for `AgentLoop.run`."""
        session.messages, session.next_seq = self.history(), len(self.messages)
        if store is not None:
            from agentcli.store import add_inherited_messages

            store.record(add_inherited_messages(session.id, self.messages))
        return self.opening(text)

    def tools(
        self, built: Sequence[Tool[Any]], plan: TaskPlan, planner: Planner, depth: int
    ) -> tuple[list[Tool[Any]], dict[str, str]]:
        """The tools the fork may run (its plan's, as built for it, that its parent's list offers) and, for every
        other tool of that list, the error a call to it gets."""
        listed = [spec.name for spec in self.offered.specs if spec.name != "ToolSearch"]  # its own, over its tools
        listed += self.offered.deferred
        runnable = [tool for tool in built if tool.name in listed]
        names = {tool.name for tool in runnable}
        allowed = ", ".join(name for name in listed if name in names) or "none"
        return runnable, {
            name: f"{name} is not available to this fork: {withheld_reason(name, plan, planner, depth)}. A fork "
            f"sees its parent's tools but may call only its own: {allowed}."
            for name in listed
            if name not in names
        }


def withheld_reason(name: str, plan: TaskPlan, planner: Planner, depth: int) -> str:
    """Why a subagent planned as `plan`, at `depth`, does not get tool `name` (the rule that removed it)."""
    agent_type = plan.agent_type
    if name in (past_depth := planner.withheld(depth)):
        return past_depth[name]
    if name in planner.settings.task_tool.deny_tools:
        return "it is denied to subagents (task_tool.deny_tools)"
    if not agent_type.allowed_tools([name]):
        return f"agent type '{agent_type.name}' does not have it"
    if () in plan.write_scopes:
        return "it can change files or run commands, and this fork works below a read-only agent"
    if plan.write_scopes or plan.write_paths is not None:
        return "it could write outside the write confinement (write_paths) this fork works under"
    return "it is not among this fork's tools"


def fork_point(parent: ParentLink, tool_call_id: str) -> ForkPoint | Refusal:
    """The parent's conversation and tool list now; a refusal when its tool list is not known."""
    if parent.specs is None:
        return Refusal("fork_context: the calling agent's tool list is not known, so it cannot be forked",
                       "INTERNAL_ERROR")
    return ForkPoint(tuple(parent.session.messages), parent.specs(), tool_call_id)
