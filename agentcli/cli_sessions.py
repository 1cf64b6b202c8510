"""`agentcli sessions list|show`: stored sessions and their transcripts, as plain text or JSON.

Only typer and the standard library at import time: the store is imported inside the commands.
The public helpers (`open_store`, `fail`, `format_*`, `table`, `transcript`) are shared with
`agentcli tasks` (cli_tasks.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer

from agentcli.text import json_safe, terminal_safe

if TYPE_CHECKING:
    from agentcli.llm.base import Message, ToolUseBlock
    from agentcli.store.db import Store
    from agentcli.store.records import SessionRecord, ToolCallRecord, UsageRollup

sessions_app = typer.Typer(help="Stored sessions and their transcripts.", rich_markup_mode=None)

EXCERPT_LINES = 4
EXCERPT_CHARS = 300


T = TypeVar("T")


def echo(text: str = "") -> None:
    """Print text that may hold model, file or agent-file text, with terminal escapes neutralised."""
    print(terminal_safe(text))


def print_json(value: object) -> None:
    """Print a JSON document (C0 controls escaped by JSON; C1 controls and bidi overrides by `json_safe`)."""
    print(json_safe(json.dumps(value, indent=2, ensure_ascii=False)))


def fail(message: str) -> NoReturn:
    print(f"agentcli: {terminal_safe(message)}", file=sys.stderr)
    raise typer.Exit(1)


def find_or_fail(get: Callable[[str], T | None], ident: str, kind: str) -> T:
    """`get(ident)` (an id or a unique prefix), or exit 1 with one line when none or several match."""
    from agentcli.store.db import AmbiguousIdError

    try:
        found = get(ident)
    except AmbiguousIdError as exc:
        fail(str(exc))
    if found is None:
        fail(f"no {kind} matches '{ident}'")
    return found


def open_store() -> Store:
    import sqlite3

    from agentcli.store.db import Store, StoreError

    try:
        store = Store.open()
    except StoreError as exc:
        fail(str(exc))
    try:
        store.mark_running_cancelled().result()  # rows left running by a process that is gone
    except sqlite3.Error as exc:
        store.close()
        fail(f"cannot use the database {store.path}: {exc}")
    return store


def format_when(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M") if value else "-"


def format_tokens(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def format_cost(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def _model(s: SessionRecord) -> str:
    return f"{s.provider}:{s.model}" if s.provider else s.model or "-"


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = []
    for cells in [headers, *rows]:
        padded = [c.ljust(w) for c, w in zip(cells[:-1], widths[:-1], strict=True)]
        lines.append("  ".join([*padded, cells[-1]]).rstrip())
    return "\n".join(lines)


@sessions_app.command("list")
def sessions_list(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many sessions, newest first.")] = 20,
    all_: Annotated[bool, typer.Option("--all", "-a", help="Include subagent sessions.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List stored sessions, newest first."""
    store = open_store()
    try:
        sessions = store.list_sessions(limit=limit, include_subagents=all_)
    finally:
        store.close()
    if as_json:
        print_json([s.model_dump(mode="json") for s in sessions])
        return
    if not sessions:
        echo("No sessions yet.")
        return
    headers = ["ID", "STARTED", "STATUS", "MODEL", "TURNS", "TOKENS IN/OUT", "COST"]
    headers += ["AGENT", "TITLE"] if all_ else ["TITLE"]
    rows = []
    for s in sessions:
        row = [s.id, format_when(s.created_at), s.status, _model(s), str(s.turns)]
        row += [f"{format_tokens(s.input_tokens)}/{format_tokens(s.output_tokens)}", format_cost(s.cost_usd)]
        row += [s.agent, s.title or ""] if all_ else [s.title or ""]
        rows.append(row)
    echo(table(headers, rows))


