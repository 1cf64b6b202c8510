"""The status bar: model, session tokens and cost, running subagents, and what the app is doing."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from agentcli.figures import compact_tokens, context_text, format_cost
from agentcli.text import terminal_safe


@dataclass(frozen=True)
class Status:
    """What the bar shows."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    running: int = 0
    queued: int = 0
    state: str = "ready"  # loading… | ready | working… | approval needed
    context: tuple[int, int] | None = None  # the main agent's context: (tokens used, window)


class StatusBar(Static):
    """One line under the input; re-rendered only when something in it changed."""

    def __init__(self) -> None:
        super().__init__(id="status-bar")
        self._shown: Status | None = None

    def show(self, status: Status) -> None:
        """Render `status` if it differs from what is shown."""
        if status == self._shown:
            return
        self._shown = status
        parts: list[tuple[str, str] | str] = [
            ("model ", "$text-muted"), (terminal_safe(status.model), "bold"),
            ("  ·  ", "$text-muted"),
            f"{compact_tokens(status.input_tokens)} in / {compact_tokens(status.output_tokens)} out",
            ("  ·  ", "$text-muted"), format_cost(status.cost_usd),
        ]
        if status.context is not None:
            used, window = status.context
            style = "$error" if used >= 0.9 * window else "$warning" if used >= 0.7 * window else ""
            parts += [("  ·  ", "$text-muted"), ("context ", "$text-muted"), (context_text(used, window), style)]
        if status.running or status.queued:
            text = f"{status.running} subagent{'s' if status.running != 1 else ''} running"
            if status.queued:
                text += f", {status.queued} queued"
            parts += [("  ·  ", "$text-muted"), (text, "$accent")]
        parts += [("  ·  ", "$text-muted"), (status.state, "italic")]
        self.update(Content.assemble(*parts))

    @property
    def shown(self) -> Status | None:
        """What the bar shows now."""
        return self._shown
