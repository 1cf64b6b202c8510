"""Reading Grep's child output into `Hits`, batch by batch: ripgrep's three shapes, or the fallback's JSON lines.

A batch may end anywhere, even inside a path that holds a newline or an empty line: each parser keeps the
unfinished record and puts it before the next batch.
"""

from __future__ import annotations

import json

from agentcli.tools.base import ToolError
from agentcli.tools.search.child import decode_path
from agentcli.tools.search.grep_hits import FileHits, Hits, Line

_MAX_RECORD = 1 << 20  # a record longer than this means the child misbehaves


class RgParser:
    """rg's output: `path NUL` (files), `path NUL count LF` (count), or per file `path NUL lines` blocks
    separated by an empty line (`--heading` content); a path may hold a newline, even an empty line."""

    def __init__(self, content: bool, files_only: bool, hits: Hits) -> None:
        self.hits = hits
        self.content = content
        self.files_only = files_only
        self._pending = b""

    def feed(self, data: bytes) -> None:
        """Take the next batch of rg's output."""
        data = self._pending + data if self._pending else data
        if self.content:
            cut = data.rfind(b"\n\n")
            if cut == -1:
                self._pending = data
                return
            self._pending = _rg_blocks(data[:cut], self.hits) + data[cut + 2 :]
        else:
            cut = data.rfind(b"\x00" if self.files_only else b"\n") + 1
            done, pending = data[:cut], data[cut:]
            if self.files_only:
                self.hits.add_all([FileHits(path, 1) for path in decode_path(done).split("\x00")[:-1]])
            else:
                pending = _rg_counts(done, self.hits) + pending
            self._pending = pending
            if len(pending) > _MAX_RECORD:
                raise ToolError("Grep failed: the search printed a line longer than 1 MiB")

    def close(self) -> None:
        """The end of rg's output: its last record has no separator after it."""
        pending, self._pending = self._pending, b""
        if not pending:
            return
        if self.content:
            _rg_blocks(pending.rstrip(b"\n"), self.hits)
        elif self.files_only:
            self.feed(pending.rstrip(b"\x00") + b"\x00")
        else:
            _rg_counts(pending + b"\n", self.hits)


def _rg_blocks(data: bytes, hits: Hits) -> bytes:
    """Add the `path NUL lines` blocks of `data` (whole blocks, separated by empty lines); the start of
    a path cut by an empty line in it comes back, to go before the data that follows."""
    carry = b""
    blocks: list[bytes] = []
    starts: list[int] = []
    for block in data.split(b"\n\n"):
        if carry:
            block = carry + block
        nul = block.find(b"\x00")
        if nul == -1:  # a path with an empty line in it: the rest of the block follows
            carry = block + b"\n\n"
            continue
        carry = b""
        blocks.append(block)
        starts.append(nul)
    if not blocks:
        return carry
    # All the paths decoded at once (NUL cannot be in one): a call less for each of many files.
    paths = decode_path(b"\x00".join([block[:nul] for block, nul in zip(blocks, starts, strict=True)])).split("\x00")
    hits.add_all([
        FileHits(path, block.count(b"\n", nul) + 1, body=block, start=nul + 1)
        for path, block, nul in zip(paths, blocks, starts, strict=True)
    ])  # fmt: skip
    return carry


def _rg_counts(data: bytes, hits: Hits) -> bytes:
    """Add the `path NUL count` lines of `data` (whole lines); the start of a path cut by a newline in it
    comes back, to go before the data that follows."""
    found: list[FileHits] = []
    carry = ""
    for line in decode_path(data).split("\n")[:-1]:  # `data` ends with a newline: nothing after it
        if carry:
            line = carry + line
        path, nul, count = line.rpartition("\x00")
        if not nul:
            carry = line + "\n"
            continue
        carry = ""
        try:
            found.append(FileHits(path, int(count)))
        except ValueError:
            continue
    hits.add_all(found)
    return carry.encode()


class WorkerParser:
    """The fallback's JSON lines, in path order: `{"p", "n", "m", "t", "c"}` (content) or `{"p", "k"}` (count)."""

    def __init__(self, content: bool, hits: Hits) -> None:
        self.hits = hits
        self.content = content
        self._current: FileHits | None = None
        self._pending = b""

    def feed(self, data: bytes) -> None:
        """Take the next batch of the fallback's output."""
        data = self._pending + data if self._pending else data
        cut = data.rfind(b"\n")
        self._pending = data[cut + 1 :]
        if len(self._pending) > _MAX_RECORD:
            raise ToolError("Grep failed: the search printed a line longer than 1 MiB")
        for raw in data[: cut + 1].split(b"\n"):
            try:
                item = json.loads(raw)
            except ValueError:
                continue
            if "k" in item:
                self.hits.add(FileHits(item["p"], item["k"]))
                continue
            current = self._current
            if current is None or current.path != item["p"]:
                if current is not None:
                    self.hits.add(current)
                current = self._current = FileHits(item["p"], 0, lines=[])
            current.count += 1
            current.lines().append(Line(item["p"], item["n"], item["m"], item["t"], item["c"]))

    def close(self) -> None:
        """The end of the fallback's output: its last file's lines."""
        if self._pending:
            self.feed(b"\n")
        if self._current is not None:
            self.hits.add(self._current)
            self._current = None
