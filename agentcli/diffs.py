"""Unified diffs of one file's text, as data: what an edit will change (the approval) or changed (the transcript).

Pure and UI-agnostic, built on `difflib`. A `FileDiff` holds hunks with their line numbers and the
`+added −removed` counts of the whole change; it keeps at most `MAX_LINES` lines of hunks (a rewrite of
a big file keeps its first lines and says how many more there were), or all of them for an approval's
preview. Lines are split on `\\n` only, as a file's lines are; a last line without a line end gets unified
diff's `\\ No newline at end of file` marker. The text is kept as it is in the file: whoever shows it makes it
safe for a terminal.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from difflib import SequenceMatcher
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

CONTEXT = 3  # unchanged lines around each change
MAX_LINES = 400  # hunk lines kept (headers not counted); the rest is counted in `omitted`
NO_NEWLINE = "\\ No newline at end of file"
# difflib's matcher grows with the product of the two sides' lengths (and worse with many matching
# blocks), so it is only given stretches up to this product. A bigger changed stretch is first cut at
# lines that occur once in each side and match in order (patience diff's anchors: most lines of code);
# a stretch still too big without such lines shows as one replacement (a correct diff, not the smallest).
MATCH_LIMIT = 4_000_000

Opcode = tuple[str, int, int, int, int]


class DiffHunk(BaseModel):
    """One `@@ -old_start,old_count +new_start,new_count @@` hunk.

    `old_start` / `new_start` are the 1-based numbers of the hunk's first line on each side (for an empty
    side: the number the next line has). Each line starts with ` ` (unchanged), `-` (removed), `+`
    (added), or is `NO_NEWLINE` (about the line before it); it carries no line end.
    """

    model_config = ConfigDict(frozen=True)

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]

    def header(self) -> str:
        """`@@ -12,3 +12,4 @@` in unified diff's numbering (an empty side names the line before it)."""
        return f"@@ -{_range(self.old_start, self.old_count)} +{_range(self.new_start, self.new_count)} @@"


class DiffLine(NamedTuple):
    """One line to show: its kind, its text (without the +/- sign) and its old and new line numbers."""

    kind: Literal["hunk", "context", "removed", "added", "no_newline"]
    text: str
    old: int | None
    new: int | None


class FileDiff(BaseModel):
    """The change to one file: counts of the whole change, and its first `MAX_LINES` hunk lines."""

    model_config = ConfigDict(frozen=True)

    path: str  # workspace-relative
    added: int
    removed: int
    hunks: tuple[DiffHunk, ...] = ()
    omitted: int = 0  # hunk lines past the cap, not kept
    created: bool = False  # the file does not exist before the change

    @property
    def stat(self) -> str:
        """`+12 −3` (with a true minus sign, as the transcript shows it)."""
        return f"+{self.added} \u2212{self.removed}"

    def lines(self) -> Iterator[DiffLine]:
        """The kept lines with their numbers, a `hunk` line (the header) before each hunk."""
        for hunk in self.hunks:
            yield DiffLine("hunk", hunk.header(), None, None)
            old, new = hunk.old_start, hunk.new_start
            for line in hunk.lines:
                sign, text = line[:1], line[1:]
                if line == NO_NEWLINE:
                    yield DiffLine("no_newline", line, None, None)
                elif sign == "-":
                    yield DiffLine("removed", text, old, None)
                    old += 1
                elif sign == "+":
                    yield DiffLine("added", text, None, new)
                    new += 1
                else:
                    yield DiffLine("context", text, old, new)
                    old, new = old + 1, new + 1

    def unified(self) -> str:
        """The diff as `diff -u` / `git diff` text (`--- a/path`, `+++ b/path`, hunks), cut where the data is cut."""
        old = "/dev/null" if self.created else f"a/{self.path}"
        out = [f"--- {old}", f"+++ b/{self.path}"]
        for hunk in self.hunks:
            out.append(hunk.header())
            out.extend(hunk.lines)
        text = "\n".join(out) + "\n"
        return text + (f"… {self.omitted} more lines\n" if self.omitted else "")

    def head(self, max_lines: int) -> FileDiff:
        """The diff cut to its first `max_lines` hunk lines (the rest counted in `omitted`); itself when it fits."""
        hunks: list[DiffHunk] = []
        kept, omitted = 0, self.omitted
        for hunk in self.hunks:
            lines = list(hunk.lines[: max(max_lines - kept, 0)])
            omitted += len(hunk.lines) - len(lines)
            if lines:
                hunks.append(_hunk(hunk.old_start, hunk.new_start, lines))
                kept += len(lines)
        if omitted == self.omitted:
            return self
        return self.model_copy(update={"hunks": tuple(hunks), "omitted": omitted})


def _range(start: int, count: int) -> str:
    if count == 1:
        return str(start)
    return f"{start - 1 if count == 0 else start},{count}"


