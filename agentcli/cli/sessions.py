"""`agentcli sessions list|show|rewind|delete`: stored sessions and their transcripts, as plain text or JSON;
rewinds of their files and conversation to a checkpoint; deleting them with their checkpoints.

Their figures are the ledger's (`agentcli.agent.ledger`, built from the store by `cli_common.stored_ledger`):
a session's total is its whole delegation tree, split into its own requests and its subagents'.

Only typer and the standard library at import time: the store is imported inside the commands.
The store, formatting and transcript helpers are in cli_common.py, shared with the other commands.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentcli.cli.common import echo, find_or_fail, open_store, print_json, table, transcript
from agentcli.figures import compact_tokens, format_cost, size_text, spend_text
from agentcli.frontend import fail, format_when, stored_ledger

if TYPE_CHECKING:
    from agentcli.agent import Ledger
    from agentcli.conversation import RewindPreview
    from agentcli.store import CheckpointRecord, SessionRecord, Store, TreeSpend

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
        points = store.checkpoints(session.id)
    finally:
        store.close()
    disk = _checkpoint_bytes(session) if points else 0
    if as_json:
        record: dict[str, Any] = {
            "session": session.model_dump(mode="json"),
            "ledger": stored_ledger(spent).as_dict(),  # own, delegated (every session below), total
            "usage_rollup": usage_rollup(spent).model_dump(mode="json"),
            "messages": [m.model_dump(mode="json") for m in messages],
            "tool_calls": [c.model_dump(mode="json") for c in calls],
            "subagent_sessions": [c.model_dump(mode="json") for c in children],
            "tasks": [t.model_dump(mode="json") for t in tasks],
            "checkpoints": {"bytes": disk, "rows": [dataclasses.asdict(p) for p in points]},
        }
        print_json(record)
        return
    echo(_header(session, stored_ledger(spent), spent.sessions, children))
    if points:
        echo(_checkpoints(points, disk))
    echo()
    echo(transcript(messages, calls))


def _checkpoint_bytes(session: SessionRecord) -> int:
    """What the session's checkpoints alone hold on disk (0 when its workspace has no shadow repository)."""
    from pathlib import Path

    from agentcli.checkpoints import CheckpointError, ShadowRepo

    try:
        return ShadowRepo(Path(session.workspace or ".")).disk_use(f"{session.id}/")
    except CheckpointError:
        return 0


def _checkpoints(points: list[CheckpointRecord], disk: int) -> str:
    """The prompts a rewind can go back to (`sessions rewind --to N`), and the disk they hold."""
    prompts = [p for p in points if p.kind == "prompt"]
    rewinds = len(points) - len(prompts)
    size = size_text(disk)
    lines = [f"  checkpoints: {len(prompts)} prompt{'' if len(prompts) == 1 else 's'}"
             + (f", {rewinds} rewind{'' if rewinds == 1 else 's'}" if rewinds else "") + f", {size} on disk"]
    for number, point in enumerate(prompts, 1):
        title = (point.prompt.strip().splitlines() or [""])[0][:60]
        count = len(point.files)
        files = "unfinished" if point.after_tree is None else f"{count} file{'' if count == 1 else 's'}"
        lines.append(f"    #{number:<3} {_when(point.created_at)}  {files:>10}  {title}")
    return "\n".join(lines)


def _when(stamp: str) -> str:
    from datetime import datetime

    try:
        return format_when(datetime.fromisoformat(stamp))
    except ValueError:
        return stamp


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


ModeOption = Annotated[
    str, typer.Option("--mode", "-m", metavar="MODE",
                      help="both (files and conversation), code (files only) or conversation (messages only).")
]


