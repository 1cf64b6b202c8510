"""Bash's lexer, without expansions: the words and operators of a command, as `bash_syntax` needs them.

Blanks and the metacharacters `| & ; ( ) < >` and newline end a word; operators are read longest first
(`;>` is `;` then `>`, `>|` is one operator, `&>` redirects both streams); `'…'`, `"…"`, `$'…'` (decoded)
and backslashes quote; `#` starts a comment only at the start of a word (`hi#` is a word). The commands
inside `$(…)`, `` `…` `` and `<(…)` are read as nested token lists. What it meets but does not model
(substitutions, `${…}` other than `${NAME}`, arithmetic, line continuations, unclosed quotes, …) is
recorded in `Lexer.doubts`, and reading goes on as well as it can.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_OPERATORS = (  # longest first: bash reads the longest operator it can
    ";;&", "&>>", "<<<", "<<-",
    ";;", ";&", "||", "|&", "&&", "&>", "<<", "<>", "<&", ">>", ">&", ">|",
    ";", "|", "&", "<", ">", "(", ")",
)
_OP_CHARS = frozenset("|&;()<>")
_BLANK = " \t"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IO_NUMBER = re.compile(r"^(?:[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})$")
_PLAIN_BRACED = re.compile(r"\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])\}")
_SPECIAL_PARAMS = frozenset("@*#?$!-0123456789")
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_MAX_NESTING = 16  # substitutions inside substitutions: deeper is a doubt, and reading stops


@dataclass
class Word:
    """One word as bash's lexer reads it, with what expansion will do to it."""

    value: str  # after quote removal; an expansion is kept as written (`$HOME`)
    raw: str
    start: int
    quoted: bool = False  # some part was quoted or escaped
    expands: bool = False  # holds a `$…` expansion or a substitution
    globs: bool = False  # unquoted `*`, `?`, `[…]` or `{…}` (pathname or brace expansion)
    io: bool = False  # a file-descriptor number (`2` of `2>`, `{fd}` of `{fd}>`)


@dataclass
class Operator:
    """A control or redirection operator (a newline is one)."""

    op: str
    start: int


Token = Word | Operator


