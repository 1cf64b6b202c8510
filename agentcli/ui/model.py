"""What the TUI knows about the conversation, independent of the widgets that show it.

The router fills these objects from the event stream; widgets render them. A transcript (the
main agent's, or one subagent's) is a list of items: streamed text, tool calls, nested subagent
blocks and notes. A collapsed block keeps its items here and mounts no widgets for them; when it
is expanded again, its widgets are rebuilt from this model. The model knows nothing of widgets:
which widget shows which item is the router's business (`agentcli.ui.views.EntryViews`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Literal

from agentcli.diffs import FileDiff
from agentcli.llm import tokens_for_chars
from agentcli.status import ACTIVE_TASK_STATUSES, MergeOutcome, TaskStatus


@dataclass(eq=False)
class TextItem:
    """Assistant text as it streams."""

    parts: list[str] = field(default_factory=list)
    done: bool = False  # the message is complete

    @property
    def text(self) -> str:
        """Everything streamed so far."""
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    def add(self, delta: str) -> None:
        """Append a delta."""
        self.parts.append(delta)

    def reset(self) -> None:
        """Forget the text (a retried request voids what its failed attempt streamed)."""
        self.parts.clear()


@dataclass(eq=False)
class ThinkingItem(TextItem):
    """The model's reasoning as it streams: shown dimmed and apart from the answer, folded to one line
    once the answer starts or the turn ends (`done`); `expanded` shows all of it again."""

    expanded: bool = False

    def words(self) -> int:
        """How many words of reasoning (for the folded line)."""
        return len(self.text.split())


@dataclass(eq=False)
class NoteItem:
    """A one-line (or short) message that is not model text: a prompt, an error, a notice, the `📎` lines of a
    prompt's attachments, the output of the person's `!command`."""

    text: str
    kind: Literal["user", "error", "info", "attachment", "shell"] = "info"


@dataclass(eq=False)
class ToolItem:
    """One tool call; a Task call is replaced in its transcript by the block it creates."""

    tool_call_id: str
    name: str
    summary: str
    status: Literal["running", "ok", "error"] = "running"
    output: str = ""
    duration_ms: float | None = None
    code: str | None = None  # SPEC §4 error code of a failed call (TIMEOUT, NOT_FOUND, CIRCULAR, ...)
    short_result: str = ""  # a Task call's one-line outcome, shown instead of its output's first line
    diff: FileDiff | None = None  # what a finished Edit, MultiEdit or Write changed: `+12 −3`, expanded in full
    expanded: bool = False
    started: float | None = None  # monotonic time it started, for the ticking clock while it runs
    tail: str = ""  # the last lines of its output while it runs (Bash), terminal-safe
    # The errors and warnings a finished edit introduced (its language server's): (severity, line), terminal-safe
    diagnostics: list[tuple[str, str]] = field(default_factory=list)

    def elapsed_seconds(self) -> float:
        """Seconds it has run so far (while running), else its duration."""
        if self.status == "running" and self.started is not None:
            return time.monotonic() - self.started
        return (self.duration_ms or 0) / 1000


TodoStatus = Literal["pending", "in_progress", "completed"]


@dataclass(eq=False)
class TodoListItem:
    """An agent's TodoWrite list as a checklist: one per turn (per block for a subagent), updated in place."""

    todos: list[tuple[str, str]] = field(default_factory=list)  # (content, status), terminal-safe

    def done(self) -> int:
        """How many are completed."""
        return sum(1 for _, status in self.todos if status == "completed")

    def current(self) -> str:
        """The item in progress (else the first pending one), "" when none."""
        for wanted in ("in_progress", "pending"):
            for content, status in self.todos:
                if status == wanted:
                    return content
        return ""

    def summary(self) -> str:
        """`todo 2/5: Run the tests`."""
        current = self.current()
        return f"todo {self.done()}/{len(self.todos)}" + (f": {current}" if current else "")


