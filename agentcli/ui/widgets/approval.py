"""Approval of mutating tool calls: a modal naming the agent that asks, and the Approver the engine calls.

For Edit, MultiEdit, NotebookEdit and Write the modal shows the coloured diff of what the call will change (scrollable,
PageUp/PageDown), or why there is none (the call would fail: the reason the tool will give). The preview
holds every line of the change; the dialog draws its first `PREVIEW_LINES`, and a longer diff says how many
more there are and that `d` opens the whole of it (`full_diff`). A Bash command, a URL or another target
longer than its one-line summary is shown whole in a box of its own that PageUp/PageDown scroll too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agentcli.diffs import FileDiff
from agentcli.text import terminal_safe
from agentcli.tools import Approval, PermissionRequest
from agentcli.ui.widgets.diff_view import diff_content, diff_title
from agentcli.ui.widgets.full_diff import FullDiffScreen

# summary: the path
_PATH_SUMMARY_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Read", "LS", "Glob", "Grep"})
SCROLL_HINT_LINES = 20  # a diff longer than this says how to scroll it
COMMAND_HINT_LINES = 8  # a command box taller than this says how to scroll it
PREVIEW_LINES = 400  # diff lines drawn in the dialog; the rest are one key away (`d`: the whole diff)


def request_line(request: PermissionRequest) -> str:
    """`[explore#2] wants to run: rm -rf build/` (for Bash the command; else the tool and its target); an agent in
    its task's git worktree: `[general#2] wants to run: Edit [worktree] src/app.py` (the path is the workspace's
    as the worktree mirrors it; the change lands in the workspace only when the task's merge back does)."""
    what = request.summary if request.tool == "Bash" else f"{request.tool} {request.summary or request.target}"
    if request.worktree:
        what = (f"[worktree] {what}" if request.tool == "Bash"
                else f"{request.tool} [worktree] {request.summary or request.target}")
    return terminal_safe(f"[{request.agent}] wants to run: {what}")