@dataclass
class Lexer:
    """Bash's lexer, without expansions: tokens, plus the commands nested in substitutions."""

    text: str
    i: int = 0
    depth: int = 0
    doubts: list[str] = field(default_factory=list)
    inner: list[list[Token]] = field(default_factory=list)  # token lists of `$(…)`, `` `…` ``, `<(…)`

    def doubt(self, why: str) -> None:
        if why not in self.doubts:
            self.doubts.append(why)

    def tokens(self, *, until_paren: bool = False) -> list[Token]:
        """Tokens up to the end (or, inside `$(`, up to its closing parenthesis)."""
        text, parens = self.text, 0
        out: list[Token] = []
        while self.i < len(text):
            c = text[self.i]
            if c in _BLANK:
                self.i += 1
            elif c == "\\" and text.startswith("\n", self.i + 1):
                self.doubt("a line continuation (backslash-newline)")
                self.i += 2
            elif c == "#":  # a comment: to the end of the line
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif c == "\n":
                out.append(Operator("\n", self.i))
                self.i += 1
            elif c in _OP_CHARS:
                start = self.i
                op = next(o for o in _OPERATORS if text.startswith(o, self.i))
                self.i += len(op)
                if op in ("<", ">") and text.startswith("(", self.i):
                    self.doubt("process substitution <(…) or >(…)")
                    self.i += 1
                    self._nested()
                    out.append(Word(text[start:self.i], text[start:self.i], start, expands=True))
                    continue
                if until_paren and op == "(":
                    parens += 1
                elif until_paren and op == ")":
                    if parens == 0:
                        return out
                    parens -= 1
                out.append(Operator(op, start))
            else:
                out.append(self._word())
        if until_paren:
            self.doubt("an unclosed parenthesis")
        return out

    def _nested(self) -> None:
        """The command inside `$(…)` / `<(…)`, read up to its closing parenthesis."""
        if self.depth >= _MAX_NESTING:
            self.doubt("substitutions nested too deeply")
            self.i = len(self.text)
            return
        self.depth += 1
        self.inner.append(self.tokens(until_paren=True))
        self.depth -= 1

    def _word(self) -> Word:
        text, start = self.text, self.i
        word = Word("", "", start)
        value: list[str] = []
        bare: list[str] = []  # the unquoted characters, for pattern and brace expansion
        while self.i < len(text):
            c = text[self.i]
            if c in _BLANK or c == "\n" or c in _OP_CHARS:
                break
            if c == "\\":
                word.quoted = True
                if self.i + 1 >= len(text):
                    self.doubt("a backslash at the end")
                    value.append("\\")
                    self.i += 1
                elif text[self.i + 1] == "\n":
                    self.doubt("a line continuation (backslash-newline)")
                    self.i += 2
                else:
                    value.append(text[self.i + 1])
                    self.i += 2
            elif c == "'":
                word.quoted = True
                end = text.find("'", self.i + 1)
                if end < 0:
                    self.doubt("an unclosed quote")
                    end = len(text)
                value.append(text[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                word.quoted = True
                self.i += 1
                value.append(self._double_quoted(word))
            elif c == "$":
                value.append(self._dollar(word, in_double=False))
            elif c == "`":
                value.append(self._backquoted(word))
            else:
                bare.append(c)
                value.append(c)
                self.i += 1
        word.value = "".join(value)
        word.raw = text[start:self.i]
        word.globs = _expands_to_names("".join(bare))
        if self.i < len(text) and text[self.i] in "<>" and _IO_NUMBER.match(word.raw):
            word.io = True
        return word

    def _double_quoted(self, word: Word) -> str:
        text = self.text
        value: list[str] = []
        while self.i < len(text):
            c = text[self.i]
            if c == '"':
                self.i += 1
                return "".join(value)
            if c == "\\" and self.i + 1 < len(text) and text[self.i + 1] in '$`"\\\n':
                if text[self.i + 1] == "\n":
                    self.doubt("a line continuation (backslash-newline)")
                else:
                    value.append(text[self.i + 1])
                self.i += 2
            elif c == "$":
                value.append(self._dollar(word, in_double=True))
            elif c == "`":
                value.append(self._backquoted(word))
            else:
                value.append(c)
                self.i += 1
        self.doubt("an unclosed quote")
        return "".join(value)

    def _dollar(self, word: Word, *, in_double: bool) -> str:
        """One `$…` construct at self.i; returns its text for the word's value."""
        text, start = self.text, self.i
        nxt = text[start + 1 : start + 2]
        if nxt == "(":
            arithmetic = text.startswith("((", start + 1)
            self.doubt("arithmetic expansion $((…))" if arithmetic else "command substitution $(…)")
            self.i += 2
            self._nested()
        elif nxt == "{":
            plain = _PLAIN_BRACED.match(text, start + 1)
            if plain:
                self.i = plain.end()
            else:
                self.doubt("a parameter expansion other than ${NAME}")
                self._skip_braces()
        elif nxt == "[":
            self.doubt("arithmetic expansion $[…]")
            end = text.find("]", start)
            self.i = len(text) if end < 0 else end + 1
        elif nxt == "'" and not in_double:
            self.i += 2
            word.quoted = True
            return self._ansi_c()
        elif nxt == '"' and not in_double:
            self.doubt('locale translation $"…"')
            self.i += 2
            word.quoted = True
            return self._double_quoted(word)
        elif nxt and nxt in _SPECIAL_PARAMS:
            self.i += 2
        elif name := _NAME.match(text, start + 1):
            self.i = name.end()
        else:  # a lone `$` is itself
            self.i += 1
            return "$"
        word.expands = True
        return text[start:self.i]

    def _skip_braces(self) -> None:
        """Past the `}` closing a `${…}` at self.i (quotes and nested substitutions followed)."""
        text, depth = self.text, 0
        while self.i < len(text):
            c = text[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "'":
                end = text.find("'", self.i + 1)
                self.i = len(text) if end < 0 else end + 1
                continue
            if c == "$" and text.startswith("(", self.i + 1):
                self.i += 2
                self._nested()
                continue
            if c == "`":
                self._backquoted(Word("", "", self.i))
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return
            self.i += 1
        self.doubt("an unclosed ${…}")

    def _backquoted(self, word: Word) -> str:
        """A `` `…` `` substitution: its command is read as a nested command."""
        self.doubt("command substitution `…`")
        text, start = self.text, self.i
        inner: list[str] = []
        self.i += 1
        while self.i < len(text) and text[self.i] != "`":
            if text[self.i] == "\\" and self.i + 1 < len(text) and text[self.i + 1] in "`$\\":
                self.i += 1
            inner.append(text[self.i])
            self.i += 1
        if self.i >= len(text):
            self.doubt("an unclosed `")
        self.i += 1
        if self.depth < _MAX_NESTING:
            sub = Lexer("".join(inner), depth=self.depth + 1)
            self.inner.append(sub.tokens())
            self.inner += sub.inner
            for why in sub.doubts:
                self.doubt(why)
        word.expands = True
        return text[start:self.i]

    def _ansi_c(self) -> str:
        """The value of `$'…'` (self.i just past the opening quote)."""
        text = self.text
        out: list[str] = []
        while self.i < len(text):
            c = text[self.i]
            if c == "'":
                self.i += 1
                decoded = "".join(out)
                if "\0" in decoded or not decoded.isascii():
                    self.doubt("a NUL or non-ASCII escape in $'…'")
                return decoded
            if c != "\\" or self.i + 1 >= len(text):
                out.append(c)
                self.i += 1
                continue
            e = text[self.i + 1]
            if e in _ANSI_SIMPLE:
                out.append(_ANSI_SIMPLE[e])
                self.i += 2
            elif e in "01234567":
                digits = re.match(r"[0-7]{1,3}", text[self.i + 1 :])
                assert digits is not None
                out.append(chr(int(digits.group(), 8) & 0xFF))
                self.i += 1 + len(digits.group())
            elif e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                digits = re.match(rf"[0-9A-Fa-f]{{1,{width}}}", text[self.i + 2 :])
                if digits is None:
                    out.append("\\" + e)
                    self.i += 2
                else:
                    out.append(chr(min(int(digits.group(), 16), 0x10FFFF)))
                    self.i += 2 + len(digits.group())
            else:
                if e == "c":
                    self.doubt("a control-character escape in $'…'")
                out.append("\\" + e)
                self.i += 2
        self.doubt("an unclosed $'…'")
        return "".join(out)


def _expands_to_names(bare: str) -> bool:
    """Whether unquoted characters make a pathname pattern (`*`, `?`, `[…]`) or a brace expansion (`{a,b}`)."""
    if "*" in bare or "?" in bare:
        return True
    if (i := bare.find("[")) >= 0 and "]" in bare[i + 1 :]:
        return True
    i, j = bare.find("{"), bare.rfind("}")
    return 0 <= i < j and ("," in bare[i:j] or ".." in bare[i:j])