@dataclass(eq=False)
class MergeItem:
    """How an isolated task's worktree was merged back (`merged`, `conflict`, `no_changes`, `kept`) and what the
    task changed; names are terminal-safe."""

    outcome: MergeOutcome
    branch: str | None = None
    files_merged: list[str] = field(default_factory=list)
    files_conflicted: list[str] = field(default_factory=list)
    diffs: list[FileDiff] = field(default_factory=list)
    look: str = ""  # the git command that shows a kept branch

    def summary(self) -> str:
        """`merged 2 files`, `conflict in app.py: kept on agentcli/tsk_1`, `kept on agentcli/tsk_1`, `no changes`."""
        if self.outcome == "merged":
            count = len(self.files_merged)
            return f"merged {count} file{'s' if count != 1 else ''}"
        if self.outcome == "conflict":
            return f"conflict in {', '.join(self.files_conflicted)}: kept on {self.branch}"
        if self.outcome == "kept":
            return f"changes kept on {self.branch}"
        return "no changes"


@dataclass(eq=False)
class Transcript:
    """The items one agent produced, in order, and the text item currently streaming."""

    items: list[Entry] = field(default_factory=list)
    current_text: TextItem | None = None
    current_thinking: ThinkingItem | None = None
    todo: TodoListItem | None = None  # the current turn's checklist, once the agent wrote one
    activity: str = ""  # what the agent does now: `Grep "TODO"`, `writing a Task call…` ("" when idle)


@dataclass(eq=False)
class BlockItem(Transcript):
    """One subagent (one Task call): its header data and its own transcript."""

    task_id: str = ""
    parent_tool_call_id: str = ""
    subagent_type: str = ""
    description: str = ""
    model: str = ""
    depth: int = 1
    parent: BlockItem | None = None
    agent: str = ""  # the subagent's label, e.g. explore#2, once its first event arrives
    status: TaskStatus = "queued"
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    elapsed_ms: float = 0.0
    started: float | None = None  # monotonic time it started running, for the ticking clock
    short_result: str = ""
    error: str | None = None
    code: str | None = None  # the SPEC §4 error code its Task call failed with
    collapsed: bool = True  # only the header shows (a running block: its header and latest activity)
    context: tuple[int, int] | None = None  # the subagent's own context: (tokens used, window)
    result: str = ""  # the subagent's final answer (terminal-safe), once it finished
    cached_from: str | None = None  # answered from this earlier task's result (no subagent ran)
    merge: MergeItem | None = None  # isolated in a git worktree: how its merge back ended (Ctrl+D: the diff)
    streamed: dict[str, int] = field(default_factory=dict)  # characters streamed by requests not yet counted

    @property
    def tokens(self) -> int:
        """Tokens of its subtree: counted ones, plus an estimate of what streams now (about 4 characters each)."""
        return self.input_tokens + self.output_tokens + self.estimated_tokens

    @property
    def estimated_tokens(self) -> int:
        """The estimate of what requests still streaming produced so far."""
        return tokens_for_chars(sum(self.streamed.values()))

    @property
    def active(self) -> bool:
        """Queued or running."""
        return self.status in ACTIVE_TASK_STATUSES

    @property
    def label(self) -> str:
        """`explore#2` once known, else the type."""
        return self.agent or self.subagent_type

    def elapsed_seconds(self) -> float:
        """Seconds it has run: ticking while running, final once finished."""
        if self.status == "running" and self.started is not None:
            return time.monotonic() - self.started
        return self.elapsed_ms / 1000


Entry = TextItem | ThinkingItem | NoteItem | ToolItem | BlockItem | TodoListItem

MARKDOWN_LEAD = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)+")
MARKDOWN_MARKS = re.compile(r"(\*\*|__|`)")


def result_line(text: str, limit: int = 200) -> str:
    """The first non-empty line of a (Markdown) answer as plain words: `## Findings` → `Findings`."""
    for line in text.splitlines():
        plain = MARKDOWN_MARKS.sub("", MARKDOWN_LEAD.sub("", line.strip())).strip()
        if plain and set(plain) - set("-=*_`|: "):
            return plain if len(plain) <= limit else plain[: limit - 1] + "…"
    return ""


def format_seconds(seconds: float) -> str:
    """`0.4s`, `12s`, `3m05s`."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"
