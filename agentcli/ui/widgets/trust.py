"""The trust prompt: shown before a TUI session in an untrusted workspace whose project config
would change something if trusted (SPEC §2 "Trust").

A small App of its own, run before the session is built, so "trust" can load the full config
first. It answers "trust", "continue" (without the project's widening settings) or "quit".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from textual.app import App
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Static

TrustChoice = Literal["trust", "continue", "quit"]


class TrustApp(App[TrustChoice]):
    """Asks whether to trust a workspace. `t` trusts, `c` continues without, `q` / Esc / Ctrl+Q quits."""

    AUTO_FOCUS = "#continue"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "answer('trust')", "Trust"),
        Binding("c", "answer('continue')", "Continue without"),
        Binding("q,escape", "answer('quit')", "Quit"),
        Binding("ctrl+q,ctrl+c", "answer('quit')", "Quit", show=False, priority=True),
    ]
    CSS = """
    Screen { align: center middle; }
    #trust-dialog { width: 90%; max-width: 110; height: auto; border: thick $warning; padding: 1 2; }
    #trust-settings { margin: 1 0; color: $text-muted; }
    #trust-buttons { height: auto; }
    #trust-buttons Button { margin-right: 2; }
    """

    def __init__(self, workspace: Path, project_file: Path, settings: list[str]) -> None:
        super().__init__()
        self.workspace = workspace
        self.project_file = project_file
        self.settings = settings
        self.title = "agentcli — trust this workspace?"

    def compose(self) -> Any:
        """The workspace, the settings trust would apply, and the three answers."""
        with Vertical(id="trust-dialog"):
            yield Static(f"Do you trust the workspace {self.workspace}?", id="trust-question", markup=False)
            yield Static(
                f"{self.project_file} sets options an untrusted project may not. "
                "Trusting applies them now and remembers this folder:",
                id="trust-explain",
                markup=False,
            )
            yield Static("\n".join(f"  {line}" for line in self.settings), id="trust-settings", markup=False)
            with Horizontal(id="trust-buttons"):
                yield Button(Content("Trust [t]"), id="trust", variant="warning")
                yield Button(Content("Continue without them [c]"), id="continue", variant="primary")
                yield Button(Content("Quit [q]"), id="quit", variant="default")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A button answers."""
        event.stop()
        self.action_answer(event.button.id or "quit")

    def action_answer(self, answer: str) -> None:
        """Leave with the answer."""
        choice: TrustChoice = "trust" if answer == "trust" else "continue" if answer == "continue" else "quit"
        self.exit(choice)


def ask_trust(workspace: Path, project_file: Path, settings: list[str]) -> TrustChoice:
    """Run the prompt in the terminal; "quit" when it ends any other way."""
    return TrustApp(workspace, project_file, settings).run() or "quit"
