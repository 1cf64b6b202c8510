"""A glob matcher that no pattern or path can make slow (the syntax is described in `tools.paths`).

Patterns come from the model and paths from the workspace, so a backtracking regex such as
`(?:.*/)?(?:.*/)?…x` or `[^/]*a[^/]*a…b` could freeze the process. Instead:

1. the pattern is read into tokens, `{a,b}` giving alternatives (expanded, at most `MAX_ALTERNATIVES`);
2. `**` that may span folders is rewritten into whole-segment wildcards, so each alternative is a
   list of single-segment patterns and "zero or more segments" markers;
3. a segment is matched by a regex built like CPython's `fnmatch` (atomic groups `(?>.*?X)`:
   no backtracking between stars), and the fixed runs of segments between markers are found
   leftmost, which is exact because they have a fixed length.

A pattern that would expand into more alternatives runs on a small Thompson NFA instead
(time linear in path length × pattern length). Either way a match costs about
len(pattern) × len(path) steps at most.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

MAX_ALTERNATIVES = 64

# Tokens: ("lit", c) ("any1",) ("cls", regex) ("star",) [^/]* ("gany",) .* ("gslash",) (?:.*/)? ("slash",)
Token = tuple[str, ...]
Piece = Token | list[list[Token]]  # a token, or the options of one `{a,b}`
STAR: Token = ("star",)
GANY: Token = ("gany",)
GSLASH: Token = ("gslash",)
SLASH: Token = ("slash",)


def _tokenize(pattern: str) -> list[Piece]:
    """Pieces of `pattern`, read the way the old regex translation read it."""
    out: list[Piece] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                j = i + 2
                if at_start and pattern.startswith("/", j):
                    out.append(GSLASH)  # `**/`: zero or more whole segments
                    i = j + 1
                    continue
                out.append(GANY)
                i = j
                continue
            out.append(STAR)
        elif c == "?":
            out.append(("any1",))
        elif c == "[":
            start = i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1
            end = pattern.find("]", start + 1)  # a `]` right after `[` (or `[!`) is literal
            token = _class(pattern[i + 1 : end]) if end != -1 else None
            if token is None:
                out.append(("lit", c))
            else:
                out.append(token)
                i = end
        elif c == "{":
            end = pattern.find("}", i)
            if end == -1 or "{" in pattern[i + 1 : end]:
                out.append(("lit", c))
            else:
                out.append([_flat(_tokenize(opt)) for opt in pattern[i + 1 : end].split(",")])
                i = end
        else:
            out.append(SLASH if c == "/" else ("lit", c))
        i += 1
    return out


def _class(body: str) -> Token | None:
    if body[:1] in ("!", "^"):
        body = "^" + body[1:]
    text = "[" + body.replace("\\", "\\\\") + "]"
    try:
        re.compile(text)
    except re.error:
        return None
    return ("cls", text)


def _flat(pieces: list[Piece]) -> list[Token]:
    """Options never hold braces (a `{` inside one makes the outer brace literal)."""
    return [p for p in pieces if isinstance(p, tuple)]


# ---- the fast path: segments ---------------------------------------------------------------------


class _TooMany(Exception):
    pass


def _alternatives(pieces: list[Piece]) -> list[list[Token]]:
    """Every token list the pieces stand for (brace product), capped."""
    alts: list[list[Token]] = [[]]
    for piece in pieces:
        if isinstance(piece, tuple):
            for alt in alts:
                alt.append(piece)
            continue
        if len(alts) * len(piece) > MAX_ALTERNATIVES:
            raise _TooMany
        alts = [alt + option for alt in alts for option in piece]
    return alts


def _normalize(tokens: list[Token], budget: list[int]) -> list[list[Token]]:
    """Rewrite `.*` and mid-segment `(?:.*/)?` into segment-level forms (same language)."""
    for index, token in enumerate(tokens):
        boundary = index == 0 or tokens[index - 1] in (SLASH, GSLASH)
        if token == GANY:  # .* == [^/]* | [^/]*/(?:.*/)?[^/]*
            options = [[STAR], [STAR, SLASH, GSLASH, STAR]]
        elif token == GSLASH and not boundary:  # (?:.*/)? == "" | .*/
            options = [[], [GANY, SLASH]]
        else:
            continue
        budget[0] -= 1
        if budget[0] < 0:
            raise _TooMany
        head, tail = tokens[:index], tokens[index + 1 :]
        out: list[list[Token]] = []
        for option in options:
            out.extend(_normalize(head + option + tail, budget))
            if len(out) > MAX_ALTERNATIVES:
                raise _TooMany
        return out
    return [tokens]


def _segment_regex(tokens: list[Token]) -> re.Pattern[str]:
    """One path segment's regex, fnmatch-style: `a(?>.*?b).*c` (no backtracking between stars)."""
    chunks: list[list[str]] = [[]]
    for token in tokens:
        if token == STAR:
            if chunks[-1] or len(chunks) == 1:
                chunks.append([])
            continue
        kind = token[0]
        chunks[-1].append(re.escape(token[1]) if kind == "lit" else "." if kind == "any1" else token[1])
    parts = ["".join(chunk) for chunk in chunks]
    if len(parts) == 1:
        return re.compile(parts[0], re.DOTALL)
    middle = "".join(f"(?>.*?{part})" for part in parts[1:-1] if part)
    return re.compile(parts[0] + middle + ".*" + parts[-1], re.DOTALL)


_Group = list[re.Pattern[str]]