class ApprovalScreen(ModalScreen[Approval]):
    """Allow once, allow always (for this session), or deny one tool call. Enter on the focused
    button; `y` / `a` / `n` (or Esc) from anywhere. Deny has the focus at first."""

    AUTO_FOCUS = "#deny"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('allow_once')", "Allow once"),
        Binding("a", "answer('allow_always')", "Allow always"),
        Binding("n,escape", "answer('deny')", "Deny"),
        Binding("pageup", "scroll_diff(-1)", "Scroll diff up", show=False),
        Binding("pagedown", "scroll_diff(1)", "Scroll diff down", show=False),
        Binding("d", "full_diff", "Whole diff"),
    ]

    def __init__(self, request: PermissionRequest, waiting: int = 0) -> None:
        super().__init__(classes="approval-screen")
        self.request = request
        self.waiting = waiting
        self._shown_waiting: int | None = None

    def compose(self) -> Any:
        """The question, the diff of an edit (or why there is none), what "always" would cover, and the answers."""
        request = self.request
        with Vertical(id="approval-dialog", classes="-with-diff" if request.diff is not None else ""):
            yield Static(request_line(request), id="approval-question", markup=False)
            if _shows_target(request):
                target = terminal_safe(request.target.strip())
                if target.count("\n") + 1 > COMMAND_HINT_LINES:
                    lines = target.count("\n") + 1
                    yield Static(f"the whole {_target_noun(request)} ({lines} lines): PageUp/PageDown scroll",
                                 id="approval-target-hint", markup=False)
                with VerticalScroll(id="approval-target-box"):
                    yield Static(target, id="approval-target", markup=False)
            if request.diff is not None:
                yield from self._diff(request.diff)
            elif request.preview_note:
                note = terminal_safe(request.preview_note if request.outside_sandbox
                                     else f"No diff to show: {request.preview_note}")
                yield Static(note, id="approval-preview-note", markup=False)
            if request.always_scope:
                yield Static(terminal_safe(f"Allow always = {request.always_scope}"), id="approval-scope", markup=False)
            yield Static(waiting_text(self.waiting), id="approval-waiting", markup=False)
            with Horizontal(id="approval-buttons"):
                yield Button(Content("Allow once [y]"), id="allow_once", variant="success")
                yield Button(Content("Allow always [a]"), id="allow_always", variant="primary")
                yield Button(Content("Deny [n]"), id="deny", variant="error")

    def _diff(self, diff: FileDiff) -> Any:
        """The diff's title, its first `PREVIEW_LINES` lines, and the line that says what else there is."""
        shown = diff.head(PREVIEW_LINES)
        title = diff_title(diff)
        if sum(len(hunk.lines) + 1 for hunk in shown.hunks) > SCROLL_HINT_LINES:
            title = Content.assemble(title, ("  PageUp/PageDown scroll", "$text-muted"))
        yield Static(title, id="approval-diff-title", markup=False)
        with VerticalScroll(id="approval-diff"):
            yield Static(diff_content(shown), id="approval-diff-lines", markup=False)
        if shown.omitted:
            more = shown.omitted - diff.omitted  # lines the preview holds past the dialog's (the rest it never had)
            hidden = (f"{shown.omitted} more diff lines are not shown here: the call makes those changes too "
                      f"({diff.added} lines added, {diff.removed} removed in all)")
            if more:
                hidden += f"; press d to read the whole diff ({more} more lines there)"
            yield Static(hidden, id="approval-diff-omitted", markup=False)

    def action_full_diff(self) -> None:
        """`d`: every line of the diff, in a screen of its own (Esc comes back here)."""
        if self.request.diff is not None:
            self.app.push_screen(FullDiffScreen(self.request.diff))

    def set_waiting(self, count: int) -> None:
        """How many requests wait behind this one (they arrive and leave while it is open). The app's frame timer
        calls it whenever it likes, also between the push and the mount: a count is noted as shown only once its
        line has taken it, so a call before then cannot make the mount (or the next call) skip the line."""
        self.waiting = count
        if count == self._shown_waiting:
            return
        for line in self.query("#approval-waiting").results(Static):
            line.update(waiting_text(count))
            line.display = count > 0
            self._shown_waiting = count

    def on_mount(self) -> None:
        """The queue line shows only while something waits."""
        self.set_waiting(self.waiting)

    def action_scroll_diff(self, pages: int) -> None:
        """PageUp / PageDown scroll a long diff and a long command (the buttons keep the focus)."""
        for scroll in self.query("#approval-diff, #approval-target-box").results(VerticalScroll):
            if pages < 0:
                scroll.scroll_page_up()
            else:
                scroll.scroll_page_down()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A button answers."""
        event.stop()
        self.action_answer(event.button.id or "deny")

    def action_answer(self, answer: str) -> None:
        """Close the dialog with the answer."""
        result: Approval = answer if answer in ("allow_once", "allow_always") else "deny"  # type: ignore[assignment]
        self.dismiss(result)


def _shows_target(request: PermissionRequest) -> bool:
    """Whether the call's target (a Bash command, a URL, an MCP call's arguments) says more than its summary."""
    if request.diff is not None or not request.target:
        return False
    return request.target.strip() != request.summary.strip() and request.tool not in _PATH_SUMMARY_TOOLS


def _target_noun(request: PermissionRequest) -> str:
    return {"Bash": "command", "WebFetch": "URL", "WebSearch": "query"}.get(request.tool, "request")


def waiting_text(count: int) -> str:
    """`2 more requests waiting` (after this one)."""
    return f"{count} more request{'s' if count != 1 else ''} waiting" if count else ""


class Approvals:
    """The Approver handed to a `Conversation` before the app exists; the app attaches itself.

    Without an attached app every request is denied (with the policy's reason to the model).
    """

    def __init__(self) -> None:
        self._target: Callable[[PermissionRequest], Awaitable[Approval]] | None = None

    def attach(self, target: Callable[[PermissionRequest], Awaitable[Approval]] | None) -> None:
        """Send requests to `target` from now on (None: deny them)."""
        self._target = target

    async def __call__(self, request: PermissionRequest) -> Approval:
        if self._target is None:
            return "deny"
        return await self._target(request)
