"""A Task call's handle built (its child session, record and supervisor) and its record closed when it ends."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from agentcli.agent import Session, new_id
from agentcli.events import SubagentBlockFinishedEvent
from agentcli.status import FINISHED_TASK_STATUSES, TaskStatus, short_result
from agentcli.store import TaskRecord, ToolCount
from agentcli.subagents.budget import PriceNotices
from agentcli.subagents.fork import ForkPoint
from agentcli.subagents.limits import Slot, normalize_prompt
from agentcli.subagents.plan import TaskPlan
from agentcli.subagents.supervisor import Supervisor
from agentcli.subagents.task_tool import ParentLink, TaskArgs
from agentcli.subagents.tasks import TaskHandle, TaskTable


def new_handle(
    table: TaskTable, args: TaskArgs, plan: TaskPlan, parent: ParentLink, tool_call_id: str,
    previous: TaskRecord | None, fork: ForkPoint | None, prices: PriceNotices, settle: Callable[[Session], None],
) -> TaskHandle:
    """The handle of a planned Task call: a queued record, the child's session (a resumed task's history,
    `settle`d) and its supervisor."""
    agent_type = plan.agent_type
    task_id = new_id("tsk")
    number = table.number(agent_type.name)
    psession = parent.session
    child = Session(
        system_prompt=plan.system_prompt,
        system_stable=plan.system_stable,
        model=plan.model,
        workspace=table.workspace,
        agent=f"{agent_type.name}#{number}",
        agent_type=agent_type.name,
        depth=psession.depth + 1,
        chain=(*psession.chain, agent_type.name),
        lineage=(*psession.lineage, (agent_type.name, normalize_prompt(args.prompt))),
        parent_session_id=psession.id,
        task_id=task_id,
    )
    if previous is not None and previous.child_session_id:
        child.id = previous.child_session_id
        child.messages, child.next_seq = table.context(previous)
        settle(child)
    record = TaskRecord(
        task_id=task_id,
        parent_session_id=psession.id,
        parent_task_id=parent.task_id,
        parent_tool_call_id=tool_call_id,
        child_session_id=child.id,
        depth=child.depth,
        chain=list(child.chain),
        subagent_type=agent_type.name,
        description=args.description,
        prompt=args.prompt,
        model_used=plan.model.display,
        status="queued",
        inherited_messages=len(fork.messages) if fork else 0,
    )
    above = table.handles.get(parent.task_id) if parent.task_id else None
    return TaskHandle(
        root=above.root if above else None,  # below an isolated task: its worktree
        sandbox=above.sandbox if above else None,
        record=record,
        plan=plan,
        session=child,
        parent=parent,
        supervisor=Supervisor(record, child, psession, parent.emit, plan.budgets, plan.timeout, prices),
        slot=Slot(priority=child.depth),
        output_schema=args.output_schema,
        fork=fork,
    )


def close_record(
    handle: TaskHandle, status: TaskStatus, result: str | None, error: str | None,
) -> SubagentBlockFinishedEvent | None:
    """Write a task's end into its record (status, result, time, tools, files, tokens) and release its waiters;
    the parent's event of it. None when the record was already finished."""
    record, sup = handle.record, handle.supervisor
    if record.status in FINISHED_TASK_STATUSES:
        return None
    record.status = status
    record.result = result or ""
    record.error = error if status != "completed" else None
    record.finished_at = datetime.now(UTC)
    record.time_ms = round(sup.elapsed_ms, 1)
    record.tool_summary = [ToolCount(tool=t, count=c) for t, c in sup.tool_counts.most_common()]
    record.files_modified = list(sup.files)
    sup.count_tokens()
    handle.done.set()
    return SubagentBlockFinishedEvent(
        session_id=handle.parent.session.id,
        agent=handle.parent.session.agent,
        task_id=record.task_id,
        status=status,
        short_result=short_result(record.status, record.subagent_type, record.error),
        error=record.error,
        elapsed_ms=record.time_ms,
        tool_calls=record.tool_calls,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        cost_usd=record.cost_usd,
    )
