"""What the TUI knows about the conversation, independent of the widgets that show it.

The router fills these objects from the event stream; widgets render them. A transcript (the
main agent's, or one subagent's) is a list of items: streamed text, tool calls, nested subagent
blocks and notes. A collapsed block keeps its items here and mounts no widgets for them; when it
is expanded again, its widgets are rebuilt from this model. The model knows nothing of widgets:
which widget shows which item is the router's business (`agentcli.ui.views.EntryViews`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from agentcli.diffs import FileDiff
from agentcli.status import ACTIVE_TASK_STATUSES, TaskStatus


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


@dataclass(eq=False)
class Transcript:
    """The items one agent produced, in order, and the text item currently streaming."""

    items: list[Entry] = field(default_factory=list)
    current_text: TextItem | None = None
    current_thinking: ThinkingItem | None = None


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
    collapsed: bool = False
    context: tuple[int, int] | None = None  # the subagent's own context: (tokens used, window)

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


Entry = TextItem | ThinkingItem | NoteItem | ToolItem | BlockItem


def format_seconds(seconds: float) -> str:
    """`0.4s`, `12s`, `3m05s`."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"