@sessions_app.command("rewind")
def sessions_rewind(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="Session id or a unique prefix.")],
    to: Annotated[str, typer.Option("--to", metavar="PROMPT",
                                    help="The prompt to go back to (before it ran): its number (1 the first, -1 the "
                                         "last), its message uuid, or 'last': the latest one still in the "
                                         "conversation. 'sessions show' lists them.")] = "last",
    mode: ModeOption = "both",
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Only say what would change.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Also overwrite files changed outside an agent's turn "
                                                        "since the checkpoint (kept otherwise).")] = False,
    redo: Annotated[bool, typer.Option("--redo", help="Undo the latest rewind instead (when no prompt came "
                                                      "since).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Put a session's files and/or conversation back to what they were before one of its prompts.

    Every rewind is a checkpoint of its own: --redo undoes it. A file you changed yourself since the checkpoint is
    kept unless you confirm (on a terminal) or pass --force; untracked files agentcli never saw, ignored files and
    files over the size cap are never touched."""
    import asyncio

    from agentcli.conversation import MODES

    if mode not in MODES:
        fail(f"--mode {mode!r}: use one of {', '.join(MODES)}", 2)
    asyncio.run(_rewind(session_id, to, mode, dry_run=dry_run, force=force, redo=redo, as_json=as_json))


async def _rewind(ref: str, to: str, mode: str, *, dry_run: bool, force: bool, redo: bool, as_json: bool) -> None:
    from pathlib import Path

    from agentcli.conversation import ResumeError, RewindError, StoredRewinder, as_mode
    from agentcli.frontend import load

    store = open_store()
    try:
        try:
            record = find_or_fail(store.get_session, ref, "session")
            settings = load(Path(record.workspace) if record.workspace else Path.cwd(), None).settings
            rewinder = await StoredRewinder.claim(settings, store, record.id)
        except ResumeError as exc:
            fail(str(exc))
        try:
            preview = await (rewinder.preview_redo() if redo else rewinder.preview_rewind(to, as_mode(mode)))
            if dry_run or not as_json:
                _say_preview(preview, as_json)
            if dry_run:
                return
            overwrite = force or (bool(preview.plan and preview.plan.by_person) and _confirm(preview))
            done = await (rewinder.redo(preview, overwrite=overwrite) if redo
                          else rewinder.rewind(preview, overwrite=overwrite))
        except RewindError as exc:
            fail(str(exc))
        finally:
            await rewinder.release()
    finally:
        store.close()
    if as_json:
        print_json({"mode": done.mode, "redo": done.redo, "prompt": done.prompt, "messages": done.messages,
                    "files": [{"path": f.path, "action": f.action} for f in done.changed], "problems": done.problems})
        return
    echo(done.line())
    for problem in done.problems:
        echo(f"  {problem}")


def _say_preview(preview: RewindPreview, as_json: bool) -> None:
    """What the rewind will do: the prompt it goes back to, then one line per file."""
    from agentcli.conversation import MODE_TEXT

    point = preview.point
    if as_json:
        print_json({"prompt": point.prompt, "checkpoint": point.id, "mode": preview.mode,
                    "files": [{"path": f.path, "action": f.action, "by_person": f.by_person} for f in preview.files],
                    "left_out": [{"path": s.path, "reason": s.reason} for s in
                                 (preview.plan.left_out if preview.plan else [])]})
        return
    title = (point.prompt.strip().splitlines() or [""])[0]
    echo(f"{'redo' if point.kind == 'rewind' else 'rewind'} ({MODE_TEXT[preview.mode]}) to before "
         f"“{title[:80]}” ({_when(point.created_at)})")
    if preview.mode != "conversation":
        echo("\n".join(f"  {line}" for line in preview.lines()) or "  no file changes")


def _confirm(preview: RewindPreview) -> bool:
    """Ask on a terminal whether to overwrite the files the person changed; never without one."""
    import sys

    mine = preview.plan.by_person if preview.plan else []
    echo(f"{len(mine)} file{'' if len(mine) == 1 else 's'} changed outside an agent's turn since the checkpoint: "
         + ", ".join(f.path for f in mine[:5]) + (" …" if len(mine) > 5 else ""))
    if not sys.stdin.isatty():
        echo("  kept (--force overwrites them)")
        return False
    answer = input("Overwrite them too? [y/N] ").strip().lower()
    return answer in ("y", "yes")


@sessions_app.command("delete")
def sessions_delete(
    session_ids: Annotated[list[str], typer.Argument(metavar="ID...", help="Session ids or unique prefixes.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
) -> None:
    """Delete stored sessions for good: their transcripts, subagents' sessions, task records and checkpoints
    (your files stay as they are). A session another agentcli holds is refused."""
    import asyncio
    import sys

    store = open_store()
    try:
        records = [find_or_fail(store.get_session, ref, "session") for ref in session_ids]
        if not yes:
            if not sys.stdin.isatty():
                fail("deleting sessions asks first: pass --yes to delete without a terminal")
            names = ", ".join(f"{r.id} ({r.title or 'untitled'})" for r in records)
            if input(f"Delete {names} and their checkpoints? [y/N] ").strip().lower() not in ("y", "yes"):
                fail("nothing deleted")
        for record in records:
            echo(asyncio.run(_delete(store, record)))
    finally:
        store.close()


async def _delete(store: Store, record: SessionRecord) -> str:
    from pathlib import Path

    from agentcli.checkpoints import CheckpointError, ShadowRepo
    from agentcli.conversation import holder_line
    from agentcli.store import claim_session, delete_session_tree

    holder = await store.write(claim_session(record.id))
    if holder is not None:
        fail(holder_line(record.id, holder))
    freed = _checkpoint_bytes(record)
    ids = await store.write(delete_session_tree(record.id))
    try:
        refs = ShadowRepo(Path(record.workspace or ".")).forget(f"{record.id}/") if record.workspace else 0
    except CheckpointError as exc:
        return f"deleted {record.id} ({len(ids)} sessions); its checkpoints stay: {exc}"
    return (f"deleted {record.id} ({len(ids)} session{'' if len(ids) == 1 else 's'}"
            + (f", {refs} checkpoint trees, {freed / (1 << 20):.1f} MiB freed" if refs else "") + ")")
