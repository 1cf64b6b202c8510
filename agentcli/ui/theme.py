"""The TUI's colour theme: `[ui] theme` applied at start (an unknown one is one line, and the default is kept), and
every theme the person picks afterwards (Ctrl+P → Change theme) saved in their config."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.theme import Theme

from agentcli.text import terminal_safe


class SavedTheme:
    """Applies the configured theme to `app` and keeps the person's choices (`save`, `warn`: the app's)."""

    def __init__(self, app: Any, configured: str, save: Callable[[tuple[str, ...], str], None],
                 warn: Callable[[str], None]) -> None:
        self.app, self.configured, self.save, self.warn = app, configured, save, warn
        self.saved = ""

    def apply(self) -> None:
        """The configured theme, then a watch on the person's changes."""
        app, theme = self.app, self.configured
        if theme and theme in app.available_themes:
            app.theme = theme
        elif theme:
            self.warn(f"[ui] theme {terminal_safe(theme)!r} is not one of this version's themes "
                      "(Ctrl+P → Change theme lists them): the default is used")
        self.saved = app.theme
        app.theme_changed_signal.subscribe(app, self._changed)

    def _changed(self, theme: Theme) -> None:
        if theme.name != self.saved:
            self.saved = theme.name
            self.save(("ui", "theme"), theme.name)