def split_lines(text: str) -> list[str]:
    """The lines of a file's text, each with its `\\n` (the last one without, when the text does not end in one).

    Unlike `str.splitlines`, only `\\n` ends a line (form feeds and U+2028 are text in a file).
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def diff_text(
    path: str, old: str, new: str, *, created: bool = False, context: int = CONTEXT, max_lines: int | None = MAX_LINES
) -> FileDiff:
    """The unified diff from `old` to `new` (the whole file's text before and after) of the file at `path`; every
    line of it with `max_lines=None` (an approval shows all it approves)."""
    a, b = split_lines(old), split_lines(new)
    codes = _opcodes(a, b)
    added = sum(j2 - j1 for tag, _, _, j1, j2 in codes if tag in ("replace", "insert"))
    removed = sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag in ("replace", "delete"))
    hunks: list[DiffHunk] = []
    kept = omitted = 0
    for group in _grouped(codes, context):
        lines = _hunk_lines(group, a, b)
        room = len(lines) if max_lines is None else max_lines - kept
        if len(lines) > room:
            omitted += len(lines) - room
            lines = lines[:room]
        if lines:
            hunks.append(_hunk(group[0][1] + 1, group[0][3] + 1, lines))
            kept += len(lines)
    return FileDiff(path=path, added=added, removed=removed, hunks=tuple(hunks), omitted=omitted, created=created)


def _hunk(old_start: int, new_start: int, lines: list[str]) -> DiffHunk:
    """A hunk from its lines (its counts read off them, so a hunk cut at the cap stays a valid one)."""
    old_count = sum(1 for line in lines if line != NO_NEWLINE and line[:1] in (" ", "-"))
    new_count = sum(1 for line in lines if line != NO_NEWLINE and line[:1] in (" ", "+"))
    return DiffHunk(old_start=old_start, old_count=old_count, new_start=new_start, new_count=new_count,
                    lines=tuple(lines))


def _hunk_lines(group: Sequence[Opcode], a: Sequence[str], b: Sequence[str]) -> list[str]:
    out: list[str] = []

    def add(sign: str, lines: Sequence[str]) -> None:
        for line in lines:
            out.append(sign + line.removesuffix("\n"))
            if not line.endswith("\n"):
                out.append(NO_NEWLINE)

    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            add(" ", a[i1:i2])
            continue
        add("-", a[i1:i2])
        add("+", b[j1:j2])
    return out


def _opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """difflib's opcodes for `a` → `b`, with the common start and end cut off before difflib sees them."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    codes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    codes += _middle(a, b, head, len(a) - tail, head, len(b) - tail)
    if tail:
        codes.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return _merged(codes)


def _middle(a: Sequence[str], b: Sequence[str], a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> list[Opcode]:
    """Opcodes for `a[a_lo:a_hi]` → `b[b_lo:b_hi]` in absolute positions; no stretch difflib is given is too big."""
    codes: list[Opcode] = []
    stack = [(a_lo, a_hi, b_lo, b_hi)]
    while stack:
        i1, i2, j1, j2 = stack.pop()
        if i1 == i2 and j1 == j2:
            continue
        if i1 == i2:
            codes.append(("insert", i1, i1, j1, j2))
        elif j1 == j2:
            codes.append(("delete", i1, i2, j1, j1))
        elif (i2 - i1) * (j2 - j1) <= MATCH_LIMIT:
            matcher = SequenceMatcher(None, a[i1:i2], b[j1:j2], autojunk=False)
            codes += [(tag, x1 + i1, x2 + i1, y1 + j1, y2 + j1) for tag, x1, x2, y1, y2 in matcher.get_opcodes()]
        else:
            anchors = _anchors(a, b, i1, i2, j1, j2)
            if not anchors:
                codes.append(("replace", i1, i2, j1, j2))
                continue
            gaps: list[tuple[int, int, int, int]] = []
            x, y = i1, j1
            for ai, bj in anchors:
                gaps.append((x, ai, y, bj))
                codes.append(("equal", ai, ai + 1, bj, bj + 1))
                x, y = ai + 1, bj + 1
            gaps.append((x, i2, y, j2))
            stack += gaps
    return sorted(codes, key=lambda code: (code[1], code[3]))


def _anchors(a: Sequence[str], b: Sequence[str], i1: int, i2: int, j1: int, j2: int) -> list[tuple[int, int]]:
    """Lines that occur once in `a[i1:i2]` and once in `b[j1:j2]`, the longest run of them in the same order."""
    seen_a: dict[str, int] = {}
    for i in range(i1, i2):
        seen_a[a[i]] = -1 if a[i] in seen_a else i
    seen_b: dict[str, int] = {}
    for j in range(j1, j2):
        seen_b[b[j]] = -1 if b[j] in seen_b else j
    pairs = [(i, seen_b[line]) for line, i in seen_a.items() if i >= 0 and seen_b.get(line, -1) >= 0]
    pairs.sort()
    # The longest increasing run of b positions (patience sorting, O(n log n)).
    tops: list[int] = []  # b position ending the best run of each length
    ends: list[int] = []  # index into pairs of that run's last pair
    back: list[int] = []  # each pair's predecessor in its run
    for k, (_, j) in enumerate(pairs):
        n = bisect_left(tops, j)
        if n == len(tops):
            tops.append(j)
            ends.append(k)
        else:
            tops[n], ends[n] = j, k
        back.append(ends[n - 1] if n else -1)
    run: list[tuple[int, int]] = []
    k = ends[-1] if ends else -1
    while k >= 0:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


def _merged(codes: list[Opcode]) -> list[Opcode]:
    """Adjacent opcodes of one kind joined (anchors and their neighbours become one `equal`)."""
    out: list[Opcode] = []
    for code in codes:
        if out and out[-1][0] == code[0] and out[-1][2] == code[1] and out[-1][4] == code[3]:
            tag, i1, _, j1, _ = out[-1]
            out[-1] = (tag, i1, code[2], j1, code[4])
        else:
            out.append(code)
    return out


def _grouped(codes: list[Opcode], context: int) -> list[list[Opcode]]:
    """The changes in groups with up to `context` unchanged lines around each (difflib's grouping)."""
    if not any(tag != "equal" for tag, *_ in codes):
        return []
    codes = list(codes)
    tag, i1, i2, j1, j2 = codes[0]
    if tag == "equal":
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    tag, i1, i2, j1, j2 = codes[-1]
    if tag == "equal":
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups
