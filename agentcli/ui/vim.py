"""Vim keys for the prompt (`[ui] vim_mode`, `/vim`): a pure state machine over the prompt's text and cursor.

`VimKeys` knows nothing of Textual. The prompt (`ui/widgets/prompt_input.py`) hands it each key typed in normal
mode with the text and the cursor (an offset into the text) and applies what comes back: a `Change` (the new text
and cursor; the mode may now be insert) or a `HistoryWalk` (k on the first line, j on the last: the prompt's own
Up / Down). In insert mode the prompt edits as ever, and Esc calls `to_normal`.

Normal mode has the motions h j k l w b e W B E 0 ^ $ gg G, each with a count (3w, 2j, 5G); the operators d c y
over a motion (dw, c$, y2j, d3e), a word (diw, caw) or whole lines (dd, 3cc, yy); x X D C s S Y; p P (after /
before the cursor, or whole lines below / above); r (replace characters); u (undo the last change, an insert
session counting as one); i a A I o O into insert mode. As in vim, the cursor sits on a character, never past its
line's last one. A key that makes no command is dropped. Left out: redo (Ctrl+R is the prompt's history search),
`.`, visual mode, f / t / search motions, named registers, marks, macros.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Mode = Literal["normal", "insert"]
UNDO_LEVELS = 100
_MOTION = r"gg|[hjklwbeWBE0^$G]"
#: A whole command: [count], then an operator with [count] and a motion (or the operator again: dd; or a word
#: object: iw aw), r and the character to put, a command of its own, or a motion.
COMMAND = re.compile(
    rf"(?P<count>[1-9][0-9]*)?(?:(?P<op>[dcy])(?P<count2>[1-9][0-9]*)?(?P<motion>{_MOTION}|[dcy]|[ia][wW])"
    rf"|r(?P<char>.)|(?P<simple>[xXDCsSYpPuiaAIoO])|(?P<move>{_MOTION}))",
    re.DOTALL,
)
#: The start of a command, waiting for its next key (a count, an operator, g, r).
PARTIAL = re.compile(r"(?:[1-9][0-9]*)?(?:[dcy](?:[1-9][0-9]*)?[gia]?|g|r)?")
#: Commands that are an operator over a motion.
ALIASES = {"x": ("d", "l"), "X": ("d", "h"), "D": ("d", "$"), "C": ("c", "$"), "s": ("c", "l"), "S": ("c", "c"),
           "Y": ("y", "y")}


@dataclass(frozen=True)
class Change:
    """The prompt's text and its cursor, an offset into the text."""

    text: str
    cursor: int


@dataclass(frozen=True)
class HistoryWalk:
    """k on the first line or j on the last: walk the prompt's history as Up / Down would, `times` times."""

    direction: Literal["up", "down"]
    times: int = 1


@dataclass(frozen=True)
class Register:
    """What d, c and y took, for p and P; `linewise`: whole lines."""

    text: str = ""
    linewise: bool = False


@dataclass(frozen=True)
class Target:
    """Where a motion goes, and how an operator takes the text up to it."""

    pos: int
    kind: Literal["exclusive", "inclusive", "linewise"] = "exclusive"


# --- the text -------------------------------------------------------------------------------------------------


def line_start(text: str, pos: int) -> int:
    """Where the line holding `pos` starts."""
    return text.rfind("\n", 0, pos) + 1


def line_end(text: str, pos: int) -> int:
    """Where the line holding `pos` ends (its newline, or the end of the text)."""
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def on_char(text: str, pos: int) -> int:
    """The normal mode's cursor nearest `pos`: on a character of its line, never past the last one."""
    pos = max(0, min(pos, len(text)))
    start, end = line_start(text, pos), line_end(text, pos)
    return max(start, min(pos, end - 1))


def indent_end(text: str, pos: int) -> int:
    """Where the spaces and tabs that start `pos`'s line end."""
    i, end = line_start(text, pos), line_end(text, pos)
    while i < end and text[i] in " \t":
        i += 1
    return i


def first_non_blank(text: str, pos: int) -> int:
    """^: the first character of `pos`'s line that is not a space or a tab (its last on a blank line)."""
    return on_char(text, indent_end(text, pos))


def _kind(ch: str, big: bool) -> int:
    """0: blank; 1: a word's character (any non-blank for W B E); 2: punctuation, its own kind of word."""
    if ch.isspace():
        return 0
    return 1 if big or ch.isalnum() or ch == "_" else 2


