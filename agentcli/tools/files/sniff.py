"""Whether a file is binary: the one test used by Read, Edit, Grep and Grep's worker process.

Standard library only: `grep_worker` runs it in a child process that must start quickly
(no pydantic, nothing of the tool base).
"""

from __future__ import annotations

from pathlib import Path

SNIFF_BYTES = 8192  # how much of a file's start is looked at


def looks_binary(head: bytes) -> bool:
    """Whether a file starting with `head` is binary: a NUL byte in its first 8 KiB (git's heuristic)."""
    return b"\x00" in head[:SNIFF_BYTES]


def is_binary_file(path: Path) -> bool:
    """Whether the file at `path` is binary; an unreadable file is not (its reader reports the error)."""
    try:
        with path.open("rb") as fh:
            return looks_binary(fh.read(SNIFF_BYTES))
    except OSError:
        return False
