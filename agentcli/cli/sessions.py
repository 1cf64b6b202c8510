"""`agentcli sessions list|show`: stored sessions and their transcripts, as plain text or JSON.

Their figures are the ledger's (`agentcli.agent.ledger`, built from the store by `cli_common.stored_ledger`):
a session's total is its whole delegation tree, split into its own requests and its subagents'.

Only typer and the standard library at import time: the store is imported inside the commands.
The store, formatting and transcript helpers are in cli_common.py, shared with the other commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentcli.cli.common import echo, find_or_fail, open_store, print_json, table, transcript
from agentcli.figures import compact_tokens, format_cost, spend_text
from agentcli.frontend import fail, format_when, stored_ledger

if TYPE_CHECKING:
    from agentcli.agent import Ledger
    from agentcli.store import SessionRecord, Store, TreeSpend

sessions_app = typer.Typer(help="Stored sessions and their transcripts.", rich_markup_mode=None)


def _model(s: SessionRecord) -> str:
    return f"{s.provider}:{s.model}" if s.provider else s.model or "-"


def _spent(store: Store, s: SessionRecord) -> TreeSpend:
    """The session tree's spend, split as the ledger splits it (one query)."""
    return store.session_spend(s.id) or _unspent(s)


def _unspent(s: SessionRecord) -> TreeSpend:
    """The spend of a session the store has no tree for (it went away meanwhile): nothing."""
    from agentcli.store import TreeSpend

    return TreeSpend(session_id=s.id, sessions=1)


@sessions_app.command("list")
def sessions_list(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many sessions, newest first.")] = 20,
    all_: Annotated[bool, typer.Option("--all", "-a", help="Include subagent sessions.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List stored sessions, newest first; tokens and cost are each session's whole tree (subagents included)."""
    store = open_store()
    try:
        sessions = store.list_sessions(limit=limit, include_subagents=all_)
        spends = store.sessions_spend([s.id for s in sessions])  # one query for the whole page
        ledgers = [stored_ledger(spends.get(s.id) or _unspent(s)) for s in sessions]
    finally:
        store.close()
    if as_json:  # the row's own token fields, and the ledger: own, delegated, total
        pairs = zip(sessions, ledgers, strict=True)
        print_json([{**s.model_dump(mode="json"), "ledger": ledger.as_dict()} for s, ledger in pairs])
        return
    if not sessions:
        echo("No sessions yet.")
        return
    headers = ["ID", "STARTED", "STATUS", "MODEL", "TURNS", "TOKENS IN/OUT", "COST"]
    headers += ["AGENT", "TITLE"] if all_ else ["TITLE"]
    rows = []
    for s, ledger in zip(sessions, ledgers, strict=True):
        row = [s.id, format_when(s.created_at), s.status, _model(s), str(s.turns)]
        total = ledger.total
        tokens = f"{compact_tokens(total.usage.input_tokens)}/{compact_tokens(total.usage.output_tokens)}"
        row += [tokens, format_cost(total.cost_usd) if total.requests else "-"]
        row += [s.agent, s.title or ""] if all_ else [s.title or ""]
        rows.append(row)
    echo(table(headers, rows))


@sessions_app.command("show")
def sessions_show(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="Session id or a unique prefix.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the full record with messages as JSON.")] = False,
) -> None:
    """Show one session: its fields, usage and transcript."""
    from agentcli.store import StoreError, usage_rollup
    from agentcli.text import terminal_safe

    store = open_store()
    try:
        session = find_or_fail(store.get_session, session_id, "session")
        try:
            messages = store.get_messages(session.id)
        except StoreError as exc:  # a damaged row: one line saying which
            fail(terminal_safe(str(exc)))
        calls = store.get_tool_calls(session.id)
        spent = _spent(store, session)
        children = store.list_sessions(limit=1000, parent_session_id=session.id)
        tasks = store.list_tasks(parent_session_id=session.id, limit=1000)
    finally:
        store.close()
    if as_json:
        record: dict[str, Any] = {
            "session": session.model_dump(mode="json"),
            "ledger": stored_ledger(spent).as_dict(),  # own, delegated (every session below), total
            "usage_rollup": usage_rollup(spent).model_dump(mode="json"),
            "messages": [m.model_dump(mode="json") for m in messages],
            "tool_calls": [c.model_dump(mode="json") for c in calls],
            "subagent_sessions": [c.model_dump(mode="json") for c in children],
            "tasks": [t.model_dump(mode="json") for t in tasks],
        }
        print_json(record)
        return
    echo(_header(session, stored_ledger(spent), spent.sessions, children))
    echo()
    echo(transcript(messages, calls))


def _header(s: SessionRecord, ledger: Ledger, tree_sessions: int, children: list[SessionRecord]) -> str:
    fields: list[tuple[str, str]] = [
        ("title", s.title or "-"),
        ("status", s.status + (f" ({s.error})" if s.error else "")),
        ("agent", f"{s.agent} (depth {s.depth})" + (f", type {s.agent_type}" if s.agent_type else "")),
    ]
    if s.parent_session_id:
        fields.append(("parent", s.parent_session_id + (f" (task {s.task_id})" if s.task_id else "")))
    fields += [
        ("model", _model(s)),
        ("workspace", s.workspace or "-"),
        ("started", format_when(s.created_at)),
        ("finished", format_when(s.finished_at)),
        ("turns", str(s.turns)),
    ]
    total, own, delegated = ledger.total, ledger.own, ledger.delegated
    below = tree_sessions - 1
    fields += [
        ("total", spend_text(total.usage, total.cost_usd, total.requests)),
        ("main agent" if s.depth == 0 else s.agent, spend_text(own.usage, own.cost_usd, own.requests)),
        (
            "subagents",
            spend_text(delegated.usage, delegated.cost_usd, delegated.requests)
            + f" in {below} session{'' if below == 1 else 's'}"
            if below
            else "none",
        ),
    ]
    for child in children:
        fields.append(("subagent", f"{child.id}  {child.agent}  {child.status}  {child.title or ''}".rstrip()))
    width = max(len(k) for k, _ in fields) + 1
    return "\n".join([f"Session {s.id}", *(f"  {(k + ':').ljust(width)} {v}" for k, v in fields)])
