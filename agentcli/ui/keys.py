"""Every key of the TUI, in one table: `/help` prints it, and a test holds the app's bindings to it.

The focus model it describes (`AgentApp` implements it):
- Text keys always reach the prompt: a printable key (or a paste) while the focus is elsewhere on the main
  screen (a block, a tool line, the conversation after a click) moves the focus back to the prompt and is
  typed there, in order. So no widget of the main screen binds a printable key: acting on a focused block
  takes a key that cannot be typed by accident (Enter, Ctrl+X).
- Esc goes back to the prompt when the focus is elsewhere; in the prompt it stops the running turn (and
  every subagent under it). While nothing runs, Esc twice in the empty prompt opens `/rewind` (the first
  one only says so in the status bar; any other key takes it back). Ctrl+C stops the turn from anywhere.
  In a dialog, Esc is the dialog's "no" (in the rewind's steps: back one step).
- Vim keys (`[ui] vim_mode`, `/vim`; `ui/vim.py`): the prompt has an insert and a normal mode, shown in the
  status bar. In insert mode every key works as without vim, but Esc in the prompt goes to normal mode (the
  prompt claims it with `check_consume_key`, so the app's Esc does not apply; an open completion list or a
  Ctrl+R search still takes it first). In normal mode Esc means what it means without vim (stop the turn;
  twice in the empty prompt: `/rewind`), unless it drops a command being typed (`d`, `2`). A text key is a
  vim command there, and that holds for the rule above too: typed while the focus is elsewhere, it moves the
  focus to the prompt and is taken as a command, not typed. Enter sends in both modes; Up / Down, Tab, Ctrl
  keys and pastes work as in insert mode; a new prompt starts in insert mode.
- PgUp / PgDn scroll the conversation wherever the focus is (the prompt is short: Up / Down move in it);
  Ctrl+Home / Ctrl+End go to its top / bottom (the bottom follows new output again). Home / End do that
  too while the prompt is empty; with text in the prompt they move to the start / end of its line.
- Shift+Tab cycles the permission mode, ask → accept edits → read-only (plan) → ask (`auto` joins the cycle
  only in a session started in it); the status bar shows the mode. It applies to the next tool call of
  the main agent and of every subagent. It is the person's own choice at the keyboard, so it may loosen
  a mode an untrusted project's config narrowed (that rule is about files in the workspace).
- Ctrl+Q quits; while a turn runs, the first Ctrl+Q only says that a second one stops the turn and quits
  (any other key, or the turn's end, takes that back). On the way out the session's id is printed.
- Tab and Esc move the focus at once, as the app takes them from the terminal, so keys typed right behind
  them (before the screen caught up) go where the new focus says. A widget that wants Tab or Esc for
  itself (the prompt completing a word, a search box closing) returns True from `check_consume_key` for
  it while it does, and Textual leaves the key to it.
"""

from __future__ import annotations

KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send the prompt (a /command runs at once)"),
    ("Shift+Enter, Ctrl+J", "new line in the prompt"),
    ("Up / Down", "earlier prompts (from the prompt's first / last line)"),
    ("any text key", "types into the prompt, wherever the focus is (in vim keys' normal mode: a command there)"),
    ("Esc", "back to the prompt; in the prompt: stop the running turn and every subagent (vim: in normal mode)"),
    ("Esc Esc in the empty prompt", "rewind to an earlier prompt (/rewind), while nothing runs"),
    ("Esc in vim keys' insert mode (/vim)", "normal mode (there Esc and Esc Esc do what they do above)"),
    ("text keys in vim keys' normal mode", "h j k l w b e 0 $ gg G move (j / k past the first / last line: history); "
     "d c y + a motion, dd cc yy x D C r change; p P put; u undo; counts (3w, d2w); i a A I o O insert"),
    ("Ctrl+C", "stop the running turn (from anywhere); else copy the prompt's selection"),
    ("Shift+Tab", "permission mode: ask → accept edits → read-only (plan: /go carries a plan out); in the status bar"),
    ("PgUp / PgDn", "scroll the conversation"),
    ("Ctrl+Home / Ctrl+End", "top / bottom of the conversation (Home / End too while the prompt is empty)"),
    ("Tab", "move the focus to the blocks and tool lines"),
    ("Enter, Ctrl+O on a block or tool line", "expand / collapse it"),
    ("Ctrl+E, Right on a block", "open that agent's own transcript, live (Esc or Left goes back)"),
    ("Ctrl+X on a running block", "cancel that subagent only (its siblings and the parent go on)"),
    ("Ctrl+T on a running block", "message that subagent: /msg ID in the prompt (it reads it at its next turn)"),
    ("Ctrl+D on a block of an isolated task", "its merge back and the diff of what it changed (Esc closes)"),
    ("y / a / n, Esc in an approval", "allow once / allow always / deny"),
    ("Up / Down, 1 2 3 4 5, space, Enter, Esc in a question",
     "move / pick (toggle when several may be picked) / toggle / choose or confirm / decline (from Other…: back)"),
    ("Enter / o / d, Esc in a rewind's preview",
     "rewind, keeping the files you changed since / overwrite those too / the file's whole diff / back"),
    ("Ctrl+G", "the background commands (/bg)"),
    ("Ctrl+B", "move the running Bash command to the background (/bg move); its agent is told and goes on"),
    ("Enter / x, Esc in /bg's list", "follow the highlighted command's output live / stop it / close"),
    ("x, Esc on a command's output", "stop it / back to the list"),
    ("Ctrl+Q", "quit (while a turn runs: twice, and the turn is stopped)"),
)

#: How a binding's key is written in KEYS (Textual's key names → the names people read).
KEY_NAMES = {
    "escape": "Esc", "enter": "Enter", "tab": "Tab", "shift+tab": "Shift+Tab", "pageup": "PgUp",
    "pagedown": "PgDn", "home": "Home", "end": "End", "ctrl+home": "Ctrl+Home", "ctrl+end": "Ctrl+End",
    "up": "Up", "down": "Down", "shift+enter": "Shift+Enter", "right": "Right", "left": "Left",
}


def key_name(key: str) -> str:
    """`ctrl+x` → `Ctrl+X`, `pageup` → `PgUp`, `y` → `y`."""
    if key in KEY_NAMES:
        return KEY_NAMES[key]
    if key.startswith("ctrl+"):
        return "Ctrl+" + key.removeprefix("ctrl+").upper()
    return key


def keys_help() -> str:
    """The keys as `/help` lists them."""
    width = max(len(keys) for keys, _ in KEYS)
    return "\n".join(["Keys:"] + [f"  {keys:<{width}}  {what}" for keys, what in KEYS])
