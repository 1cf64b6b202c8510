"""A tool call as one compact line (status icon, name, argument summary), with its output on demand.

A finished Edit, MultiEdit, NotebookEdit or Write shows `+12 −3` on its line and, expanded, the coloured diff of
what it wrote; under its line, the errors (red) and warnings (yellow) its language server found it introduced.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Static

from agentcli.ui.model import ToolItem, format_seconds
from agentcli.ui.widgets.diff_view import diff_content, stat_content

ICONS = {"running": ("⋯", "$text-muted"), "ok": ("✓", "$success"), "error": ("✗", "$error")}
MAX_OUTPUT_LINES = 40
MAX_OUTPUT_CHARS = 4000
SUMMARY_CHARS = 100
MAX_DIFF_LINES = 200  # of an expanded diff in the transcript (the approval dialog scrolls through all it has)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def output_excerpt(output: str) -> str:
    """The start of a tool's output, with a note of what is not shown."""
    lines = output.splitlines()
    shown = lines[:MAX_OUTPUT_LINES]
    text = "\n".join(shown)
    more = len(lines) - len(shown)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS]
        more = max(more, 1)
    if more > 0:
        text += f"\n… ({more} more lines)"
    return text or "(no output)"


DIAGNOSTIC_WIDTH = 160
MAX_DIAGNOSTIC_LINES = 5  # of an edit's new errors and warnings under its line (the model reads them all)
DIAGNOSTIC_STYLES = {"error": "$text-error", "warning": "$text-warning"}


def diagnostics_content(found: list[tuple[str, str]]) -> Content:
    """An edit's new errors (red) and warnings (yellow), one indented line each, capped with a count of the rest."""
    lines: list[Content | tuple[str, str] | str] = []
    for severity, text in found[:MAX_DIAGNOSTIC_LINES]:
        style = DIAGNOSTIC_STYLES.get(severity, "$text-muted")
        lines += ["\n" if lines else "", (f"  {severity} ", f"bold {style}"), (_clip(text, DIAGNOSTIC_WIDTH), style)]
    if len(found) > MAX_DIAGNOSTIC_LINES:
        lines += ["\n", (f"  … and {len(found) - MAX_DIAGNOSTIC_LINES} more", "$text-muted")]
    return Content.assemble(*lines)


LIVE_TAIL_LINES = 3
LIVE_TAIL_WIDTH = 160


def live_tail(text: str) -> str:
    """The last few lines of a running command's output, each clipped, indented under its line."""
    lines = [line for line in text.splitlines() if line.strip()][-LIVE_TAIL_LINES:]
    return "\n".join("  │ " + _clip(line, LIVE_TAIL_WIDTH) for line in lines)


class ToolCallView(Static, can_focus=True):
    """`✓ Read  src/config.py  12 ms`; a failed call names its error code and first line of output
    (`✗ Task [TIMEOUT]  …  Subagent task timed out after …`); an edit its changed lines (`✓ Edit  a.py  +1 −1`).
    Enter or a click shows or hides the output (an edit's: its diff)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "toggle_output", "Show output", show=False)]

    def __init__(self, item: ToolItem) -> None:
        super().__init__(classes="tool-call")
        self.item = item
        self.refresh_state()

    def header(self) -> Content:
        """The one-line form."""
        item = self.item
        icon, style = ICONS[item.status]
        parts: list[Content | tuple[str, str] | str] = [(icon, style), " ", (item.name, "bold")]
        if item.status == "error" and item.code:
            parts += [" ", (f"[{item.code}]", "$text-error")]
        parts += ["  ", _clip(item.summary, SUMMARY_CHARS)]
        if item.diff is not None:
            parts += ["  ", stat_content(item.diff)]
        if item.duration_ms is not None:
            parts += ["  ", (format_seconds(item.duration_ms / 1000), "$text-muted")]
        elif item.status == "running" and item.started is not None:  # the clock ticks while it runs
            parts += ["  ", (format_seconds(item.elapsed_seconds()), "$text-muted")]
        outcome = [item.short_result] if item.status != "running" and item.short_result else []
        if item.status == "error" and not item.expanded:
            first = item.output.strip().splitlines()[0] if item.output.strip() else "failed"
            if not outcome or first not in outcome[0]:
                outcome.append(first)  # the reason, after a Task call's short result
        if outcome:
            parts += ["  ", (_clip(" · ".join(outcome), 100), "$text-error" if item.status == "error" else style)]
        return Content.assemble(*parts)

    def refresh_state(self) -> None:
        """Re-render from the item."""
        self.update_classes({"-expanded": self.item.expanded, "-error": self.item.status == "error"})
        head = self.header()
        if self.item.diagnostics:  # an edit's new errors and warnings, under its line whether expanded or not
            head = Content.assemble(head, "\n", diagnostics_content(self.item.diagnostics))
        if self.item.expanded and self.item.status != "running":
            if self.item.diff is not None:
                body = Content.assemble(head, "\n", diff_content(self.item.diff, max_lines=MAX_DIFF_LINES))
            else:
                body = Content.assemble(head, "\n", (output_excerpt(self.item.output), "$text-muted"))
            self.update(body)
        elif self.item.status == "running" and self.item.tail:  # a running command's latest output, live
            self.update(Content.assemble(head, "\n", (live_tail(self.item.tail), "$text-muted")))
        else:
            self.update(head)

    def action_toggle_output(self) -> None:
        """Show or hide the output."""
        self.item.expanded = not self.item.expanded
        self.refresh_state()

    def on_click(self, event: events.Click) -> None:
        """A click toggles the output too."""
        event.stop()
        self.action_toggle_output()
