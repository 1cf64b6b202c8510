"""Who may message whom in a session tree, and what a message does: `SendMessage`, `ListAgents`, the person's `/msg`.

A parent may message any agent below it, siblings (same parent) each other, a child its parent
(`to="parent"`); the person any queued or running subagent. A message to a queued or running agent
waits in its mailbox (`mailbox.PostOffice`) for its next turn boundary; one to a finished agent
continues it as `Task(resume=...)` would, under the sender. Messages never widen tools or permissions:
they are text in the recipient's next turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import ValidationError

from agentcli.events import AgentMessageEvent
from agentcli.status import ACTIVE_TASK_STATUSES
from agentcli.store import TaskRecord
from agentcli.subagents.messaging.mailbox import PERSON, Letter, PostOffice
from agentcli.subagents.task_tool import ParentLink, TaskArgs, invalid_parameters
from agentcli.subagents.tasks import TaskTable
from agentcli.text import defang_tags, one_line
from agentcli.tools import ToolError, ToolResult

ContinueTask = Callable[[TaskArgs, ParentLink, str], Awaitable[ToolResult]]
MAIN = "main"


class Switchboard:
    """Routes the messages of one session tree."""

    def __init__(self, table: TaskTable, post: PostOffice, continue_task: ContinueTask,
                 limits: Callable[[], Mapping[str, Any]]) -> None:
        self.table = table
        self.post = post
        self.continue_task = continue_task  # the runner's `run_task`: a finished recipient runs again
        self.limits = limits
        self.main_link: ParentLink | None = None  # the main agent (set when its tools are built)

    # --- SendMessage ----------------------------------------------------------------------------------

    async def send(self, sender: ParentLink, to: str, text: str, background: bool, tool_call_id: str) -> ToolResult:
        """Deliver or continue; a message the sender may not send is a ToolError that says who it may message."""
        if not text.strip():
            raise ToolError("message must not be empty")
        to = to.strip()
        parent_id = self._parent_task_id(sender)
        if to == "parent" or (to and to == parent_id):
            if sender.task_id is None:
                raise ToolError('The main agent has no parent: to="parent" is for subagents.')
            if parent_id is None:
                return self._to_main(sender, text)
            to = parent_id
        record, problem = self.table.find(to)
        if record is None:
            raise ToolError(f"{problem} ListAgents shows the agents you can message.")
        if record.task_id == sender.task_id:
            raise ToolError("An agent cannot message itself.")
        relation = self._relation(sender, record)
        if relation is None:
            raise ToolError(
                f"You may not message task {record.task_id}: an agent may message the agents below it, its "
                'siblings (same parent) and its parent (to="parent"). ListAgents shows them.'
            )
        letter = Letter(sender.session.agent, text, sender.task_id, as_data=relation in ("sibling", "parent"))
        if record.status in ACTIVE_TASK_STATUSES and record.task_id in self.table.handles:
            return ToolResult(self._queue(record, letter, sender.session.agent, sender.task_id))
        return await self._continue(sender, record, letter, background, tool_call_id)

    def from_person(self, ref: str, text: str) -> str:
        """The person's message to a queued or running subagent (`/msg`); what happened, one line. ValueError: why
        it cannot be sent."""
        if not text.strip():
            raise ValueError("the message is empty")
        record, problem = self.table.find(ref.strip())
        if record is None:
            raise ValueError(problem)
        if record.status not in ACTIVE_TASK_STATUSES or record.task_id not in self.table.handles:
            raise ValueError(f"task {record.task_id} has finished ({record.status}): /msg reaches queued and running "
                             "subagents; ask the main agent to continue it")
        return self._queue(record, Letter(PERSON, text), PERSON, None)

    def _queue(self, record: TaskRecord, letter: Letter, sender: str, sender_task_id: str | None) -> str:
        handle = self.table.handles[record.task_id]
        waiting = self.post.post(handle.session.id, letter)
        handle.supervisor.relay(AgentMessageEvent(
            session_id=handle.session.id, agent=handle.session.agent, sender=sender, sender_task_id=sender_task_id,
            recipient_task_id=record.task_id, text=letter.text,
        ))
        when = "when it starts" if record.status == "queued" else "at its next turn boundary"
        more = f" ({waiting} messages waiting)" if waiting > 1 else ""
        who = f"{handle.session.agent} ({record.task_id}, {record.status})"
        return f"Message queued for {who}: it reads it {when}{more}."

    def _to_main(self, sender: ParentLink, text: str) -> ToolResult:
        main = self.main_link
        if main is None:
            raise ToolError("The main agent cannot be reached.")
        self.post.post(main.session.id, Letter(sender.session.agent, text, sender.task_id, as_data=True))
        main.emit(AgentMessageEvent(
            session_id=main.session.id, agent=main.session.agent, sender=sender.session.agent,
            sender_task_id=sender.task_id, recipient_task_id=None, text=text,
        ))
        return ToolResult("Message sent to main: it reads it at its next turn.")

    async def _continue(self, sender: ParentLink, record: TaskRecord, letter: Letter, background: bool,
                        tool_call_id: str) -> ToolResult:
        raw = {"description": record.description, "prompt": letter.framed(), "subagent_type": record.subagent_type,
               "resume": record.task_id, "run_in_background": background}
        try:
            args = TaskArgs.model_validate(raw, context=dict(self.limits()))
        except ValidationError as exc:
            raise ToolError(f"Task {record.task_id} cannot be continued: {invalid_parameters(exc)}") from None
        result = await self.continue_task(args, sender, tool_call_id)
        task_id = result.metadata.get("task_id")
        sender.emit(AgentMessageEvent(
            session_id=sender.session.id, agent=sender.session.agent, sender=sender.session.agent,
            sender_task_id=sender.task_id, recipient_task_id=record.task_id, text=letter.text, delivery="continued",
            continued_as=task_id if isinstance(task_id, str) else None,
        ))
        head = f"Task {record.task_id} had finished ({record.status}); the message continued it"
        return ToolResult(f"{head}.\n\n{result.content}", is_error=result.is_error, metadata=result.metadata,
                          files_modified=result.files_modified)

    # --- ListAgents -----------------------------------------------------------------------------------

    def list_agents(self, sender: ParentLink) -> ToolResult:
        """The agents `sender` may message, one line each."""
        lines = []
        if sender.task_id is not None:
            parent_id = self._parent_task_id(sender)
            lines.append(f'- parent: {parent_id or MAIN} (to="parent")')
        records = self.table.records()
        known = {r.task_id: r for r in records}
        for record in records:
            relation = self._relation(sender, record, known) if record.task_id != sender.task_id else None
            if relation is not None:
                lines.append(self._line(record, relation))
        if not lines:
            return ToolResult("No agents to message: you have no parent, siblings or subagents.")
        head = "Agents you can message with SendMessage(to=<task_id>, message=...):"
        return ToolResult("\n".join([head, *lines]))

    def _line(self, record: TaskRecord, relation: str) -> str:
        handle = self.table.handles.get(record.task_id)
        label = handle.session.agent if handle is not None else record.subagent_type
        if handle is not None and record.status in ACTIVE_TASK_STATUSES:
            elapsed, activity = handle.supervisor.elapsed_ms, handle.supervisor.activity
        else:
            elapsed, activity = record.time_ms or 0.0, ""
        parent = record.parent_task_id or MAIN
        text = (f"- {record.task_id} {defang_tags(label)} [{defang_tags(record.subagent_type)}] {record.status}, "
                f"{relation}, depth {record.depth}, parent {parent}, {elapsed / 1000:.1f}s: "
                f"{defang_tags(one_line(record.description, 80))}")
        return f"{text} — last: {defang_tags(one_line(activity, 120))}" if activity else text

    # --- relations ------------------------------------------------------------------------------------

    def _parent_task_id(self, sender: ParentLink) -> str | None:
        handle = self.table.handles.get(sender.task_id) if sender.task_id else None
        return handle.record.parent_task_id if handle is not None else None

    def _relation(self, sender: ParentLink, record: TaskRecord,
                  known: dict[str, TaskRecord] | None = None) -> str | None:
        """How `record`'s agent stands to `sender`: below it, a sibling, its parent, or None (out of reach)."""
        if sender.task_id is None:
            return "below"  # every task of the tree is below the main agent
        above: list[str] = []
        task_id = record.parent_task_id
        if known is None:  # ListAgents builds it once for all its lines
            known = {r.task_id: r for r in self.table.records()}
        while task_id is not None and task_id not in above and task_id in known:
            above.append(task_id)
            task_id = known[task_id].parent_task_id
        if sender.task_id in above:
            return "below"
        if record.parent_session_id == sender.session.parent_session_id:
            return "sibling"
        if record.task_id == self._parent_task_id(sender):
            return "parent"
        return None
