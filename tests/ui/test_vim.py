"""The vim state machine (`agentcli.ui.vim`), without Textual: motions, counts, operators over motions and lines,
the register, undo, and the modes.

A buffer is written with `|` where the cursor is (in normal mode: on the character after it); `<` is Esc in the
keys typed, and in insert mode every other key is typed into the text.
"""

from __future__ import annotations

import pytest

from agentcli.ui.vim import Change, HistoryWalk, VimKeys, next_word, on_char, word_end, word_start

ESC = "<"


def buf(marked: str) -> Change:
    """`"ab|c"` → the text `abc` with the cursor on `c`."""
    assert marked.count("|") == 1, marked
    return Change(marked.replace("|", ""), marked.index("|"))


def mark(buffer: Change) -> str:
    return buffer.text[: buffer.cursor] + "|" + buffer.text[buffer.cursor :]


class Typist:
    """A VimKeys in normal mode over a buffer, and the keys typed into both; the history walks it asked for."""

    def __init__(self, marked: str) -> None:
        self.vim = VimKeys()
        self.buffer = buf(marked)
        self.vim.reset(self.buffer)
        self.vim.mode = "normal"
        self.walks: list[HistoryWalk] = []

    def type(self, keys: str) -> str:
        for key in keys:
            if self.vim.mode == "insert":
                text, pos = self.buffer.text, self.buffer.cursor
                self.buffer = (self.vim.to_normal(self.buffer) if key == ESC
                               else Change(text[:pos] + key + text[pos:], pos + 1))
                continue
            outcome = self.vim.feed(key, self.buffer)
            if isinstance(outcome, Change):
                self.buffer = outcome
            elif isinstance(outcome, HistoryWalk):
                self.walks.append(outcome)
        return mark(self.buffer)


def typed(marked: str, keys: str) -> str:
    return Typist(marked).type(keys)


@pytest.mark.parametrize(
    ("start", "keys", "end"),
    [
        ("he|llo", "h", "h|ello"),
        ("|hello", "h", "|hello"),  # never off the line's start
        ("he|llo", "l", "hel|lo"),
        ("hell|o", "l", "hell|o"),  # never past the last character
        ("he|llo", "3l", "hell|o"),
        ("he|llo", "0", "|hello"),
        ("he|llo", "$", "hell|o"),
        ("  he|llo", "^", "  |hello"),
        ("|foo bar baz", "w", "foo |bar baz"),
        ("|foo bar baz", "2w", "foo bar |baz"),
        ("|foo.bar baz", "w", "foo|.bar baz"),  # punctuation is a word of its own
        ("|foo.bar baz", "W", "foo.bar |baz"),
        ("foo |bar", "w", "foo ba|r"),  # w past the last word: the last character
        ("foo b|ar baz", "b", "foo |bar baz"),
        ("foo |bar baz", "b", "|foo bar baz"),
        ("foo bar |baz", "2b", "|foo bar baz"),
        ("|foo bar", "e", "fo|o bar"),
        ("fo|o bar", "e", "foo ba|r"),
        ("|foo bar baz", "3e", "foo bar ba|z"),
        ("foo|\nbar", "w", "foo\n|bar"),
        ("|foo\n\nbar", "w", "foo\n|\nbar"),  # an empty line is a word
        ("foo\n\n|bar", "b", "foo\n|\nbar"),
        ("ab|cdef\nxy\nlonger line", "j", "abcdef\nx|y\nlonger line"),
        ("ab|cdef\nxy\nlonger line", "jj", "abcdef\nxy\nlo|nger line"),  # j keeps the column past a short line
        ("abcdef\nxy\nlo|nger line", "2k", "ab|cdef\nxy\nlonger line"),
        ("abc|def\nxy\nlonger line", "$jj", "abcdef\nxy\nlonger lin|e"),  # after $, j goes to each line's end
        ("a\nb\n|c", "gg", "|a\nb\nc"),
        ("|a\nb\n  c", "G", "a\nb\n  |c"),
        ("|a\nb\nc", "2G", "a\n|b\nc"),
    ],
)
def test_motions(start: str, keys: str, end: str) -> None:
    assert typed(start, keys) == end


