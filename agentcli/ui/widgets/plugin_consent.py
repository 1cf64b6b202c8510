"""`/plugin install` and `/plugin enable`: what the plugin brings and every hook command, MCP server and language
server it arms, shown before it is kept or turned on, as `agentcli plugins install` shows them in a shell.

`y` (or the button) agrees; `n`, Esc or the other button refuses. Every line comes from the plugin's files: it is
untrusted and made terminal-safe here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agentcli.text import terminal_safe

if TYPE_CHECKING:
    from agentcli.plugins import Plugin

RUNS = ("It runs these as you, on every session where it is on (${CLAUDE_PLUGIN_ROOT} is the plugin's folder):")


def consent_lines(plugin: Plugin, before: list[str] | None = None) -> list[str]:
    """The screen's text: the plugin, what it brings, what it runs (`before`: what the copy it replaces ran; the
    other lines are marked new), what was skipped. Terminal-safe."""
    from agentcli.plugins import armed_marked, brings

    version = f" {plugin.version}" if plugin.version else ""
    lines = [f"{plugin.plugin_id}{version}: {plugin.description or '(no description)'}", f"Brings {brings(plugin)}."]
    runs = armed_marked(plugin, before)
    if runs:
        lines += ["", RUNS, *(f"  {line}" for line in runs)]
    else:
        lines.append("It runs no hooks, no MCP servers and no language servers.")
    lines += [f"Skipped: {warning}" for warning in plugin.warnings]
    return [terminal_safe(line) for line in lines]


class PluginConsentScreen(ModalScreen[bool]):
    """Asks whether to install or turn on a plugin, after showing what it arms (module docstring)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]
    DEFAULT_CSS = """
    PluginConsentScreen {
        align: center middle;
        background: $background 60%;
        & > Vertical {
            width: 90%; max-width: 130; height: auto; max-height: 90%;
            border: thick $warning; background: $surface; padding: 0 1;
        }
        & #plugin-consent-title { text-style: bold; }
        & VerticalScroll { height: auto; max-height: 30; }
        & #plugin-consent-buttons { height: auto; }
        & #plugin-consent-buttons Button { margin-right: 2; }
    }
    """

    def __init__(self, plugin: Plugin, verb: str, before: list[str] | None = None) -> None:
        super().__init__()
        self.plugin = plugin
        self.verb = verb  # "Install", "Turn on"
        self.lines = consent_lines(plugin, before)

    def compose(self) -> Any:
        with Vertical():
            yield Static(Content(f"{self.verb} this plugin?"), id="plugin-consent-title")
            with VerticalScroll():
                yield Static(Content("\n".join(self.lines)), id="plugin-consent-body")
            with Horizontal(id="plugin-consent-buttons"):
                yield Button(f"{self.verb} (y)", id="plugin-consent-yes", variant="warning")
                yield Button("No (n)", id="plugin-consent-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "plugin-consent-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
