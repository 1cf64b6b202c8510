"""What an isolated task changed, one key away from its block (Ctrl+D): how its merge back ended and each file's diff.

The merge outcome comes first (the files merged into the workspace, or the files in conflict and the branch that
keeps the task's changes, with the git command that shows them), then the coloured diff of every file the task
changed against the snapshot it started from. PageUp/PageDown scroll; Esc closes. Names and lines are
terminal-safe (the router made them so; the diff view makes each line so).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from agentcli.text import terminal_safe
from agentcli.ui.model import MergeItem
from agentcli.ui.widgets.diff_view import diff_content, diff_title

MAX_LINES_PER_FILE = 400


def outcome_lines(merge: MergeItem) -> list[str]:
    """The merge back in words: what landed in the workspace, or what did not and where it is."""
    if merge.outcome == "merged":
        return ["Merged into the workspace (uncommitted): " + ", ".join(merge.files_merged)]
    if merge.outcome == "no_changes":
        return ["It changed no files."]
    lines = ([f"Conflict: nothing was applied. In conflict: {', '.join(merge.files_conflicted)}"]
             if merge.outcome == "conflict" else ["Not merged: its changes were kept on their branch."])
    if merge.branch:
        lines.append(f"Branch {merge.branch}" + (f": {merge.look}" if merge.look else ""))
    return lines


class ChangesScreen(ModalScreen[None]):
    """The merge outcome of one isolated task and the diffs of what it changed."""

    DEFAULT_CSS = """
    ChangesScreen {
        align: center middle;
        background: $background 60%;
    }
    #changes-dialog {
        width: 120;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        padding: 1 2;
        border: heavy $accent;
        background: $surface;
    }
    #changes-title {
        text-style: bold;
    }
    #changes-outcome, #changes-hint {
        color: $text-muted;
        margin-bottom: 1;
    }
    #changes-diffs {
        height: auto;
        max-height: 70vh;
        background: $panel;
    }
    #changes-diffs > .changes-file {
        margin-bottom: 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("pageup", "scroll(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll(1)", "Scroll down", show=False),
    ]

    def __init__(self, label: str, merge: MergeItem) -> None:
        super().__init__(classes="changes-screen")
        self.label = label
        self.merge = merge

    def compose(self) -> Any:
        """The title, the outcome, and a scrolling list of file diffs."""
        merge = self.merge
        with Vertical(id="changes-dialog"):
            yield Static(terminal_safe(f"[{self.label}] changes made in its worktree"), id="changes-title",
                         markup=False)
            yield Static("\n".join(outcome_lines(merge)), id="changes-outcome", markup=False)
            if merge.diffs:
                with VerticalScroll(id="changes-diffs"):
                    for diff in merge.diffs:
                        body = (diff_content(diff, max_lines=MAX_LINES_PER_FILE) if diff.hunks
                                else Content("(no lines to show: binary, too big, a symlink or a submodule)"))
                        yield Static(Content.assemble(diff_title(diff), "\n", body), classes="changes-file",
                                     markup=False)
            yield Static("PageUp/PageDown scroll · Esc closes", id="changes-hint", markup=False)

    def action_scroll(self, direction: int) -> None:
        """Scroll the diffs a page."""
        for box in self.query("#changes-diffs").results(VerticalScroll):
            if direction < 0:
                box.scroll_page_up()
            else:
                box.scroll_page_down()

    def action_close(self) -> None:
        """Back to the conversation."""
        self.dismiss(None)
