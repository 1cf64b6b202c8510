"""The prompt: multi-line input with history, completion, reverse search and a queue.

- Enter sends; Shift+Enter or Ctrl+J inserts a newline.
- Up / Down at the first / last line walk the history (persisted per workspace, `ui.prompt_history`); Up in an
  empty prompt first takes back the last prompt queued while a turn runs.
- Ctrl+R searches the history backwards as you type: Ctrl+R again goes further back, Enter or Tab takes the
  match into the prompt (it is not sent), Esc gives back what was typed before.
- Typing `/` at the start lists the commands, `@` anywhere lists workspace paths (`ui.completion`): Tab takes
  the highlighted one, Up/Down choose, Enter takes it too (or sends when it is complete), Esc closes the list.
- A pasted or dropped image file's path, and Ctrl+V with an image on the clipboard, put `[Image #N: name]` into the
  prompt; the prompt sent carries the image (`ui.pasted_images`).
- Vim keys (`[ui] vim_mode`, `/vim`): in insert mode every key above works as ever and Esc goes to normal mode (when
  no completion list or search takes it); in normal mode each printable key is a command of `ui.vim.VimKeys`
  (Backspace moves left, Delete is x), Esc drops a command being typed or else does the app's usual work (stop
  the turn; twice in the empty prompt: /rewind), and Enter, Up / Down, Tab, Ctrl keys work as in insert mode.
  A new prompt starts in insert mode.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual import events, work
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from agentcli.text import terminal_safe
from agentcli.ui.completion import PathIndex, command_candidates, path_candidates, token_at
from agentcli.ui.pasted_images import PastedImages, PasteError, dropped_path, read_clipboard
from agentcli.ui.prompt_history import PromptHistory, search_back
from agentcli.ui.vim import Change, VimKeys, on_char
from agentcli.ui.widgets.prompt_extras import CompletionList, QueuedPrompts

SEARCH_HINT = "Enter or Tab takes it · Ctrl+R further back · Esc cancels"
_MOVES = frozenset({"left", "right", "home", "end", "up", "down", "pageup", "pagedown", "ctrl+left", "ctrl+right"})
_VIM_KEYS = {"backspace": "h", "delete": "x"}  # in normal mode, as vim has them


def _after_escape(event: events.Key) -> str:
    """The key of an Alt+key the terminal sent for Esc and a key typed quickly (`\\x1bw` is alt+w), as vim's
    insert mode reads it: Esc, then that key. "" for any other key (the prompt's own Alt keys included)."""
    if not event.key.startswith("alt+") or event.key in ("alt+backspace", "alt+delete"):
        return ""
    name = event.key.removeprefix("alt+")
    char = event.character or (name.removeprefix("shift+").upper() if name.startswith("shift+") else name)
    return char if len(char) == 1 and char.isprintable() else ""


@dataclass
class _Search:
    query: str = ""
    index: int | None = None  # the entry shown
    draft: str = ""  # what was typed before the search


class PromptInput(TextArea):
    """A TextArea that sends on Enter, recalls, searches and completes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "history_search", "History search"),
        Binding("ctrl+v", "paste_image", "Paste image", show=False),  # Claude Code's key (text pastes as ever)
    ]

    class Submitted(Message):
        """The person pressed Enter on a non-empty prompt."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(
        self,
        *,
        id: str | None = None,
        history: PromptHistory | None = None,
        commands: Mapping[str, str] | None = None,
        paths: PathIndex | None = None,
        vim: bool = False,
    ) -> None:
        super().__init__(soft_wrap=True, tab_behavior="focus", show_line_numbers=False, id=id)
        self.prompt_history = history
        self.past_prompts: list[str] = history.entries if history is not None else []
        self.commands: Mapping[str, str] = commands or {}
        self.paths = paths
        self.completions = CompletionList()
        self.queue_view = QueuedPrompts()
        self.queued: list[str] = []
        self._index: int | None = None  # position in history while browsing it
        self._draft = ""  # what was typed before browsing began
        self._search: _Search | None = None
        self._keyed = False  # the next change comes from a key the person pressed
        self._closed_at: str | None = None  # Esc closed the list on this text: keep it closed until it changes
        self._indexing = False  # the path index is being built in a worker thread
        self.images = PastedImages()  # images pasted into prompts, by their markers (`ui/pasted_images`)
        self.vim = VimKeys()
        self.vim_enabled = vim

    # --- keys -------------------------------------------------------------------------------------

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        """Tab is the prompt's while it completes (the list is open, or the caret is in a word being completed);
        otherwise the app's Tab moves the focus."""
        if key == "tab":
            return self.completions.shown or token_at(self.text, self._offset()) is not None
        if key == "escape":  # vim's insert mode takes Esc (to normal mode), so the app's Esc does not apply
            return self.vim_enabled and self.vim.mode == "insert"
        return super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        if self._search is not None and self._search_key(event):
            event.stop()
            event.prevent_default()
            return
        key = event.key
        if self.completions.shown and self._completion_key(key):
            event.stop()
            event.prevent_default()
            return
        if self.vim_enabled and self._vim_key(event):
            event.stop()
            event.prevent_default()
            return
        if key == "tab" and token_at(self.text, self._offset()) is not None:
            event.stop()  # in a word being completed, Tab completes (or waits for the list): focus stays here
            event.prevent_default()
            self._closed_at = None
            self.refresh_completion()
            if self.completions.shown:
                self._take_completion()
            return
        if key == "enter":
            event.stop()
            event.prevent_default()
            if self.text.strip():
                self.post_message(self.Submitted(self.text))
        elif key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
        elif key not in _MOVES:
            self._keyed = True  # typing, deleting, pasting by key: completion follows

    def _completion_key(self, key: str) -> bool:
        """Keys the open completion list takes; False lets the key through."""
        listing = self.completions
        if key == "tab":
            self._take_completion()
        elif key == "enter":
            chosen, token = listing.selected, listing.token
            if chosen is None or token is None or self.text[token.start : token.end] == chosen.insert.rstrip():
                listing.hide()
                return False  # already complete: Enter sends
            self._take_completion()
        elif key in ("up", "down"):
            listing.move(-1 if key == "up" else 1)
        elif key == "escape":
            self._closed_at = self.text
            listing.hide()
        else:
            return False
        return True

    def on_paste(self, event: events.Paste) -> None:
        """Pasted text is typed text: completion follows it. A pasted (or dropped) image file's path becomes the
        image's marker instead."""
        self._keyed = True
        workspace = self.paths.workspace if self.paths is not None else Path.cwd()
        if (path := dropped_path(event.text, workspace)) is not None:
            event.prevent_default()  # not typed as text
            self._take_image(partial(self.images.add_file, path))

    def action_paste_image(self) -> None:
        """Ctrl+V: the clipboard's image as a marker; with no image there, the app's copied text as ever."""
        self._take_image(lambda: self.images.add(read_clipboard(), "clipboard"), text_instead=True)

    @work(group="paste-image")
    async def _take_image(self, take: Callable[[], str], text_instead: bool = False) -> None:
        try:
            marker = await asyncio.to_thread(take)
        except PasteError as exc:
            if text_instead and self.app.clipboard:
                super().action_paste()
            else:
                self.app.notify(terminal_safe(str(exc)), severity="warning")
            return
        self.insert(marker + " ")

    # --- vim keys ---------------------------------------------------------------------------------

    @property
    def vim_label(self) -> str:
        """`NORMAL` or `INSERT` while vim keys are on (the status bar shows it), else ""."""
        return self.vim.mode.upper() if self.vim_enabled else ""

    def set_vim_mode(self, on: bool) -> None:
        """Vim keys on or off; either way the prompt takes text at once (insert mode)."""
        self.vim_enabled = on
        self.vim.reset(Change(self.text, self._offset()))
        self.refresh_bindings()

    def _vim_key(self, event: events.Key) -> bool:
        """Esc in insert mode, or a key in normal mode that `VimKeys` takes; False: the key does its usual work."""
        vim, key = self.vim, event.key
        if vim.mode == "insert":
            typed_after_esc = _after_escape(event)  # Esc then a key within the terminal's escape delay: Alt+key
            if key != "escape" and not typed_after_esc:
                return False
            self._vim_apply(vim.to_normal(Change(self.text, self._offset())))
            self.refresh_bindings()  # the app's Esc applies again
            if not typed_after_esc:
                return True
        elif key == "escape":
            return vim.cancel()
        char = _VIM_KEYS.get(key) or _after_escape(event) or (event.character if event.is_printable else None)
        if not char:
            return False
        outcome = vim.feed(char, Change(self.text, on_char(self.text, self._offset())))  # a click may put it past
        if isinstance(outcome, Change):
            self._vim_apply(outcome)
        elif outcome is not None:
            for _ in range(outcome.times):
                (self.action_cursor_up if outcome.direction == "up" else self.action_cursor_down)()
            self.move_cursor(self._location(on_char(self.text, self._offset())))
        if self.vim_label == "INSERT":  # i, a, c…: Esc is the prompt's again
            self.refresh_bindings()
        return True

    def _vim_apply(self, change: Change) -> None:
        """Put the machine's text and cursor in: only the part that changed is replaced (one edit, for Ctrl+Z)."""
        old, new = self.text, change.text
        if old != new:
            start = 0
            while start < min(len(old), len(new)) and old[start] == new[start]:
                start += 1
            end_old, end_new = len(old), len(new)
            while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
                end_old, end_new = end_old - 1, end_new - 1
            self.replace(new[start:end_new], self._location(start), self._location(end_old))
        self.move_cursor(self._location(change.cursor))

    # --- completion -------------------------------------------------------------------------------

    def _offset(self) -> int:
        row, col = self.cursor_location
        lines = self.text.split("\n")
        return sum(len(line) + 1 for line in lines[:row]) + col

    def _location(self, offset: int) -> tuple[int, int]:
        before = self.text[:offset].split("\n")
        return len(before) - 1, len(before[-1])

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """Typed text may start, narrow or end a completion."""
        if self._keyed:
            self._keyed = False
            self.refresh_completion()
        elif self.completions.shown:
            self.completions.hide()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        """The cursor left the word being completed: close the list."""
        token = self.completions.token
        if token is not None and not token.start < self._offset() <= token.end:
            self.completions.hide()

    def refresh_completion(self) -> None:
        """List what the word at the cursor may become (paths once the index is built)."""
        text = self.text
        if self._closed_at is not None and self._closed_at != text:
            self._closed_at = None
        token = token_at(text, self._offset()) if self._closed_at is None else None
        if token is None:
            self.completions.hide()
            return
        if token.kind == "command":
            self.completions.show(token, command_candidates(token.query, self.commands))
            return
        if self.paths is None:
            return
        if self.paths.stale and not self._indexing:
            self._indexing = True
            self.run_worker(self._build_index, thread=True, group="path-index", exit_on_error=False)
        self.completions.show(token, path_candidates(token.query, self.paths.entries))

    def _build_index(self) -> None:
        assert self.paths is not None
        try:
            self.paths.build()
        finally:
            self.app.call_from_thread(self._index_built)

    def _index_built(self) -> None:
        self._indexing = False
        if token_at(self.text, self._offset()) is not None and self._closed_at is None:
            self.refresh_completion()

    def _take_completion(self) -> None:
        listing = self.completions
        chosen, token = listing.selected, listing.token
        listing.hide()
        if chosen is None or token is None:
            return
        text = self.text
        end = token.end
        if chosen.insert.endswith(" ") and text[end : end + 1] == " ":
            end += 1  # do not double the space after it
        self._keyed = not chosen.final  # a folder: the list goes on with its entries (now, and once the change lands)
        self.replace(chosen.insert, self._location(token.start), self._location(end))
        self.move_cursor(self._location(token.start + len(chosen.insert)))
        if not chosen.final:
            self.refresh_completion()

    # --- history ----------------------------------------------------------------------------------

    def accept(self) -> None:
        """The prompt was taken: remember it (in the workspace's history too) and clear the input."""
        text = self.text
        if self.prompt_history is not None:
            self.prompt_history.add(text)  # appends to `past_prompts`, the same list
        elif text.strip() and (not self.past_prompts or self.past_prompts[-1] != text):
            self.past_prompts.append(text)
        self._index = None
        self._draft = ""
        self.completions.hide()
        self.load_text("")
        if self.vim_enabled:
            self.vim.reset()  # a new prompt starts in insert mode, with no undo levels
            self.refresh_bindings()

    def _show(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def action_cursor_up(self, select: bool = False) -> None:
        """Up on the first line: takes back a queued prompt (in an empty prompt), else goes back in history."""
        if not select and self.cursor_location[0] == 0 and self.queued and not self.text.strip():
            self._show(self.queued.pop())
            self.queue_view.show(self.queued)
            return
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

    # --- reverse search ---------------------------------------------------------------------------

    @property
    def searching(self) -> bool:
        """Whether Ctrl+R search is on."""
        return self._search is not None

    def action_history_search(self) -> None:
        """Ctrl+R: search the prompt history backwards."""
        self._start_search()

    def _start_search(self) -> None:
        if self._search is None:
            self.completions.hide()
            self._search = _Search(draft=self.text)
            self._show_search()
        else:
            self._search_further()

    def _search_further(self) -> None:
        search = self._search
        assert search is not None
        found = search_back(self.past_prompts, search.query, search.index)
        if found is not None:
            search.index = found
        self._show_search(failed=found is None)

    def _show_search(self, *, failed: bool = False) -> None:
        search = self._search
        assert search is not None
        self._show(self.past_prompts[search.index] if search.index is not None else search.draft)
        state = "no match for" if failed else "history search:"
        self.border_title = f"{state} {search.query!r}"
        self.border_subtitle = SEARCH_HINT

    def _end_search(self, *, keep: bool) -> None:
        search = self._search
        self._search = None
        self.border_title = None
        self.border_subtitle = None
        if search is not None and not keep:
            self._show(search.draft)
        self._index = None

    def _search_key(self, event: events.Key) -> bool:
        """A key during Ctrl+R search; False: the search ends (keeping the match) and the key does its usual work."""
        search = self._search
        assert search is not None
        key = event.key
        if key == "ctrl+r":
            self._search_further()
        elif key in ("enter", "tab"):
            self._end_search(keep=True)
        elif key in ("escape", "ctrl+g", "ctrl+c"):
            self._end_search(keep=False)
        elif key == "backspace":
            search.query = search.query[:-1]
            search.index = search_back(self.past_prompts, search.query, None) if search.query else None
            self._show_search(failed=bool(search.query) and search.index is None)
        elif event.is_printable and event.character:
            search.query += event.character
            start = search.index + 1 if search.index is not None else None  # the shown entry may still match
            found = search_back(self.past_prompts, search.query, start)
            if found is not None:
                search.index = found
            self._show_search(failed=found is None)
        else:
            self._end_search(keep=True)
            return False
        return True

    # --- the queue ----------------------------------------------------------------------------------

    def enqueue(self, text: str) -> None:
        """Keep a prompt until the running turn ends; the input is cleared (and the prompt is in the history)."""
        self.queued.append(text)
        self.accept()
        self.queue_view.show(self.queued)

    def take_queued(self) -> list[str]:
        """Every queued prompt, oldest first; the queue is emptied."""
        queued, self.queued = self.queued, []
        self.queue_view.show([])
        return queued