@pytest.mark.parametrize(
    ("start", "keys", "end"),
    [
        ("|foo bar baz", "dw", "|bar baz"),
        ("|foo bar baz", "d2w", "|baz"),
        ("|foo bar baz", "2dw", "|baz"),
        ("foo |bar baz", "de", "foo | baz"),
        ("foo bar |baz", "db", "foo |baz"),
        ("foo |bar baz", "d$", "foo| "),
        ("foo |bar baz", "D", "foo| "),
        ("foo |bar baz", "d0", "|bar baz"),
        ("foo |bar\nnext", "dw", "foo| \nnext"),  # dw on a line's last word keeps the newline
        ("|foo bar", "x", "|oo bar"),
        ("|foo bar", "3x", "| bar"),
        ("fo|o", "x", "f|o"),  # x on the last character: the cursor moves back onto the line
        ("fo|o", "X", "f|o"),
        ("|a\nb\nc", "dd", "|b\nc"),
        ("a\n|b\nc", "2dd", "|a"),  # the last lines: the cursor goes to the line above
        ("a\n  |b\nc", "dj", "|a"),
        ("a\n|b\nc", "dk", "|c"),
        ("|only", "dd", "|"),
        ("|a\nb\nc", "dG", "|"),
        ("|ab", "dj", "|ab"),  # no line below: nothing
        ("foo |bar baz", "cwX<", "foo |X baz"),  # cw changes the word, not the blank after it
        ("foo |bar baz", "c2wX<", "foo |X"),
        ("foo |bar baz", "cbX<", "|Xbar baz"),
        ("foo |bar baz", "CX<", "foo |X"),
        ("a\n|bcd\ne", "ccX<", "a\n|X\ne"),
        ("a\n|bcd\ne", "SX<", "a\n|X\ne"),
        ("|abc", "sX<", "|Xbc"),
        ("foo b|ar baz", "diw", "foo | baz"),
        ("foo b|ar baz", "daw", "foo |baz"),
        ("foo b|ar", "daw", "fo|o"),  # no blank after the word: the blank before it
        ("foo b|ar.x baz", "ciWy<", "foo |y baz"),
        ("foo | bar", "diw", "foo|bar"),  # on blanks: the blanks
        ("foo b|ar baz", "yiwP", "foo ba|rbar baz"),  # yiw goes to the word's start
        ("|abc", "2rx", "x|xc"),
        ("|abc", "4rx", "|abc"),  # past the line's end: nothing
    ],
)
def test_operators(start: str, keys: str, end: str) -> None:
    assert typed(start, keys) == end


@pytest.mark.parametrize(
    ("start", "keys", "end"),
    [
        ("|foo bar", "ywP", "foo| foo bar"),
        ("|foo bar", "yw$p", "foo barfoo| "),
        ("foo |bar", "dwbP", "ba|rfoo "),
        ("|ab", "xp", "b|a"),
        ("|a\nb", "yyp", "a\n|a\nb"),
        ("|a\nb", "yyP", "|a\na\nb"),
        ("|a\nb", "yy2p", "a\n|a\na\nb"),
        ("|a\nb", "ddp", "b\n|a"),
        ("a\n|b", "yyggP", "|b\na\nb"),
        ("|a\nb\nc", "yjGp", "a\nb\nc\n|a\nb"),
        ("a\n|b\nc", "ykP", "|a\nb\na\nb\nc"),
        ("|foo", "p", "|foo"),  # an empty register: nothing
    ],
)
def test_yank_and_put(start: str, keys: str, end: str) -> None:
    assert typed(start, keys) == end


def test_a_yank_leaves_the_text_and_moves_to_the_start_of_what_it_took() -> None:
    typist = Typist("foo b|ar baz")
    assert typist.type("yb") == "foo |bar baz"
    assert typist.vim.register.text == "b" and not typist.vim.register.linewise
    assert typist.type("yy") == "foo |bar baz" and typist.vim.register.text == "foo bar baz"
    assert typist.vim.register.linewise


@pytest.mark.parametrize(
    ("start", "keys", "end"),
    [
        ("ab|c", "iX<", "ab|Xc"),
        ("ab|c", "aX<", "abc|X"),
        ("|abc", "AX<", "abc|X"),
        ("  ab|c", "IX<", "  |Xabc"),
        ("|ab\ncd", "oX<", "ab\n|X\ncd"),
        ("ab\n|cd", "OX<", "ab\n|X\ncd"),
        ("ab|c", "i<", "a|bc"),  # Esc goes one character back, as in vim
        ("|abc", "i<", "|abc"),  # but never off the line
    ],
)
def test_insert_commands(start: str, keys: str, end: str) -> None:
    assert typed(start, keys) == end