@sessions_app.command("show")
def sessions_show(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="Session id or a unique prefix.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the full record with messages as JSON.")] = False,
) -> None:
    """Show one session: its fields, usage and transcript."""
    store = open_store()
    try:
        session = find_or_fail(store.get_session, session_id, "session")
        messages = store.get_messages(session.id)
        calls = store.get_tool_calls(session.id)
        rollup = store.session_usage_rollup(session.id)
        children = store.list_sessions(limit=1000, parent_session_id=session.id)
        tasks = store.list_tasks(parent_session_id=session.id, limit=1000)
    finally:
        store.close()
    if as_json:
        record: dict[str, Any] = {
            "session": session.model_dump(mode="json"),
            "usage_rollup": rollup.model_dump(mode="json") if rollup else None,
            "messages": [m.model_dump(mode="json") for m in messages],
            "tool_calls": [c.model_dump(mode="json") for c in calls],
            "subagent_sessions": [c.model_dump(mode="json") for c in children],
            "tasks": [t.model_dump(mode="json") for t in tasks],
        }
        print_json(record)
        return
    echo(_header(session, rollup, children))
    echo()
    echo(transcript(messages, calls))


def _header(s: SessionRecord, rollup: UsageRollup | None, children: list[SessionRecord]) -> str:
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
        (
            "tokens",
            f"in {s.input_tokens} · out {s.output_tokens} · cache read {s.cache_read_tokens}"
            f" · cache write {s.cache_write_tokens}",
        ),
        ("cost", format_cost(s.cost_usd)),
    ]
    if rollup is not None and rollup.sessions > 1:
        fields.append(
            (
                "with subagents",
                f"{rollup.sessions - 1} subagent session{'s' if rollup.sessions > 2 else ''}"
                f" · in {rollup.input_tokens} · out {rollup.output_tokens}"
                f" · cost {format_cost(rollup.cost_usd)}",
            )
        )
    for child in children:
        fields.append(("subagent", f"{child.id}  {child.agent}  {child.status}  {child.title or ''}".rstrip()))
    width = max(len(k) for k, _ in fields) + 1
    return "\n".join([f"Session {s.id}", *(f"  {(k + ':').ljust(width)} {v}" for k, v in fields)])


def _excerpt(text: str, indent: str = "    ") -> str:
    lines = text.rstrip().splitlines() or [""]
    shown = "\n".join(lines[:EXCERPT_LINES])
    cut = len(lines) > EXCERPT_LINES or len(shown) > EXCERPT_CHARS
    shown = shown[:EXCERPT_CHARS]
    out = "\n".join((indent + line).rstrip() for line in shown.splitlines())
    if cut:
        out += f"\n{indent}… ({len(lines)} lines, {len(text)} characters)"
    return out


def _tool_use(block: ToolUseBlock, call: ToolCallRecord | None) -> list[str]:
    what = call.summary if call and call.summary else json.dumps(block.input, ensure_ascii=False)[:120]
    if call is None:
        return [f"  → {block.name}: {what}"]
    ms = f", {call.duration_ms:.0f} ms" if call.duration_ms is not None else ""
    lines = [f"  → {block.name}: {what}  [{call.status}{ms}]"]
    if call.output:
        lines.append(_excerpt(call.output))
    return lines


def transcript(messages: list[Message], calls: list[ToolCallRecord]) -> str:
    """User and assistant text, each tool call with its summary and an output excerpt, tool results."""
    from agentcli.llm.base import TextBlock, ToolResultBlock, ToolUseBlock

    by_id = {c.id: c for c in calls}
    out: list[str] = []
    for message in messages:
        texts = [b.text for b in message.content if isinstance(b, TextBlock)]
        if texts:
            out += [f"[{message.role}]", "\n".join(texts).strip()]
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                out += _tool_use(block, by_id.get(block.id))
            elif isinstance(block, ToolResultBlock):
                out.append(f"  ← result {block.tool_use_id}" + (" (error)" if block.is_error else ""))
                call = by_id.get(block.tool_use_id)
                if call is None or not call.output:  # else its excerpt is shown with the call
                    out.append(_excerpt(block.content))
        out.append("")
    return "\n".join(out).rstrip() if out else "(no messages)"
