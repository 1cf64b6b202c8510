"""The main turn's activity line above the prompt: a spinner, what the agent is doing, and for how long."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from agentcli.ui.model import format_seconds
from agentcli.ui.widgets.subagent_block import spinner_frame


class TurnActivity(Static):
    """`⠹ writing a Task call… · 4.1s · Esc stops`; hidden while no turn runs."""

    DEFAULT_CSS = """
    TurnActivity {
        width: 1fr;
        height: 1;
        padding: 0 2;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;

        &.-running {
            display: block;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__(id="turn-activity")
        self.shown: Content | None = None

    def show(self, activity: str | None, seconds: float = 0.0) -> None:
        """Show `activity` (None: no turn runs, hide the line); re-rendered only when it changed."""
        self.set_class(activity is not None, "-running")
        if activity is None:
            self.shown = None
            return
        content = Content.assemble(
            (spinner_frame(), "$accent"), " ", (activity, "$text"), (f" · {format_seconds(seconds)} · Esc stops", "")
        )
        if content != self.shown:
            self.shown = content
            self.update(content, layout=False)