def test_modes_switch_with_insert_commands_and_esc() -> None:
    typist = Typist("|abc")
    assert typist.vim.mode == "normal"
    typist.type("i")
    assert typist.vim.mode == "insert"
    typist.type("xy")
    assert typist.buffer.text == "xyabc"  # typed in insert mode, not taken as commands
    typist.type(ESC)
    assert typist.vim.mode == "normal"
    typist.type("cw")
    assert typist.vim.mode == "insert" and mark(typist.buffer) == "x|"


def test_a_new_prompt_starts_in_insert_mode_and_forgets_its_undo_levels() -> None:
    typist = Typist("|abc")
    typist.type("x")
    typist.vim.pending = "d"
    typist.vim.reset(Change("", 0))
    assert typist.vim.mode == "insert" and typist.vim.pending == ""
    typist.type("new" + ESC)
    assert typist.type("u") == "|"  # back to the empty prompt, not to the earlier one


def test_undo_takes_back_one_change_at_a_time_and_an_insert_session_as_one() -> None:
    typist = Typist("|foo bar baz")
    typist.type("dw")
    typist.type("wx")
    assert typist.buffer.text == "bar az"
    typist.type("ihello world" + ESC)
    assert typist.buffer.text == "bar hello worldaz"
    assert typist.type("u") == "bar |az"
    assert typist.type("u") == "bar |baz"
    assert typist.type("u") == "|foo bar baz"
    assert typist.type("u") == "|foo bar baz"  # nothing more to undo


def test_undo_takes_back_a_change_word_with_what_was_typed_in_one_step() -> None:
    typist = Typist("foo |bar baz")
    typist.type("cwqux" + ESC)
    assert typist.buffer.text == "foo qux baz"
    assert typist.type("u") == "foo |bar baz"


def test_undo_counts_and_changes_made_outside_the_machine() -> None:
    typist = Typist("|abc")
    typist.type("xx")
    typist.buffer = Change("recalled", 0)  # e.g. a prompt from the history
    assert typist.type("u") == "|c"
    assert typist.type("2u") == "|abc"


def test_counts_multiply_and_a_leading_zero_is_a_motion() -> None:
    assert typed("|a b c d e f g h i j k l", "2d3w") == "|g h i j k l"
    assert typed("|" + "x" * 20, "12l") == "x" * 12 + "|" + "x" * 8
    assert typed("abc|def", "10x") == "ab|c"
    assert typed("abc|def", "d0") == "|def"


def test_keys_that_make_no_command_are_dropped() -> None:
    typist = Typist("ab|c")
    assert typist.type("dqZ") == "ab|c"  # d then q: no command; Z: none either
    assert typist.vim.pending == ""
    assert typist.type("dc") == "ab|c"  # an operator over another operator
    assert typist.type("x") == "a|b"  # and the next command works


def test_a_command_being_typed_waits_and_esc_drops_it() -> None:
    vim = VimKeys()
    vim.mode = "normal"
    assert vim.feed("2", Change("abc", 0)) is None and vim.pending == "2"
    assert vim.feed("d", Change("abc", 0)) is None and vim.pending == "2d"
    assert vim.cancel() and vim.pending == ""
    assert not vim.cancel()  # nothing pending: Esc does its usual work
    assert vim.feed("g", Change("abc", 0)) is None and vim.pending == "g"


def test_j_on_the_last_line_and_k_on_the_first_walk_the_history() -> None:
    typist = Typist("a\n|b")
    typist.type("j")
    typist.type("k")
    typist.type("2k")
    assert typist.walks == [HistoryWalk("down", 1), HistoryWalk("up", 2)]
    assert mark(typist.buffer) == "|a\nb"
    typist.type("dk")  # an operator never walks the history
    assert typist.walks == [HistoryWalk("down", 1), HistoryWalk("up", 2)]


def test_the_text_helpers() -> None:
    text = "foo_bar, baz\n\nqux"
    assert next_word(text, 0) == 7 and next_word(text, 7) == 9 and next_word(text, 9) == 13
    assert word_end(text, 0) == 6 and word_end(text, 6) == 7
    assert word_start(text, 9) == 7 and word_start(text, 14) == 13
    assert on_char(text, 12) == 11 and on_char(text, 13) == 13 and on_char(text, 99) == 16
