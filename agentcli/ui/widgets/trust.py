"""The trust prompt: shown before a TUI session in an untrusted workspace where trusting would change
something (SPEC §2 "Trust"): a project config setting only trust applies, or a hook or MCP server of the
workspace that runs only once it is trusted.

A small App of its own, run before the session is built, so "trust" can load the full config
first. It names everything trusting applies, runs and reaches (`trust_report.TrustReport`: the settings,
every hook command, every MCP server's command line or URL, every variable the servers are given) and
answers "trust", "continue" (without them) or "quit".
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from textual.app import App
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from agentcli.text import terminal_safe

if TYPE_CHECKING:
    from agentcli.conversation import TrustReport

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
    #trust-lists { height: auto; max-height: 24; margin: 1 0; }
    #trust-settings, #trust-armed { color: $text-muted; }
    #trust-armed-explain { margin-top: 1; }
    #trust-buttons { height: auto; }
    #trust-buttons Button { margin-right: 2; }
    """

    def __init__(self, workspace: Path, report: TrustReport) -> None:
        super().__init__()
        self.workspace = workspace
        self.report = report
        self.title = "agentcli — trust this workspace?"

    def compose(self) -> Any:
        """The workspace, what trust would apply, run and reach, and the three answers."""
        report = self.report

        def text(lines: list[str] | tuple[str, ...]) -> str:
            return terminal_safe("\n".join(f"  {line}" for line in lines))  # the workspace's own text

        with Vertical(id="trust-dialog"):
            yield Static(terminal_safe(f"Do you trust the workspace {self.workspace}?"), id="trust-question",
                         markup=False)
            yield Static("Trusting applies what follows now, and remembers this folder.", id="trust-explain",
                         markup=False)
            with VerticalScroll(id="trust-lists"):
                if report.settings:
                    where = report.project_file or "Its Claude Code settings file"
                    yield Static(terminal_safe(f"{where} sets options an untrusted project may not:"),
                                 id="trust-settings-explain", markup=False)
                    yield Static(text(report.settings), id="trust-settings", markup=False)
                if report.arms:
                    yield Static("It runs these hooks and MCP servers, with the environment variables they are "
                                 "given:", id="trust-armed-explain", markup=False)
                    yield Static(text(report.lines()), id="trust-armed", markup=False)
                if report.problems:
                    yield Static("Not read, so what it runs may be more than listed:", markup=False)
                    yield Static(text(report.problems), id="trust-unread", markup=False)
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


def ask_trust(workspace: Path, report: TrustReport) -> TrustChoice:
    """Run the prompt in the terminal; "quit" when it ends any other way."""
    return TrustApp(workspace, report).run() or "quit"
