"""What the prompt completes: `/command` at the start of a prompt, `@path` anywhere (pure functions, and the
workspace's path index).

`token_at` finds the word being completed around the cursor; `command_candidates` and `rank_paths` list what
it may become. Paths come from `PathIndex`: the files the Glob tool's walk sees (`tools.walk.Walk`: every
`.gitignore` honoured, `.git`/`node_modules`/`.venv` skipped, no link out of the workspace followed) and their
folders, minus what a `[permissions] deny` rule keeps from Read. It is built in a worker thread and rebuilt
when it is older than `PathIndex.max_age` seconds.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.frontend import quote_mention
from agentcli.tools import Walk

MAX_SHOWN = 8
MAX_INDEXED = 20_000  # files in the index; a larger workspace completes from the first ones in path order
_OPENERS = " \t\n([{"


@dataclass(frozen=True, slots=True)
class Token:
    """The word being completed: `/he` (a command) or `@src/au` (a path), its span and what follows the sigil."""

    kind: Literal["command", "path"]
    start: int
    end: int
    query: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """One completion: what the list shows, what replaces the token, and a note beside it."""

    label: str
    insert: str
    detail: str = ""
    final: bool = True  # False for a folder: completion goes on inside it


def token_at(text: str, cursor: int) -> Token | None:
    """The command or `@path` word the cursor (an index into `text`) is in or just after; None otherwise."""
    cursor = max(0, min(cursor, len(text)))
    if text.startswith("/") and not any(ch.isspace() for ch in text[:cursor]):
        end = next((i for i, ch in enumerate(text) if ch.isspace()), len(text))
        return Token("command", 0, end, text[1:cursor])
    quoted = text.rfind('@"', 0, cursor)
    if quoted >= 0 and '"' not in text[quoted + 2 : cursor] and "\n" not in text[quoted:cursor] and (
        quoted == 0 or text[quoted - 1] in _OPENERS
    ):  # `@"my no` (a path with spaces, being typed)
        close = text.find('"', cursor)
        newline = text.find("\n", cursor)
        end = close + 1 if close >= 0 and (newline < 0 or close < newline) else cursor
        return Token("path", quoted, end, text[quoted + 2 : cursor])
    start = cursor
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    word = text[start:cursor]
    at = word.find("@")
    while at > 0 and word[at - 1] not in _OPENERS:  # `user@host` is no mention; `(@src` is
        at = word.find("@", at + 1)
    if at < 0:
        return None
    start += at
    end = cursor
    while end < len(text) and not text[end].isspace():
        end += 1
    query = text[start + 1 : cursor]
    if query.startswith('"'):
        query = query[1:]
    return Token("path", start, end, query)


def command_candidates(query: str, commands: Mapping[str, str]) -> list[Candidate]:
    """Slash commands starting with `query`, with their one-line help."""
    prefix = query.lower()
    return [Candidate(f"/{name}", f"/{name} ", help_text) for name, help_text in commands.items()
            if name.startswith(prefix)]


def _subsequence(needle: str, hay: str) -> bool:
    it = iter(hay)
    return all(ch in it for ch in needle)


def rank_paths(query: str, entries: list[str], limit: int = MAX_SHOWN) -> list[str]:
    """The entries (files, and folders ending in `/`) that best complete `query`, best first.

    Order: paths starting with it (the folder's own entries before deeper ones), then those whose name
    starts with it, then those containing it, then those holding its letters in order (fuzzy).
    """
    q = query.casefold()
    last = q.rsplit("/", 1)[-1]
    scored: list[tuple[int, int, int, str]] = []
    fuzzy: list[str] = []
    for entry in entries:
        low = entry.casefold()
        if low == q:
            continue  # already complete
        if not q:
            if "/" not in entry.rstrip("/"):
                scored.append((0, 0, 0, entry))  # the top level, in name order
            continue
        if low.startswith(q):
            tier = 0 if "/" not in low[len(q) :].rstrip("/") else 2
        elif last and low.rstrip("/").rsplit("/", 1)[-1].startswith(last) and q.rsplit("/", 1)[0] in low:
            tier = 1
        elif q in low:
            tier = 3
        else:
            fuzzy.append(entry)
            continue
        scored.append((tier, entry.count("/"), len(entry), entry))
    if len(scored) < limit and q:
        for entry in fuzzy:
            if _subsequence(q, entry.casefold()):
                scored.append((4, entry.count("/"), len(entry), entry))
    scored.sort()
    return [entry for *_, entry in scored[:limit]]


def path_candidates(query: str, entries: list[str], limit: int = MAX_SHOWN) -> list[Candidate]:
    """Completions of an `@path` token."""
    out: list[Candidate] = []
    for entry in rank_paths(query, entries, limit):
        folder = entry.endswith("/")
        insert = quote_mention(entry) + ("" if folder else " ")
        out.append(Candidate(entry, insert, "folder" if folder else "", final=not folder))
    return out


class PathIndex:
    """The workspace's files and folders as completion entries (`src/`, `src/auth.py`), built off the UI thread."""

    def __init__(self, workspace: Path, *, hidden: Callable[[str], bool] = lambda rel: False,
                 max_files: int = MAX_INDEXED, max_age: float = 30.0) -> None:
        self.workspace = workspace
        self.hidden = hidden
        self.max_files = max_files
        self.max_age = max_age
        self.entries: list[str] = []
        self.built_at: float | None = None
        self._lock = threading.Lock()

    @property
    def stale(self) -> bool:
        """Whether it was never built or is older than `max_age`."""
        return self.built_at is None or time.monotonic() - self.built_at > self.max_age

    def build(self) -> list[str]:
        """Walk the workspace (blocking: call from a worker thread); the new entries."""
        with self._lock:
            root = self.workspace.resolve()
            files: list[str] = []
            folders: set[str] = set()
            walk = Walk(root, root)
            for _, rel in itertools.islice(walk.files(), self.max_files):
                if self.hidden(rel):
                    continue
                files.append(rel)
                parts = rel.split("/")[:-1]
                for depth in range(1, len(parts) + 1):
                    folders.add("/".join(parts[:depth]) + "/")
            self.entries = sorted(files + [f for f in folders if not self.hidden(f.rstrip("/"))])
            self.built_at = time.monotonic()
            return self.entries