def _groups(tokens: list[Token]) -> list[_Group]:
    """Runs of single-segment regexes, separated by "zero or more segments"."""
    groups: list[_Group] = [[]]
    current: list[Token] = []
    for token in tokens:
        if token == SLASH:
            groups[-1].append(_segment_regex(current))
            current = []
        elif token == GSLASH:  # always at a boundary here: `current` is empty
            if groups[-1] or len(groups) == 1:
                groups.append([])
        else:
            current.append(token)
    groups[-1].append(_segment_regex(current))
    return groups


def _run_at(group: _Group, parts: Sequence[str], at: int) -> bool:
    return all(regex.fullmatch(parts[at + k]) is not None for k, regex in enumerate(group))


def _match_groups(groups: list[_Group], parts: Sequence[str]) -> bool:
    n = len(parts)
    if len(groups) == 1:
        return len(groups[0]) == n and _run_at(groups[0], parts, 0)
    first, last = groups[0], groups[-1]
    end = n - len(last)
    if len(first) > end or not _run_at(first, parts, 0) or not _run_at(last, parts, end):
        return False
    pos = len(first)
    for group in groups[1:-1]:  # leftmost is exact: each run has a fixed number of segments
        while pos + len(group) <= end and not _run_at(group, parts, pos):
            pos += 1
        if pos + len(group) > end:
            return False
        pos += len(group)
    return True


# ---- the fallback: a Thompson NFA over characters -------------------------------------------------


class _Nfa:
    """Pike-VM simulation: a set of program positions per character, never backtracking."""

    def __init__(self, pieces: list[Piece]) -> None:
        self.prog: list[tuple[str, object, object]] = []
        self._emit_seq(pieces)
        self.prog.append(("match", None, None))

    def _emit_seq(self, pieces: Sequence[Piece]) -> None:
        for piece in pieces:
            if isinstance(piece, list):
                self._emit_alt(piece)
            else:
                self._emit(piece)

    def _emit_alt(self, options: list[list[Token]]) -> None:
        jumps: list[int] = []
        for k, option in enumerate(options):
            split = len(self.prog)
            if k < len(options) - 1:
                self.prog.append(("split", split + 1, None))
            self._emit_seq(option)
            if k < len(options) - 1:
                jumps.append(len(self.prog))
                self.prog.append(("jmp", None, None))
                self.prog[split] = ("split", split + 1, len(self.prog))
        for at in jumps:
            self.prog[at] = ("jmp", len(self.prog), None)

    def _loop(self, test: str) -> None:  # (test)*
        start = len(self.prog)
        self.prog.append(("split", start + 1, start + 3))
        self.prog.append(("char", test, None))
        self.prog.append(("jmp", start, None))

    def _emit(self, token: Token) -> None:
        kind = token[0]
        if kind in ("lit", "slash"):
            self.prog.append(("char", "=", "/" if kind == "slash" else token[1]))
        elif kind == "any1":
            self.prog.append(("char", "notslash", None))
        elif kind == "cls":
            self.prog.append(("char", "cls", re.compile(token[1], re.DOTALL)))
        elif token == STAR:
            self._loop("notslash")
        elif token == GANY:
            self._loop("any")
        else:  # GSLASH: (?:.*/)?
            split = len(self.prog)
            self.prog.append(("split", split + 1, None))
            self._loop("any")
            self.prog.append(("char", "=", "/"))
            self.prog[split] = ("split", split + 1, len(self.prog))

    def _close(self, pcs: list[int]) -> list[int]:
        seen: set[int] = set()
        out: list[int] = []
        stack = list(reversed(pcs))
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            op, a, b = self.prog[pc]
            if op == "jmp":
                stack.append(a)  # type: ignore[arg-type]
            elif op == "split":
                stack.extend((b, a))  # type: ignore[arg-type]
            else:
                out.append(pc)
        return out

    def fullmatch(self, text: str) -> bool:
        states = self._close([0])
        for ch in text:
            nxt: list[int] = []
            for pc in states:
                op, test, arg = self.prog[pc]
                if op != "char":
                    continue
                if (
                    test == "any"
                    or (test == "notslash" and ch != "/")
                    or (test == "=" and ch == arg)
                    or (test == "cls" and arg.fullmatch(ch) is not None)  # type: ignore[attr-defined]
                ):
                    nxt.append(pc + 1)
            if not nxt:
                return False
            states = self._close(nxt)
        return any(self.prog[pc][0] == "match" for pc in states)


# ---- the public matcher --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GlobMatcher:
    """A compiled glob: `fullmatch(rel)` says whether the whole path matches."""

    pattern: str
    forms: tuple[list[_Group], ...] | None
    nfa: _Nfa | None

    def fullmatch(self, rel: str) -> bool:
        """Whether `rel` (a `/`-separated path) matches the whole pattern."""
        if self.forms is None:
            assert self.nfa is not None
            return self.nfa.fullmatch(rel)
        parts = rel.split("/")
        return any(_match_groups(groups, parts) for groups in self.forms)


@lru_cache(maxsize=512)
def compile_glob(pattern: str) -> GlobMatcher:
    """Compile a glob (with `**` and `{a,b}`) into a matcher that cannot backtrack."""
    pieces = _tokenize(pattern)
    try:
        budget = [4 * MAX_ALTERNATIVES]
        forms: list[list[_Group]] = []
        for alt in _alternatives(pieces):
            for tokens in _normalize(alt, budget):
                forms.append(_groups(tokens))
                if len(forms) > MAX_ALTERNATIVES:
                    raise _TooMany
        return GlobMatcher(pattern, tuple(forms), None)
    except _TooMany:
        return GlobMatcher(pattern, None, _Nfa(pieces))
