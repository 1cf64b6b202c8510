"""Where a key goes on the main screen: the focus model `ui/keys.py` describes, as rules the app asks.

Text keys (and pastes) belong in the prompt wherever the focus is, unless the focused widget takes typed text
itself. The app's scrolling, mode and focus keys apply on the main screen only (in a dialog, the dialog's own
keys work); Esc is "Back to prompt" away from the prompt, "Stop turn" in it while something runs, and "Rewind" in
the empty prompt while nothing does (twice in a row: `/rewind`); with vim keys, only in their normal mode (insert
mode claims Esc with `check_consume_key`, and none of these apply); Home / End scroll the
conversation only while no text entry would use them to move along its line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import events

if TYPE_CHECKING:
    from textual.app import App

    from agentcli.ui.widgets.message_list import MessageList
    from agentcli.ui.widgets.prompt_input import PromptInput

MAIN_SCREEN_ACTIONS = frozenset({"scroll_messages", "home_end", "cycle_mode", "move_focus", "command"})


class FocusRules:
    """The focus rules over `app`'s screen, its `prompt` and the conversation view `messages`."""

    def __init__(self, app: App[Any], prompt: PromptInput, messages: MessageList) -> None:
        self._app = app
        self._prompt = prompt
        self._messages = messages

    @property
    def on_main_screen(self) -> bool:
        """Whether the conversation's screen is the active one (no dialog or picker over it)."""
        return self._prompt.is_attached and self._prompt.screen is self._app.screen

    def text_entry_focused(self) -> bool:
        """Whether the focused widget is one that takes typed text (the prompt, or another Input / TextArea)."""
        focused = self._app.focused
        return focused is not None and focused.check_consume_key("a", "a")

    def prompt_takes(self, event: events.Key | events.Paste) -> bool:
        """Whether this key or paste belongs in the prompt although the focus is elsewhere on the main screen."""
        focused = self._app.focused
        if focused is self._prompt or not self.on_main_screen:
            return False
        if isinstance(event, events.Paste):  # a widget that takes typed text takes pasted text too
            return not self.text_entry_focused()
        if not event.is_printable:
            return False
        return focused is None or not focused.check_consume_key(event.key, event.character)

    def allows(self, action: str, busy: Callable[[], bool]) -> bool | None:
        """The app's `check_action`: True, False (not here), or None (shown disabled: `busy()` says whether a
        turn or a `!command` runs, for Esc's "Stop turn")."""
        prompt_focused = self._app.focused is self._prompt
        if action == "focus_prompt":
            return self.on_main_screen and not prompt_focused
        if action == "stop_turn":
            if self.on_main_screen and not prompt_focused:
                return False
            return True if busy() else (False if self.may_rewind(busy) else None)
        if action == "rewind_key":
            return self.may_rewind(busy)
        if action in MAIN_SCREEN_ACTIONS and not self.on_main_screen:
            return False
        if action == "home_end":  # in a text (the prompt's, or a search box's) they move along its line
            return not self.text_entry_focused() or (prompt_focused and not self._prompt.text)
        return True

    def may_rewind(self, busy: Callable[[], bool]) -> bool:
        """Whether Esc in the prompt means "rewind" (twice in a row opens `/rewind`): on the main screen, the prompt
        focused and empty, nothing running."""
        return self.on_main_screen and self._app.focused is self._prompt and not self._prompt.text and not busy()

    def scroll(self, where: str) -> None:
        """PgUp / PgDn / Ctrl+Home / Ctrl+End: scroll the conversation (the end follows new output again)."""
        view = self._messages
        if where == "page_up":
            view.scroll_page_up(animate=False)
        elif where == "page_down":
            view.scroll_page_down(animate=False)
            if view.scroll_y >= view.max_scroll_y:  # at the end: follow new output again (Textual's page-down
                view.follow()  # releases the anchor even when it cannot move, so a second press at the end unfollowed)
        elif where == "home":
            view.scroll_home(animate=False)
        else:
            view.follow()
