"""Bringing a plugin or marketplace folder into agentcli's store: a local folder copied, a git repository cloned
(`gitsafe.clone`) and copied; the copy refuses what could reach outside it (a symlink leaving the folder, a
device or pipe) and stops at a size a plugin never needs."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from agentcli.gitsafe import GitError, clone
from agentcli.plugins.manifest import PluginError, inside
from agentcli.plugins.marketplace import MARKETPLACE, Source

MAX_FILES = 5000
MAX_BYTES = 100 << 20


def copy_folder(source: Path, dest: Path) -> None:
    """Copy `source` (resolved) into `dest` (new): regular files and folders, modes kept but never setuid, `.git`
    left out. A symlink to a file inside `source` is copied as that file; a symlink leaving it or naming a folder,
    and anything but a file or folder, is PluginError naming it. `dest` is removed again on failure."""
    root = source.resolve()
    if not root.is_dir():
        raise PluginError(f"{source}: no such folder")
    count, size = 0, 0
    try:
        for folder, dirs, files in os.walk(root):
            here = Path(folder)
            dirs[:] = sorted(d for d in dirs if d != ".git")
            target_dir = dest / here.relative_to(root)
            target_dir.mkdir(parents=True, exist_ok=True)
            for name in [*dirs, *sorted(files)]:
                path = here / name
                real = _checked(path, root)
                if real.is_dir():
                    if path.is_symlink():
                        raise PluginError(f"{path}: a symlink to a folder; not installed")
                    continue
                count += 1
                size += real.stat().st_size
                if count > MAX_FILES or size > MAX_BYTES:
                    raise PluginError(f"{source}: more than {MAX_FILES} files or {MAX_BYTES >> 20} MiB; not copied")
                shutil.copyfile(real, target_dir / name)
                os.chmod(target_dir / name, stat.S_IMODE(real.stat().st_mode) & 0o755)
    except OSError as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise PluginError(f"{source}: cannot copy: {exc.strerror or exc}") from None
    except PluginError:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _checked(path: Path, root: Path) -> Path:
    """`path` resolved: inside `root`, a regular file or a folder; else PluginError."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise PluginError(f"{path}: cannot resolve ({getattr(exc, 'strerror', None) or exc})") from None
    if not real.is_relative_to(root):
        raise PluginError(f"{path}: a symlink that leaves the plugin (to {real}); not installed")
    mode = real.stat().st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise PluginError(f"{path}: not a regular file or folder; not installed")
    return real


def tree_digest(folder: Path) -> str:
    """A digest of a copied plugin's files (their paths, contents and modes): equal when nothing changed."""
    digest = hashlib.sha256()
    root = folder.resolve()
    for here, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(here, name)
            mode = path.lstat().st_mode
            digest.update(f"{path.relative_to(root)}\0{mode:o}\0".encode())
            if stat.S_ISLNK(mode):
                digest.update(os.readlink(path).encode())
            elif stat.S_ISREG(mode):  # never a pipe's or device's contents
                with path.open("rb") as handle:
                    digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


@contextlib.contextmanager
def fetched(source: Source, scratch: Path) -> Iterator[Path]:
    """The folder `source` names, ready to read: a local folder as it is, a git repository cloned into a
    temporary folder under `scratch` (removed afterwards), at its `path` when it has one; a marketplace.json file
    (`Source.document`) read or downloaded into such a folder as its `.claude-plugin/marketplace.json`."""
    if source.path is not None and not source.document:
        yield source.path
        return
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=scratch, prefix="fetch-") as tmp:
        if source.document:
            folder = Path(tmp) / "marketplace"
            (folder / ".claude-plugin").mkdir(parents=True)
            from agentcli.plugins.download import document_bytes

            (folder / MARKETPLACE).write_bytes(document_bytes(source))
            yield folder
            return
        checkout = Path(tmp) / "repo"
        try:
            clone(source.url, checkout, ref=source.ref, sha=source.sha)
        except GitError as exc:
            raise PluginError(str(exc)) from None
        sub = source.subdir
        yield inside(checkout.resolve(), sub if sub.startswith("./") else f"./{sub}", "path") if sub else checkout

