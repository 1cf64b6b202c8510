"""`agentcli tasks list|show`: stored Task delegations, their records, results and the child transcripts.

Only typer and the standard library at import time: the store is imported inside the commands. The
store, formatting and transcript helpers are shared with the other commands (cli_common.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentcli.cli.common import echo, find_or_fail, open_store, print_json, table, transcript
from agentcli.figures import compact_tokens, format_cost, tokens_text
from agentcli.frontend import format_when
from agentcli.text import one_line

if TYPE_CHECKING:
    from agentcli.store import TaskRecord

tasks_app = typer.Typer(help="Stored subagent tasks (Task tool delegations).", rich_markup_mode=None)


def _duration(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


@tasks_app.command("list")
def tasks_list(
    session: Annotated[
        str | None, typer.Option("--session", "-s", metavar="ID", help="Only tasks of this parent session (or prefix).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many tasks, newest first.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List stored tasks, newest first."""
    store = open_store()
    try:
        parent = find_or_fail(store.get_session, session, "session").id if session is not None else None
        tasks = store.list_tasks(parent_session_id=parent, limit=limit)
    finally:
        store.close()
    if as_json:
        print_json([t.model_dump(mode="json") for t in tasks])
        return
    if not tasks:
        echo("No tasks yet." if session is None else f"No tasks in session {parent}.")
        return
    headers = ["ID", "STARTED", "STATUS", "TYPE", "MODEL", "TIME", "TOOLS", "TOKENS IN/OUT", "COST", "DESCRIPTION"]
    rows = [
        [
            t.task_id,
            format_when(t.started_at),
            "cached" if t.cached_from else t.status,
            t.subagent_type,
            t.model_used or "-",
            _duration(t.time_ms),
            str(t.tool_calls),
            f"{compact_tokens(t.input_tokens)}/{compact_tokens(t.output_tokens)}",
            format_cost(t.cost_usd, unknown="-"),
            one_line(t.description, 60),
        ]
        for t in tasks
    ]
    echo(table(headers, rows))


@tasks_app.command("show")
def tasks_show(
    task_id: Annotated[str, typer.Argument(metavar="ID", help="Task id or a unique prefix.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the record and the transcript as JSON.")] = False,
) -> None:
    """Show one task: every field of its record, the full result, then the subagent's transcript."""
    store = open_store()
    try:
        task = find_or_fail(store.get_task, task_id, "task")
        child = store.get_session(task.child_session_id) if task.child_session_id else None
        messages = store.get_messages(child.id) if child else []
        calls = store.get_tool_calls(child.id) if child else []
        letters = store.task_messages(task.task_id)
    finally:
        store.close()
    if as_json:
        record: dict[str, Any] = {
            "task": task.model_dump(mode="json"),
            "child_session": child.model_dump(mode="json") if child else None,
            "messages": [m.model_dump(mode="json") for m in messages],
            "tool_calls": [c.model_dump(mode="json") for c in calls],
            "agent_messages": [m.model_dump(mode="json") for m in letters],
        }
        print_json(record)
        return
    echo(_header(task))
    for title, text in (("Prompt", task.prompt), ("Result", task.result), ("Error", task.error)):
        if text:
            echo(f"\n{title}:\n{text.rstrip()}")
    if letters:
        echo("\nMessages:")
        for m in letters:
            to = m.recipient_task_id or "main"
            how = f"continued as {m.continued_as}" if m.delivery == "continued" else m.delivery
            echo(f"  {format_when(m.created_at)}  {one_line(m.sender)} → {to}: {one_line(m.text)} [{how}]")
    if task.child_session_id:
        echo(f"\nTranscript (session {task.child_session_id}):\n")
        if child and task.forked:
            echo(f"(its first {task.inherited_messages} messages, its parent's conversation, are not shown)\n")
        echo(transcript(messages[task.inherited_messages:], calls) if child else "(the session was not stored)")


def _merge_text(t: TaskRecord) -> str:
    """How an isolated task's worktree ended for the workspace, with its kept branch."""
    if t.merge == "merged":
        return "merged into the workspace: " + (", ".join(t.files_merged) or "-")
    if t.merge == "conflict":
        return f"not merged, in conflict: {', '.join(t.files_conflicted)}; kept on branch {t.branch}"
    if t.merge == "kept":
        return f"not merged; kept on branch {t.branch}"
    return "no changes"


def _header(t: TaskRecord) -> str:
    """Every field of the record but prompt, result and error, which follow in full."""
    parent = t.parent_session_id or "-"
    if t.parent_task_id:
        parent += f" (task {t.parent_task_id})"
    if t.parent_tool_call_id:
        parent += f" (tool call {t.parent_tool_call_id})"
    tools = ", ".join(f"{c.tool} ×{c.count}" for c in t.tool_summary)
    fields: list[tuple[str, str]] = [
        ("type", t.subagent_type),
        ("description", t.description or "-"),
        ("status", t.status + (f" (cached: the result of {t.cached_from}, no model request)" if t.cached_from else "")),
        ("model", t.model_used or "-"),
        ("parent", parent),
        ("session", t.child_session_id or "-"),
        ("depth", str(t.depth)),
        ("chain", " → ".join(t.chain) or "-"),
        ("fork", f"yes: it started from its parent's {t.inherited_messages} messages" if t.forked else "no"),
        ("started", format_when(t.started_at)),
        ("finished", format_when(t.finished_at)),
        ("time", _duration(t.time_ms)),
        ("tool calls", str(t.tool_calls) + (f" ({tools})" if tools else "")),
        ("files modified", ", ".join(t.files_modified) or "-"),
        ("tokens", f"{tokens_text(t)} (its subagents included)"),
        ("cost", format_cost(t.cost_usd, unknown="price unknown")),
    ]
    if t.merge is not None:
        fields.append(("worktree", _merge_text(t)))
    width = max(len(k) for k, _ in fields) + 1
    return "\n".join([f"Task {t.task_id}", *(f"  {(k + ':').ljust(width)} {v}" for k, v in fields)])
