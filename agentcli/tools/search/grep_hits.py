"""What one Grep search found: each file's hits, kept within a memory bound, put in ripgrep's path order.

A file's hits are a count and, for the files among the first in path order, its lines: rg's raw `N:text`
block, parsed only when shown (`FileHits.lines`), or the fallback's lines as they came. `Hits` takes the
files in whatever order the child finds them and drops the lines nobody will see.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter

from agentcli.tools.search.child import decode

MAX_LINE_CHARS = 500  # a longer line is cut, with "…"
_KEEP_BYTES = 16 << 20  # lines kept for showing, at most (past it, only the first files keep theirs)
_OMITTED = re.compile(rb" \[\.\.\. (?:omitted end of long line|\d+ more matche?s?)\]$")
_LINE = re.compile(rb"(\d+)([:-])")


@dataclass(frozen=True, slots=True)
class Line:
    """One output line of content mode (a match, or context around one)."""

    path: str
    number: int
    is_match: bool
    text: str
    cut: bool = False


def path_key(path: str) -> str:
    """ripgrep's `--sort path` order: folder by folder, names compared as text. A path cannot hold NUL,
    so with each `/` as NUL (below every character) plain text order is exactly that order."""
    return path.replace("/", "\x00")


class FileHits:
    """One file's hits: `count` lines (matching lines, or output lines in content mode) and, for files
    among the first ones in path order, the lines themselves."""

    __slots__ = ("_body", "_lines", "_start", "count", "key", "path")

    def __init__(
        self, path: str, count: int, body: bytes | None = None, lines: list[Line] | None = None, start: int = 0
    ) -> None:
        self.path = path
        self.key = path.replace("/", "\x00")  # path_key, inline: one call less for each of many files
        self.count = count
        self._body = body  # rg's raw `N:text` lines from offset `start`, parsed on demand
        self._start = start
        self._lines = lines

    def lines(self) -> list[Line]:
        """The file's output lines (content mode); empty when they were counted only."""
        if self._lines is None:
            self._lines = [] if self._body is None else parse_lines(self.path, self._body[self._start :])
            self._body = None
        return self._lines

    def _sized(self) -> int:
        return len(self._body) if self._body is not None else 0 if self._lines is None else 64 * len(self._lines)

    def _drop(self) -> None:
        self._body = self._lines = None


_by_key = attrgetter("key")


class Hits:
    """Files as they arrive (in any order), keeping the lines of only as many files as could be shown.

    Memory stays bounded: past `_KEEP_BYTES` of kept lines, the files that sort after the first
    `wanted` lines lose their lines (their counts stay), and later files past that point keep none.
    """

    def __init__(self, keep: Callable[[str], bool] | None, wanted: int) -> None:
        self.keep = keep
        self.wanted = wanted
        self.files: list[FileHits] = []
        self._bytes = 0
        self._cut: str | None = None  # files sorting after this key keep no lines

    def add(self, hit: FileHits) -> None:
        """Take one file's hits (unless `keep` drops it)."""
        self.add_all([hit])

    def add_all(self, hits: list[FileHits]) -> None:
        """Take these files' hits (those `keep` accepts); past `_KEEP_BYTES` of lines, prune."""
        if self.keep is not None:
            keep = self.keep
            hits = [hit for hit in hits if keep(hit.path)]
        for hit in hits:
            if hit._body is None and hit._lines is None:
                continue
            if self.wanted <= 0 or (self._cut is not None and hit.key > self._cut):
                hit._drop()
            else:
                self._bytes += hit._sized()
        self.files += hits
        if self._bytes > _KEEP_BYTES:
            self._prune()

    def _prune(self) -> None:
        self.files.sort(key=_by_key)
        seen = kept = 0
        for hit in self.files:
            if seen >= self.wanted:
                hit._drop()
            else:
                seen += hit.count
                kept += hit._sized()
                self._cut = hit.key
        self._bytes = kept

    def in_order(self) -> list[FileHits]:
        """Every file taken, in path order."""
        self.files.sort(key=_by_key)
        return self.files


def parse_lines(path: str, body: bytes) -> list[Line]:
    """rg's `N:text` (match) / `N-text` (context) lines of one file."""
    out: list[Line] = []
    for raw in body.split(b"\n"):
        match = _LINE.match(raw)
        if match is None:
            continue
        text_bytes = raw[match.end() :]
        cut = _OMITTED.search(text_bytes) is not None
        if cut:
            text_bytes = _OMITTED.sub(b"", text_bytes)
        text = decode(text_bytes).rstrip("\r")
        if len(text) > MAX_LINE_CHARS:
            text, cut = text[:MAX_LINE_CHARS], True
        out.append(Line(path, int(match.group(1)), match.group(2) == b":", text, cut))
    return out
