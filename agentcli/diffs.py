"""Unified diffs of one file's text, as data: what an edit will change (the approval) or changed (the transcript).

Pure and UI-agnostic, built on `difflib`. A `FileDiff` holds hunks with their line numbers and the
`+added −removed` counts of the whole change; it keeps at most `MAX_LINES` lines of hunks (a rewrite of
a big file keeps its first lines and says how many more there were). Lines are split on `\\n` only,
as a file's lines are; a last line without a line end gets unified diff's `\\ No newline at end of
file` marker. The text is kept as it is in the file: whoever shows it makes it safe for a terminal.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from difflib import SequenceMatcher
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

CONTEXT = 3  # unchanged lines around each change
MAX_LINES = 400  # hunk lines kept (headers not counted); the rest is counted in `omitted`
NO_NEWLINE = "\\ No newline at end of file"
# difflib compares the changed middle (after the common start and end are cut off) line by line; its
# worst case grows with the product of the two sides' lengths. Up to this product it runs without its
# "junk" heuristic (the best diff); beyond, with it (fast); past `_WHOLE_LINES` lines on a side the
# middle is shown as one replacement (still a correct diff, just not the smallest).
_EXACT_PRODUCT = 10_000_000
_WHOLE_LINES = 200_000

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
    path: str, old: str, new: str, *, created: bool = False, context: int = CONTEXT, max_lines: int = MAX_LINES
) -> FileDiff:
    """The unified diff from `old` to `new` (the whole file's text before and after) of the file at `path`."""
    a, b = split_lines(old), split_lines(new)
    codes = _opcodes(a, b)
    added = sum(j2 - j1 for tag, _, _, j1, j2 in codes if tag in ("replace", "insert"))
    removed = sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag in ("replace", "delete"))
    hunks: list[DiffHunk] = []
    kept = omitted = 0
    for group in _grouped(codes, context):
        lines = _hunk_lines(group, a, b)
        room = max_lines - kept
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
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    codes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    if not a_mid and not b_mid:
        middle: list[Opcode] = []
    elif not a_mid:
        middle = [("insert", 0, 0, 0, len(b_mid))]
    elif not b_mid:
        middle = [("delete", 0, len(a_mid), 0, 0)]
    elif max(len(a_mid), len(b_mid)) > _WHOLE_LINES:
        middle = [("replace", 0, len(a_mid), 0, len(b_mid))]
    else:
        exact = len(a_mid) * len(b_mid) <= _EXACT_PRODUCT
        middle = [(tag, i1, i2, j1, j2) for tag, i1, i2, j1, j2
                  in SequenceMatcher(None, a_mid, b_mid, autojunk=not exact).get_opcodes()]
    codes += [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle]
    if tail:
        codes.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return codes


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