def next_word(text: str, pos: int, big: bool = False) -> int:
    """w: the start of the next word (an empty line counts as one); the end of the text after the last."""
    n = len(text)
    if pos >= n:
        return n
    i, kind = pos, _kind(text[pos], big)
    if kind:
        while i < n and _kind(text[i], big) == kind:
            i += 1
    while i < n and text[i].isspace():
        if i > pos and text[i] == "\n" and text[i - 1] == "\n":
            return i
        i += 1
    return i


def word_end(text: str, pos: int, big: bool = False) -> int:
    """e: the last character of this word, or of the next when the cursor is already on the last."""
    n, i = len(text), pos + 1
    while i < n and text[i].isspace():
        i += 1
    if i >= n:
        return pos
    kind = _kind(text[i], big)
    while i + 1 < n and _kind(text[i + 1], big) == kind:
        i += 1
    return i


def word_start(text: str, pos: int, big: bool = False) -> int:
    """b: the start of this word, or of the one before when the cursor is already on the first character."""
    i = pos - 1
    while i > 0 and text[i].isspace():
        if text[i] == "\n" and text[i - 1] == "\n":
            return i
        i -= 1
    if i <= 0:
        return 0
    kind = _kind(text[i], big)
    while i > 0 and _kind(text[i - 1], big) == kind:
        i -= 1
    return i


def _this_word_end(text: str, pos: int, big: bool) -> int:
    """The last character of the word under the cursor (cw changes up to there)."""
    kind = _kind(text[pos], big)
    while pos + 1 < len(text) and _kind(text[pos + 1], big) == kind:
        pos += 1
    return pos


def word_object(text: str, pos: int, around: bool, big: bool = False) -> tuple[int, int]:
    """iw / aw: the word (or the run of blanks) under the cursor, as [start, end); aw takes the blanks after the
    word too (those before it when none follow)."""
    start, end = line_start(text, pos), line_end(text, pos)
    if pos >= end:
        return pos, pos
    kind = _kind(text[pos], big)
    first, last = pos, pos + 1
    while first > start and _kind(text[first - 1], big) == kind:
        first -= 1
    while last < end and _kind(text[last], big) == kind:
        last += 1
    if around and kind:
        after = last
        while after < end and text[after] in " \t":
            after += 1
        if after > last:
            return first, after
        while first > start and text[first - 1] in " \t":
            first -= 1
    return first, last


def _line_starts(text: str) -> list[int]:
    return [0, *(i + 1 for i, ch in enumerate(text) if ch == "\n")]


def _on_row(text: str, row: int, column: int) -> int:
    """`column` of line `row` (0-based), on a character."""
    starts = _line_starts(text)
    row = max(0, min(row, len(starts) - 1))
    return on_char(text, min(starts[row] + column, line_end(text, starts[row])))


def _row(text: str, pos: int) -> int:
    return text.count("\n", 0, pos)


def motion_target(motion: str, count: int, text: str, pos: int, *, typed: bool = False,
                  operator: str = "") -> Target | None:
    """Where `motion` (not j or k) goes from `pos`, `count` times (`typed`: the count was typed, for G and gg);
    `operator`: it says how far d, c or y reach. None: it cannot move there."""
    big = motion in "WBE"
    if motion == "h":
        return Target(max(line_start(text, pos), pos - count))
    if motion == "l":
        end = line_end(text, pos)
        return Target(min(pos + count, end if operator else max(end - 1, pos)))
    if motion in ("0", "^"):
        return Target(line_start(text, pos) if motion == "0" else first_non_blank(text, pos))
    if motion == "$":
        return Target(line_end(text, _on_row(text, _row(text, pos) + count - 1, 0)))
    if motion in ("gg", "G"):
        last = _row(text, len(text))
        row = count - 1 if typed else (0 if motion == "gg" else last)
        return Target(first_non_blank(text, _on_row(text, row, 0)), "linewise")
    if motion in "eE" or (operator == "c" and motion in "wW" and pos < len(text) and not text[pos].isspace()):
        end = _this_word_end(text, pos, big or motion == "W") if motion in "wW" else word_end(text, pos, big)
        for _ in range(count - 1):
            end = word_end(text, end, big or motion == "W")
        return Target(end, "inclusive")
    step = next_word if motion in "wW" else word_start
    target = pos
    for _ in range(count):
        target = step(text, target, motion in "WB")
    start = line_start(text, target)
    if operator and motion in "wW" and target < len(text) and start > pos and not text[start:target].strip():
        target = start - 1  # dw on a line's last word stops at the line's end
    return Target(target)


