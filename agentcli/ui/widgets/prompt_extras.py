"""What shows just above the prompt: the completion list (`/command`, `@path`) and the prompts queued while a
turn runs. Neither takes focus: the prompt keeps it and drives them. Paths and prompts are shown as plain
text made terminal-safe (a file name can hold an escape sequence)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from agentcli.text import terminal_safe
from agentcli.ui.completion import Candidate, Token

QUEUE_PREVIEW_CHARS = 100


class CompletionList(Static, can_focus=False):
    """The candidates for the word being completed, one highlighted: Tab (or Enter) takes it, Up/Down move, Esc
    closes the list."""

    DEFAULT_CSS = """
    CompletionList {
        display: none;
        height: auto;
        max-height: 10;
        margin: 0 1;
        padding: 0 1;
        background: $surface;
        border-left: outer $primary;

        &.-shown {
            display: block;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__("", markup=False, id="completions")
        self.candidates: list[Candidate] = []
        self.token: Token | None = None
        self.index = 0

    @property
    def shown(self) -> bool:
        """Whether it lists anything."""
        return bool(self.candidates)

    @property
    def selected(self) -> Candidate | None:
        """The highlighted candidate."""
        return self.candidates[self.index] if self.candidates else None

    def show(self, token: Token, candidates: list[Candidate]) -> None:
        """List `candidates` for `token` (an empty list hides it); for the same word (the index was rebuilt) the
        highlight stays on the same label if it can, else it starts at the best."""
        same = self.token is not None and self.token.query == token.query
        label = self.selected.label if self.selected and same else None
        self.token = token
        self.candidates = candidates
        labels = [c.label for c in candidates]
        self.index = labels.index(label) if label in labels else 0
        self._render_list()

    def hide(self) -> None:
        """Close the list."""
        if self.candidates or self.token is not None:
            self.candidates = []
            self.token = None
            self._render_list()

    def move(self, delta: int) -> None:
        """Move the highlight (wrapping)."""
        if self.candidates:
            self.index = (self.index + delta) % len(self.candidates)
            self._render_list()

    def _render_list(self) -> None:
        self.set_class(self.shown, "-shown")
        text = Text(no_wrap=True, overflow="ellipsis")
        for i, candidate in enumerate(self.candidates):
            if i:
                text.append("\n")
            style = "reverse" if i == self.index else ""
            text.append(terminal_safe(candidate.label), style=style)
            if candidate.detail:
                text.append(f"  {terminal_safe(candidate.detail)}", style="dim")
        if self.candidates:
            text.append("\nTab completes · ↑↓ choose · Esc closes", style="dim italic")
        self.update(text)


class QueuedPrompts(Static, can_focus=False):
    """Prompts typed while a turn runs: sent, together, when it ends; Up in an empty prompt takes the last one back."""

    DEFAULT_CSS = """
    QueuedPrompts {
        display: none;
        height: auto;
        max-height: 6;
        margin: 0 1;
        padding: 0 1;
        color: $text-muted;

        &.-shown {
            display: block;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__("", markup=False, id="queued")
        self.prompts: list[str] = []

    def show(self, prompts: list[str]) -> None:
        """Show the queue (empty: hidden)."""
        self.prompts = list(prompts)
        self.set_class(bool(prompts), "-shown")
        lines = []
        for prompt in prompts:
            line = " ".join(prompt.split())
            if len(line) > QUEUE_PREVIEW_CHARS:
                line = line[: QUEUE_PREVIEW_CHARS - 1] + "…"
            lines.append(f"⏸ queued: {terminal_safe(line)}")
        if prompts:
            lines.append("sent when the turn ends · ↑ in an empty prompt takes the last one back to edit")
        self.update("\n".join(lines))
