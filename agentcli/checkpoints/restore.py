"""Putting files back from a snapshot: writes through git's own checkout (modes, symlinks, no write through a
symlinked folder), deletions through descriptors opened without following a link, empty folders left behind
removed."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from agentcli.checkpoints.shadow import CheckpointError, ShadowRepo, nul_list


def put_back(repo: ShadowRepo, tree: str, write: list[str], delete: list[str]) -> list[str]:
    """Make the workspace's `write` paths what `tree` holds and remove its `delete` paths; the paths that could
    not be changed (with why), empty when all were."""
    failed = [f"{path}: {why}" for path in delete if (why := _remove(repo.workspace, path))]
    if write:
        with repo.locked() as git, tempfile.TemporaryDirectory(prefix="agentcli-rewind-") as scratch:
            index = Path(scratch) / "index"
            for args, stdin in ((("read-tree", tree), None),
                                (("checkout-index", "-f", "-z", "--stdin"), nul_list(write))):
                proc = git.run(*args, work_tree=repo.workspace, index=index, stdin=stdin, check=False)
                if proc.returncode != 0:
                    why = " ".join(proc.stderr.decode("utf-8", "replace").split())[:300]
                    if args[0] == "read-tree":
                        raise CheckpointError(f"cannot read checkpoint {tree[:12]}: {why}")
                    failed.append(f"git checkout-index: {why}")
    for path in delete:
        _prune_empty(repo.workspace, path)
    return failed


def _remove(workspace: Path, path: str) -> str:
    """Unlink one file (or symlink) under `workspace`, never through a symlinked folder; why not, or ""."""
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "not a plain relative path"
    with _folder(workspace, parts[:-1]) as fd:
        if fd is None:
            return ""  # its folder is gone or is no folder: the file is not there either
        try:
            info = os.lstat(parts[-1], dir_fd=fd)
        except FileNotFoundError:
            return ""
        if stat.S_ISDIR(info.st_mode):
            return "is a folder now"
        try:
            os.unlink(parts[-1], dir_fd=fd)
        except OSError as exc:
            return exc.strerror or type(exc).__name__
    return ""


@contextlib.contextmanager
def _folder(workspace: Path, parts: list[str]) -> Iterator[int | None]:
    """A descriptor of `workspace/parts…`, each step opened without following a symlink (None: not there)."""
    fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts:
            try:
                step = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                os.close(fd)
                fd = -1
                break
            os.close(fd)
            fd = step
        yield fd if fd >= 0 else None
    finally:
        if fd >= 0:
            os.close(fd)


def _prune_empty(workspace: Path, path: str) -> None:
    """Remove the folders of a deleted file that are now empty, up to the workspace."""
    parts = path.split("/")[:-1]
    while parts:
        with _folder(workspace, parts[:-1]) as fd:
            if fd is None:
                return
            try:
                os.rmdir(parts[-1], dir_fd=fd)
            except OSError:
                return  # not empty, not a folder, or a symlink: stop
        parts.pop()
