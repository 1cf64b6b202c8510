"""Prompt history, persisted per workspace: what Up/Down and Ctrl+R recall across sessions.

One file per workspace under the XDG state dir (`$XDG_STATE_HOME/agentcli/history/<hash>.jsonl`, the hash of
the workspace's resolved path), one JSON object per line (`{"text": ...}`). The folder is 0700 and the file
0600: prompts can hold whatever the person pasted. The file stays bounded: a new prompt is appended
(`O_APPEND`, one write, so two agentcli processes in one workspace do not tear each other's lines), and once
the file holds more than twice `max_entries` lines it is rewritten with the newest `max_entries` (through a
temporary file and a rename). A prompt longer than `MAX_PROMPT_CHARS` is not recorded. A broken line is
skipped; a history that cannot be read or written is an empty history, never an error for the person.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from agentcli.paths import ensure_private_dir, state_dir

log = logging.getLogger(__name__)

MAX_ENTRIES = 1000
MAX_PROMPT_CHARS = 20_000
MAX_FILE_BYTES = 64 * 1024 * 1024  # a file larger than this (not written by us) is not read
FILE_MODE = 0o600


def history_file(workspace: Path, env: Mapping[str, str] | None = None) -> Path:
    """The history file of one workspace."""
    key = hashlib.sha256(str(workspace.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return state_dir(env) / "history" / f"{key}.jsonl"


class PromptHistory:
    """The prompts sent in one workspace, oldest first (consecutive duplicates kept once)."""

    def __init__(self, path: Path, *, max_entries: int = MAX_ENTRIES) -> None:
        self.path = path
        self.max_entries = max_entries
        self.entries: list[str] = []
        self._lines = 0  # lines in the file, for deciding when to rewrite it

    @classmethod
    def for_workspace(cls, workspace: Path, env: Mapping[str, str] | None = None) -> PromptHistory:
        """The history of `workspace`, loaded."""
        history = cls(history_file(workspace, env))
        history.load()
        return history

    def load(self) -> list[str]:
        """Read the file (a missing or unreadable one is an empty history)."""
        entries: list[str] = []
        lines = 0
        try:
            if self.path.stat().st_size > MAX_FILE_BYTES:
                log.warning("prompt history %s is too large to read; ignored", self.path)
                raise FileNotFoundError
            with self.path.open("r", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    lines += 1
                    text = _decode(line)
                    if text is not None and (not entries or entries[-1] != text):
                        entries.append(text)
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("prompt history %s not read: %s", self.path, exc)
        self.entries[:] = entries[-self.max_entries :]  # in place: the prompt widget holds this list
        self._lines = lines
        return self.entries

    def add(self, text: str) -> None:
        """Record a prompt that was sent (blank, over-long and repeated ones are not)."""
        if not text.strip() or len(text) > MAX_PROMPT_CHARS:
            return
        if self.entries and self.entries[-1] == text:
            return
        self.entries.append(text)
        del self.entries[: -self.max_entries]
        try:
            self._append(text)
        except OSError as exc:
            log.warning("prompt history %s not written: %s", self.path, exc)

    def search(self, query: str, before: int | None = None) -> int | None:
        """Index of the newest entry older than `before` that contains `query` (case-insensitive), or None."""
        return search_back(self.entries, query, before)

    def _append(self, text: str) -> None:
        ensure_private_dir(self.path.parent)
        line = (json.dumps({"text": text}, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
        try:
            _private(fd)
            _write_all(fd, line)
        finally:
            os.close(fd)
        self._lines += 1
        if self._lines > 2 * self.max_entries:
            self._rewrite()

    def _rewrite(self) -> None:
        """Keep only the newest entries (other processes' recent lines included: the file is read again)."""
        self.load()
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        body = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in self.entries)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
        try:
            _private(fd)
            _write_all(fd, body.encode("utf-8", "surrogatepass"))
        finally:
            os.close(fd)
        try:
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        self._lines = len(self.entries)


def search_back(entries: list[str], query: str, before: int | None = None) -> int | None:
    """Index of the newest of `entries` before index `before` (None: the end) that contains `query`, ignoring case."""
    needle = query.casefold()
    start = len(entries) if before is None else min(before, len(entries))
    for index in range(start - 1, -1, -1):
        if needle in entries[index].casefold():
            return index
    return None


def _private(fd: int) -> None:
    """An existing file created with looser permissions is tightened to 0600."""
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, FILE_MODE)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _decode(line: str) -> str | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) and text.strip() else None
