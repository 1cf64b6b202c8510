"""The prompt: multi-line input with history. Enter sends; Shift+Enter or Ctrl+J inserts a newline."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea


class PromptInput(TextArea):
    """A TextArea that sends on Enter and recalls earlier prompts with Up / Down at its first / last line."""

    class Submitted(Message):
        """The person pressed Enter on a non-empty prompt."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(soft_wrap=True, tab_behavior="focus", show_line_numbers=False, id=id)
        self.past_prompts: list[str] = []
        self._index: int | None = None  # position in history while browsing it
        self._draft = ""  # what was typed before browsing began

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            if self.text.strip():
                self.post_message(self.Submitted(self.text))
        elif event.key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")

    def accept(self) -> None:
        """The prompt was taken: remember it and clear the input."""
        text = self.text
        if text.strip() and (not self.past_prompts or self.past_prompts[-1] != text):
            self.past_prompts.append(text)
        self._index = None
        self._draft = ""
        self.load_text("")

    def _show(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def action_cursor_up(self, select: bool = False) -> None:
        """Up on the first line goes back in history; elsewhere it moves the cursor."""
        if not select and self.cursor_location[0] == 0 and self.past_prompts:
            if self._index is None:
                self._draft = self.text
                self._index = len(self.past_prompts) - 1
            elif self._index > 0:
                self._index -= 1
            else:
                return
            self._show(self.past_prompts[self._index])
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        """Down on the last line goes forward in history (back to the draft at its end)."""
        last_row = self.document.line_count - 1
        if not select and self._index is not None and self.cursor_location[0] >= last_row:
            self._index += 1
            if self._index >= len(self.past_prompts):
                self._index = None
                self._show(self._draft)
            else:
                self._show(self.past_prompts[self._index])
            return
        super().action_cursor_down(select)