def _span(text: str, pos: int, target: Target) -> tuple[int, int]:
    """The text an operator takes: [start, end) offsets (whole lines, without their last newline, for linewise)."""
    first, last = sorted((pos, target.pos))
    if target.kind == "linewise":
        return line_start(text, first), line_end(text, last)
    return first, last + (target.kind == "inclusive")


# --- the machine --------------------------------------------------------------------------------------------


class VimKeys:
    """The mode, a command being typed, the register and the undo levels of one prompt."""

    def __init__(self) -> None:
        self.mode: Mode = "insert"
        self.pending = ""  # keys of a command not complete yet (3, d, d2, g, r)
        self.register = Register()
        self._undo: list[Change] = []
        self._mark = Change("", 0)  # the text as of the last undo level
        self._column: int | None = None  # the column j and k keep

    def reset(self, buffer: Change | None = None) -> None:
        """Insert mode, nothing pending, no undo levels (a new prompt; vim keys turned on or off). The register
        stays."""
        self.mode, self.pending, self._undo, self._column = "insert", "", [], None
        self._mark = buffer or Change("", 0)

    def cancel(self) -> bool:
        """Esc in normal mode: drop a command being typed; False when none was (Esc then does its usual work)."""
        pending, self.pending = self.pending, ""
        return bool(pending)

    def to_normal(self, buffer: Change) -> Change:
        """Esc in insert mode: normal mode, the cursor one character back as in vim; what was typed since insert
        mode began is one undo level."""
        self.mode, self.pending, self._column = "normal", "", None
        self._sync(buffer)
        text, pos = buffer.text, buffer.cursor
        return Change(text, on_char(text, pos - 1 if pos > line_start(text, pos) else pos))

    def feed(self, key: str, buffer: Change) -> Change | HistoryWalk | None:
        """One key (a character) typed in normal mode over `buffer`; None: nothing to do (yet)."""
        self.pending += key
        if PARTIAL.fullmatch(self.pending):
            return None
        found = COMMAND.fullmatch(self.pending)
        self.pending = ""
        if found is None:
            return None
        self._sync(buffer)
        column, self._column = self._column, None
        count, typed = int(found["count"] or 1), found["count"] is not None
        if found["op"]:
            if found["motion"] in ("d", "c", "y") and found["motion"] != found["op"]:
                return None
            typed = typed or found["count2"] is not None
            count *= int(found["count2"] or 1)
            return self._operate(found["op"], found["motion"], count=count, buffer=buffer, typed=typed)
        if found["char"] is not None:
            return self._replace(found["char"], count, buffer)
        simple = found["simple"]
        if simple in ALIASES:
            return self._operate(*ALIASES[simple], count=count, buffer=buffer, typed=typed)
        if simple == "u":
            return self._take_back(count, buffer)
        if simple in ("p", "P"):
            return self._put(simple == "P", count, buffer)
        if simple:
            return self._insert(simple, buffer)
        return self._move(found["move"], count, typed, buffer, column)

    # --- undo levels ----------------------------------------------------------------------------------------

    def _sync(self, buffer: Change) -> None:
        """The text changed since the last undo level (typed in insert mode, pasted, recalled): that is a level."""
        if buffer.text != self._mark.text:
            self._push(self._mark)
        self._mark = buffer

    def _push(self, before: Change) -> None:
        self._undo = [*self._undo[-(UNDO_LEVELS - 1) :], before]

    def _changed(self, before: Change, after: Change) -> Change:
        """A change made in normal mode: one undo level."""
        if after.text != before.text:
            self._push(before)
        self._mark = after
        return after

    def _take_back(self, count: int, buffer: Change) -> Change | None:
        """u: back `count` undo levels."""
        if not self._undo:
            return None
        state = buffer
        for _ in range(min(count, len(self._undo))):
            state = self._undo.pop()
        self._mark = Change(state.text, on_char(state.text, state.cursor))
        return self._mark

    # --- commands -------------------------------------------------------------------------------------------

    def _move(self, motion: str, count: int, typed: bool, buffer: Change, column: int | None) -> Change | HistoryWalk:
        text, pos = buffer.text, buffer.cursor
        if motion in ("j", "k"):
            row = _row(text, pos)
            new_row = max(0, min(_row(text, len(text)), row + (count if motion == "j" else -count)))
            if new_row == row:
                return HistoryWalk("down" if motion == "j" else "up", count)
            self._column = pos - line_start(text, pos) if column is None else column
            return Change(text, _on_row(text, new_row, self._column))
        target = motion_target(motion, count, text, pos, typed=typed)
        if motion == "$":
            self._column = 1 << 30  # j and k keep to the end of each line
        return Change(text, on_char(text, target.pos if target is not None else pos))

    def _operate(self, op: str, motion: str, count: int, buffer: Change, typed: bool) -> Change | None:
        """d, c or y over `motion` (or over `count` whole lines: dd, cc, yy)."""
        text, pos = buffer.text, buffer.cursor
        target: Target | None
        if motion == op:
            target = Target(_on_row(text, _row(text, pos) + count - 1, 0), "linewise")
        elif motion in ("j", "k"):
            row = _row(text, pos) + (count if motion == "j" else -count)
            target = Target(_on_row(text, row, 0), "linewise") if 0 <= row <= _row(text, len(text)) else None
        elif motion[0] in "ia":
            pos, end = word_object(text, pos, motion[0] == "a", motion[1] == "W")
            target = Target(end)
        else:
            target = motion_target(motion, count, text, pos, typed=typed, operator=op)
        if target is None:
            return None
        start, end = _span(text, pos, target)
        linewise = target.kind == "linewise"
        if start < end or linewise:
            self.register = Register(text[start:end], linewise)
        if op == "y":
            above = linewise and target.pos < line_start(text, pos)  # yk: up there; yy, yj: the cursor stays
            return Change(text, on_char(text, target.pos if above else pos if linewise else start))
        if op == "c":
            self.mode = "insert"
            return Change(text[:start] + text[end:], start)  # the insert session that follows is the undo level
        if not linewise:
            left = text[:start] + text[end:]
            return self._changed(buffer, Change(left, on_char(left, start)))
        if end < len(text):
            left = text[:start] + text[end + 1 :]
            return self._changed(buffer, Change(left, first_non_blank(left, start)))
        left = text[: max(start - 1, 0)]
        return self._changed(buffer, Change(left, first_non_blank(left, line_start(left, len(left)))))

    def _put(self, before: bool, count: int, buffer: Change) -> Change | None:
        """p / P: the register after / before the cursor (whole lines: below / above its line)."""
        text, pos = buffer.text, buffer.cursor
        register = self.register
        if not register.text and not register.linewise:
            return None
        if register.linewise:
            block = "\n".join([register.text] * count)
            if before:
                at = line_start(text, pos)
                new = text[:at] + block + "\n" + text[at:]
                return self._changed(buffer, Change(new, first_non_blank(new, at)))
            at = line_end(text, pos)
            new = text[:at] + "\n" + block + text[at:]
            return self._changed(buffer, Change(new, first_non_blank(new, at + 1)))
        block = register.text * count
        at = pos if before or line_end(text, pos) == pos else pos + 1
        new = text[:at] + block + text[at:]
        return self._changed(buffer, Change(new, on_char(new, at + len(block) - 1)))

    def _replace(self, char: str, count: int, buffer: Change) -> Change | None:
        """r: the next `count` characters of the line become `char`."""
        text, pos = buffer.text, buffer.cursor
        end = pos + count
        if end > line_end(text, pos) or char == "\n":
            return None
        return self._changed(buffer, Change(text[:pos] + char * count + text[end:], end - 1))

    def _insert(self, key: str, buffer: Change) -> Change:
        """i a A I o O: insert mode, before / after the cursor, at the line's end / first non-blank, on a new line
        below / above (the insert session that follows is the undo level)."""
        text, pos = buffer.text, buffer.cursor
        self.mode = "insert"
        start, end = line_start(text, pos), line_end(text, pos)
        if key == "o":
            return Change(text[:end] + "\n" + text[end:], end + 1)
        if key == "O":
            return Change(text[:start] + "\n" + text[start:], start)
        at = {"i": pos, "a": min(pos + 1, end), "A": end}.get(key)
        return Change(text, at if at is not None else indent_end(text, pos))
