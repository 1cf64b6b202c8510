"""The worktree's snapshot as a git bundle (the parent), its checkout in a repository of the worker's own, and what
the task changed there (the worker). Git runs through `gitsafe`: in a private git dir over the person's objects on
the parent, in a shadow repository agentcli owns on the worker; no repository config is read, nothing it names
runs, and no transport is used (a bundle is unpacked, never fetched)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from agentcli.gitsafe import GitError, Repo, Shadow
from agentcli.subagents.remote.job import MAX_CHANGE_BYTES, Change, RemoteError

_REF = "refs/heads/agentcli-snapshot"


def bundle_of(repo: Repo, commit: str) -> bytes:
    """A bundle holding `commit` and its history (the worktree's snapshot)."""
    try:
        with repo.private(head=commit) as private, tempfile.TemporaryDirectory(prefix="agentcli-bundle-") as tmp:
            private.run("update-ref", _REF, commit)
            path = Path(tmp) / "snapshot.bundle"
            private.run("bundle", "create", "--quiet", str(path), _REF)
            return path.read_bytes()
    except GitError as exc:  # the task ends failed with this line
        raise RemoteError(f"the workspace snapshot could not be bundled for the cluster: {exc}") from None


def checkout(bundle: bytes, folder: Path) -> tuple[Shadow, Path, Path]:
    """Unpack `bundle` into a repository of its own under `folder` and check its snapshot out into `folder/work`:
    (the repository, the work tree, its index)."""
    git_dir, work = folder / "git", folder / "work"
    work.mkdir()
    git_dir.mkdir()
    shadow = Shadow.at(git_dir)
    shadow.run("init", "--quiet", "--bare", str(git_dir))
    (folder / "snapshot.bundle").write_bytes(bundle)
    listed = shadow.run("bundle", "unbundle", str(folder / "snapshot.bundle")).stdout.decode().split()
    if len(listed) < 2 or listed[1] != _REF:
        raise RemoteError("the snapshot bundle holds no snapshot")
    index = git_dir / "agentcli-index"
    shadow.run("read-tree", "--reset", "-u", listed[0], work_tree=work, index=index)
    return shadow, work, index


def changes(shadow: Shadow, work: Path, index: Path, snapshot: str) -> list[Change]:
    """What differs in `work` from `snapshot` (what `.gitignore` excludes left out), read without following links."""
    shadow.run("add", "--all", "--", ".", work_tree=work, index=index)
    listed = shadow.run("diff-index", "--cached", "--no-renames", "--name-status", "-z", snapshot,
                        work_tree=work, index=index).stdout.split(b"\0")
    found: list[Change] = []
    total = 0
    for status, raw in zip(listed[0::2], listed[1::2], strict=False):
        path = raw.decode("utf-8", "surrogateescape")
        if status == b"D":
            found.append(Change(path, "gone"))
            continue
        change = _read(work / path, path)
        total += len(change.data)
        if total > MAX_CHANGE_BYTES:
            raise RemoteError(f"the task's changes exceed {MAX_CHANGE_BYTES >> 20} MiB")
        found.append(change)
    return found


def _read(full: Path, path: str) -> Change:
    mode = os.lstat(full).st_mode
    if stat.S_ISLNK(mode):
        return Change(path, "link", os.readlink(full).encode("utf-8", "surrogateescape"))
    if not stat.S_ISREG(mode):
        raise GitError(f"{path} is neither a file nor a link")
    fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        return Change(path, "file", fh.read(), bool(mode & stat.S_IXUSR))
