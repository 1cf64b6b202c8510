"""Glob's listing: `rg --files` under a folder, each file stat'ed as the list arrives.

The files are the ones the searches see (`.gitignore` files, nested ones too, and the folders they never
enter); their mtimes are read in the thread reading rg's output while rg still walks, each relative to
one open handle on the folder. Without rg (or when it fails) the caller walks the tree itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from agentcli.tools.search.child import (
    Parser,
    child_env,
    decode_path,
    drain,
    find_rg,
    kill,
    skip_globs,
    start_piped,
)

_LIST_BATCH_BYTES = 1 << 16  # rg's output handed to the parser at once (Glob stats the files while rg walks)
_TYPE = "agentcliglob"  # the file type list_files_dated defines for its name filter


async def list_files_dated(
    root: Path,
    name_glob: str | None,
    progress: Callable[[], None],
    *,
    top_only: bool = False,
    select: Callable[[str], object] | None = None,
) -> list[tuple[float, str]] | None:
    """The files under the folder `root` as the searches see them (`rg --files`) that `select` accepts,
    each as `(-mtime, path relative to root)`, unordered: sorting the list puts the newest first, then
    by path. A file that cannot be stat'ed (gone meanwhile) is left out.

    `name_glob` keeps only files whose name matches (an rg type glob: it never re-includes an ignored
    folder); `top_only` lists the folder's own files only. None when there is no rg or it failed:
    the caller walks the tree itself.

    The files are stat'ed in the thread reading rg's output while rg still walks, each relative to one
    open handle on `root` (a shorter lookup than the whole path).
    """
    dated = _Dated(root, select)
    return dated.dated if await _rg_files(root, name_glob, progress, top_only, dated) else None


async def _rg_files(
    root: Path, name_glob: str | None, progress: Callable[[], None], top_only: bool, parser: Parser
) -> bool:
    """Run `rg --files` under `root`, handing its NUL-separated output to `parser`; False when rg is
    missing or failed."""
    rg = find_rg()
    if rg is None:
        return False
    argv = [rg, "--no-config", "--no-require-git", "--hidden", "--no-messages", "--files", "--null", *skip_globs()]
    if name_glob:
        argv += ["--type-add", f"{_TYPE}:{name_glob}", "--type", _TYPE]
    if top_only:
        argv += ["--max-depth", "1"]
    try:
        proc, read_end = await start_piped(argv, root, child_env(python=False), asyncio.subprocess.DEVNULL)
    except OSError:
        return False
    try:
        listing = _Counted(parser)
        await drain(read_end, listing, progress, _LIST_BATCH_BYTES)
        await proc.wait()
        # 2 and a list: some entry was unreadable
        return proc.returncode in (0, 1) or (proc.returncode == 2 and listing.size > 0)
    finally:
        kill(proc)
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())


class _Counted:
    """A parser that also counts the bytes it was given."""

    def __init__(self, inner: Parser) -> None:
        self.inner = inner
        self.size = 0

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        self.inner.feed(data)

    def close(self) -> None:
        self.inner.close()


class _Names:
    """`rg --files --null` output as paths."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self._pending = b""

    def feed(self, data: bytes) -> None:
        data = self._pending + data if self._pending else data
        cut = data.rfind(b"\x00") + 1
        self._pending = data[cut:]
        if cut:
            self.found += self._names(data[:cut])

    def close(self) -> None:
        if self._pending:
            self.found += self._names(self._pending + b"\x00")
            self._pending = b""

    @staticmethod
    def _names(data: bytes) -> list[str]:
        return decode_path(data).split("\x00")[:-1]


class _Dated(_Names):
    """`rg --files --null` output as `(-mtime, path)`, for the paths `select` accepts.

    Each file is stat'ed relative to one handle on the folder (a shorter lookup than its whole path),
    opened and closed in the reading thread, which alone uses it.
    """

    def __init__(self, root: Path, select: Callable[[str], object] | None) -> None:
        super().__init__()
        self.select = select
        self.dated: list[tuple[float, str]] = []
        self._root = root
        self._fd: int | None = None
        self._opened = False

    def feed(self, data: bytes) -> None:
        super().feed(data)
        self._stat()

    def close(self) -> None:
        try:
            super().close()
            self._stat()
        finally:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _stat(self) -> None:
        names = self.found if self.select is None else list(filter(self.select, self.found))
        self.found = []
        if not names:
            return
        if not self._opened:
            self._opened = True
            if os.stat in os.supports_dir_fd:
                with contextlib.suppress(OSError):
                    self._fd = os.open(self._root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        stat, fd, out = os.stat, self._fd, self.dated
        base = str(self._root) + os.sep
        for rel in names:
            try:
                out.append((-(stat(rel, dir_fd=fd) if fd is not None else stat(base + rel)).st_mtime, rel))
            except OSError:
                continue
