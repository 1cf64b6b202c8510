"""`/export` and `/copy`: the transcript as Markdown, the last answer, the last code block.

The export is the main agent's conversation as the TUI shows it: the person's prompts (with their `📎`
attachment lines and `!command` output), the answers, one line per tool call, and each subagent block
summarised (label, description, status, figures, then its result, cut at `BLOCK_RESULT_CHARS`). Reasoning
and the app's own notices are left out. The whole session, every tool result included, stays in the store
(`agentcli sessions show ID`).

It is written to a file in the workspace: confined like the file tools (`tools.paths.resolve_in_workspace`,
symlinks followed), never into agentcli's or git's own files (`tools.guarded`: an export holds text from
models and files, which must not land where it changes what runs later), and an existing file is only
replaced when the person says so (`/export FILE --force`).
"""

from __future__ import annotations

import os
import re
from datetime import datetime

from agentcli.figures import compact_tokens
from agentcli.tools import ToolContext, ToolError, display_path, guarded_reason, resolve_in_workspace
from agentcli.ui.model import BlockItem, Entry, NoteItem, TextItem, ThinkingItem, ToolItem, format_seconds

BLOCK_RESULT_CHARS = 4000
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def _fence(text: str) -> str:
    """A code fence longer than any backtick run inside `text`."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def block_result(block: BlockItem) -> str:
    """A block's result: its last text, else its one-line outcome or error."""
    text = next((e.text for e in reversed(block.items) if type(e) is TextItem and e.text.strip()), "")
    return text.strip() or block.error or block.short_result


def _block(block: BlockItem) -> list[str]:
    tokens = compact_tokens(block.input_tokens + block.output_tokens)
    calls = f"{block.tool_calls} tool{'s' if block.tool_calls != 1 else ''}"
    took = format_seconds(block.elapsed_seconds())
    head = (f"**Subagent {block.label}** ({block.subagent_type}, {block.model}): {block.description} · "
            f"{block.status} · {calls} · {tokens} tok · {took} · task `{block.task_id}`")
    lines = ["", head]
    nested = [e for e in block.items if isinstance(e, BlockItem)]
    if nested:
        lines.append(f"(it delegated {len(nested)} task{'s' if len(nested) != 1 else ''}: "
                     + "; ".join(f"{b.label} {b.description} · {b.status}" for b in nested) + ")")
    result = block_result(block)
    if result:
        if len(result) > BLOCK_RESULT_CHARS:
            result = (result[:BLOCK_RESULT_CHARS] + f"\n… [{len(result) - BLOCK_RESULT_CHARS} more characters: "
                      f"`agentcli tasks show {block.task_id}`]")
        lines += ["", _quote(result)]
    return lines


def transcript_markdown(items: list[Entry], *, session_id: str, workspace: str, model: str,
                        now: datetime | None = None) -> str:
    """The main transcript as a Markdown document."""
    stamp = (now or datetime.now().astimezone()).isoformat(timespec="seconds")
    out = [
        "# agentcli transcript", "",
        f"- session: `{session_id}`", f"- workspace: `{workspace}`", f"- model: {model}", f"- exported: {stamp}", "",
        "Every tool result and each subagent's own transcript are in the store: "
        f"`agentcli sessions show {session_id}`.",
    ]
    replying = False
    for entry in items:
        if isinstance(entry, NoteItem):
            if entry.kind == "user":
                out += ["", "## You", "", entry.text]
                replying = False
            elif entry.kind == "attachment":
                out += ["", entry.text]
            elif entry.kind == "shell":
                fence = _fence(entry.text)
                out += ["", f"{fence}text", entry.text, fence]
            elif entry.kind == "error":
                out += ["", f"> ⚠ {entry.text}"]
            continue
        if isinstance(entry, ThinkingItem):
            continue
        if not replying:
            out += ["", "## agentcli"]
            replying = True
        if isinstance(entry, TextItem):
            if entry.text.strip():
                out += ["", entry.text.strip()]
        elif isinstance(entry, ToolItem):
            outcome = entry.status if entry.code is None else f"{entry.status} ({entry.code})"
            took = f" · {format_seconds(entry.duration_ms / 1000)}" if entry.duration_ms is not None else ""
            out += ["", f"- `{entry.name}` {entry.summary} · {outcome}{took}"]
        elif isinstance(entry, BlockItem):
            out += _block(entry)
    return "\n".join(out).rstrip() + "\n"


def last_answer(items: list[Entry]) -> str | None:
    """The main agent's latest answer text."""
    return next((e.text.strip() for e in reversed(items) if type(e) is TextItem and e.text.strip()), None)


def code_blocks(markdown: str) -> list[str]:
    """The fenced code blocks of a Markdown text, in order (an unclosed one runs to the end)."""
    blocks: list[str] = []
    fence: str | None = None
    body: list[str] = []
    for line in markdown.splitlines():
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence, body = match.group(1), []
            continue
        if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) and not match.group(2).strip():
            blocks.append("\n".join(body))
            fence = None
        else:
            body.append(line)
    if fence is not None:
        blocks.append("\n".join(body))
    return blocks


def last_code_block(items: list[Entry]) -> str | None:
    """The last code block of the latest answer that has one."""
    for entry in reversed(items):
        if type(entry) is TextItem and (blocks := code_blocks(entry.text)):
            return blocks[-1]
    return None


def default_export_name(session_id: str, now: datetime | None = None) -> str:
    """`agentcli-<session>-<date>-<time>.md`."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    return f"agentcli-{session_id[:8]}-{stamp}.md"


class ExportError(Exception):
    """The export cannot be written there; `str()` is the line for the person."""


def write_export(raw: str, text: str, ctx: ToolContext, *, force: bool = False) -> str:
    """Write `text` to the workspace file `raw`; its workspace-relative path."""
    try:
        path = resolve_in_workspace(ctx, raw)
    except ToolError as exc:
        raise ExportError(str(exc)) from None
    rel = display_path(ctx, path)
    if guard := guarded_reason(rel, ctx.workspace):
        raise ExportError(f"{rel} is {guard}; export elsewhere")
    if path.is_dir():
        raise ExportError(f"{rel} is a folder; give a file name")
    if path.exists() and not force:
        raise ExportError(f"{rel} exists; /export {raw} --force replaces it")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL) | getattr(os, "O_NOFOLLOW", 0)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except FileExistsError:
        raise ExportError(f"{rel} exists; /export {raw} --force replaces it") from None
    except OSError as exc:
        raise ExportError(f"cannot write {rel}: {exc.strerror or exc}") from None
    return rel


def export_target(arg: str, session_id: str) -> tuple[str, bool]:
    """`/export [FILE] [--force]` → (file, force)."""
    words = arg.split()
    force = "--force" in words or "-f" in words
    rest = " ".join(w for w in words if w not in ("--force", "-f")).strip()
    return (rest or default_export_name(session_id)), force

