"""What an editor is shown of one tool call: its ACP `kind`, title, the files it touches (`locations`) and its
content (the diff of an edit, a command's output, a tool's result text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.helpers import text_block, tool_content, tool_diff_content
from acp.schema import ContentToolCallContent, FileEditToolCallContent, PlanEntry, ToolCallLocation, ToolKind

from agentcli.diffs import FileDiff

Content = ContentToolCallContent | FileEditToolCallContent
#: agentcli's tools by the ACP kind an editor picks an icon for; every other tool (MCP tools, messages) is `other`.
KINDS: dict[str, ToolKind] = {
    "Read": "read",
    "LS": "search", "Glob": "search", "Grep": "search", "LSP": "search",
    "Write": "edit", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit",
    "Bash": "execute",
    "WebFetch": "fetch", "WebSearch": "fetch",
    "TodoWrite": "think", "Task": "think", "TaskOutput": "think",
}
#: The most of a tool's result text sent as its content (the model reads all of it; an editor needs a view).
MAX_OUTPUT_CHARS = 20_000
_PLAN_STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


def kind_of(name: str) -> ToolKind:
    """The ACP kind of a tool."""
    return KINDS.get(name, "other")


def title_of(name: str, args: dict[str, Any], summary: str, agent: str = "main") -> str:
    """The line an editor shows for a call: `Read src/app.py`, `Task (explore): Find the loader`; a subagent's
    calls are prefixed with its label (`explore#2 · Read src/app.py`)."""
    if name == "Task":
        title = f"Task ({args.get('subagent_type') or 'agent'}): {args.get('description') or summary}"
    else:
        title = f"{name} {summary}".strip() if summary else name
    return title if agent == "main" else f"{agent} · {title}"


def background_call_id(task_id: str, bash_call_id: str) -> str:
    """The id of a background command's own tool call: its task id with the Bash call's (unique in the ACP
    session even when a reloaded session counts `bash_N` from 1 again)."""
    return f"{task_id}-{bash_call_id}" if bash_call_id else task_id


def background_title(task_id: str, what: str, agent: str = "main") -> str:
    """A background command's line: `bash_1 · npm run dev` (its description, else its command; a subagent's
    prefixed with its label)."""
    title = f"{task_id} · {next((line.strip() for line in what.splitlines() if line.strip()), '')}".rstrip(" ·")
    return title if agent == "main" else f"{agent} · {title}"


def _absolute(raw: object, workspace: Path) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    path = Path(raw).expanduser()
    return str(path if path.is_absolute() else workspace / path)


def locations_of(name: str, args: dict[str, Any], workspace: Path) -> list[ToolCallLocation]:
    """The file or folder a call reads, edits or searches (Read: the line it starts at; LSP: the line it asks
    about)."""
    raw = (args.get("file_path") if name in ("Read", "Write", "Edit", "MultiEdit")
           else args.get("notebook_path") if name == "NotebookEdit" else args.get("path"))
    if name not in KINDS or kind_of(name) not in ("read", "edit", "search"):
        return []
    path = _absolute(raw, workspace) if raw is not None else (str(workspace) if name != "Read" else None)
    if path is None:
        return []
    offset = args.get("offset") if name == "Read" else args.get("line") if name == "LSP" else None
    line = offset if isinstance(offset, int) and offset > 0 else None
    return [ToolCallLocation(path=path, line=line)]


def input_diff(name: str, args: dict[str, Any], workspace: Path) -> list[Content]:
    """What an edit asks for, from its arguments (before it runs): Edit's and MultiEdit's strings, Write's text."""
    path = _absolute(args.get("file_path"), workspace)
    if path is None:
        return []
    if name == "Write" and isinstance(args.get("content"), str):
        return [tool_diff_content(path, args["content"], None)]
    edits = [args] if name == "Edit" else args.get("edits") if name == "MultiEdit" else None
    if not isinstance(edits, list):
        return []
    return [tool_diff_content(path, edit["new_string"], edit["old_string"]) for edit in edits
            if isinstance(edit, dict) and isinstance(edit.get("old_string"), str)
            and isinstance(edit.get("new_string"), str)]


def file_diff(diff: FileDiff, workspace: Path) -> list[Content]:
    """What an edit changed, one diff per hunk (its context lines on both sides; a new file has no old text)."""
    path = str(workspace / diff.path)
    out: list[Content] = []
    for hunk in diff.hunks:
        old = [line[1:] for line in hunk.lines if line[:1] in (" ", "-")]
        new = [line[1:] for line in hunk.lines if line[:1] in (" ", "+")]
        old_text = None if diff.created else "\n".join(old)
        out.append(tool_diff_content(path, "\n".join(new), old_text))
    if diff.omitted:
        out.append(text(f"(+{diff.omitted} more diff lines not shown)"))
    return out


def text(value: str) -> ContentToolCallContent:
    """A text content item."""
    return tool_content(text_block(value))


def output_content(name: str, output: str) -> list[Content]:
    """A finished call's result text (Bash's in a console block), capped."""
    if not output:
        return []
    shown = output if len(output) <= MAX_OUTPUT_CHARS else output[:MAX_OUTPUT_CHARS] + "\n… (cut)"
    return [text(f"```console\n{shown}\n```" if name == "Bash" else shown)]


def plan_entries(todos: list[dict[str, str]]) -> list[PlanEntry]:
    """A TodoWrite list as the session's plan."""
    return [PlanEntry(content=t.get("content", ""), priority="medium",
                      status=_PLAN_STATUS.get(t.get("status", ""), "pending"))
            for t in todos]
