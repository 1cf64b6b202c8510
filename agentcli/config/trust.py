"""Trusted workspaces: the folders whose project config the person has agreed to apply in full.

Stored as JSON in `data_dir()/trusted_workspaces.json` (dir 0700, file 0600, replaced
atomically). A workspace is trusted when its resolved path, or one of its ancestors, is recorded.
A corrupt or unreadable file counts as "nothing trusted" and is reported once as a warning line;
the next `trust()` keeps a copy of it beside the new file. Standard library only (bottom layer).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from agentcli import paths

FILE_NAME = "trusted_workspaces.json"
_VERSION = 1
_warned: set[str] = set()


class TrustError(Exception):
    """The trust store could not be written (one line for the person)."""


def store_path(env: Mapping[str, str] | None = None) -> Path:
    """Where trust decisions are recorded."""
    return paths.data_dir(env) / FILE_NAME


def _resolved(workspace: Path | str) -> Path:
    return Path(workspace).expanduser().resolve()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        print(f"agentcli: warning: {message}", file=sys.stderr)


def _read(path: Path) -> tuple[list[dict[str, str]], bool]:
    """(entries, ok): the recorded entries; ok is False when the file exists but is unusable."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return [], True
    except OSError as exc:
        _warn_once(f"cannot read {path}: {exc.strerror or exc}; no workspace is trusted")
        return [], False
    try:
        doc = json.loads(raw.decode("utf-8"))
        entries = doc["workspaces"]
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("path"), str) and Path(e["path"]).is_absolute() for e in entries
        ):
            raise ValueError("bad entries")
    except (ValueError, KeyError, TypeError, RecursionError):
        _warn_once(f"{path} is not a valid trust list; no workspace is trusted ('agentcli trust DIR' rewrites it)")
        return [], False
    return [{"path": str(e["path"]), "trusted_at": str(e.get("trusted_at", ""))} for e in entries], True


def _write(path: Path, entries: list[dict[str, str]]) -> None:
    """Replace the store atomically: a 0600 temporary file in the same dir, fsync, rename."""
    try:
        paths.ensure_private_dir(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=".trusted-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": _VERSION, "workspaces": entries}, handle, indent=2, ensure_ascii=False)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise TrustError(f"cannot record trust in {path}: {exc.strerror or exc}") from None


def trusted_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every recorded workspace path, in the order they were trusted."""
    entries, _ = _read(store_path(env))
    return [Path(e["path"]) for e in entries]


def trusted_by(workspace: Path | str, env: Mapping[str, str] | None = None) -> Path | None:
    """The recorded path that makes `workspace` trusted (itself or an ancestor), else None."""
    target = _resolved(workspace)
    recorded = set(trusted_paths(env))
    for candidate in (target, *target.parents):
        if candidate in recorded:
            return candidate
    return None


def is_trusted(workspace: Path | str, env: Mapping[str, str] | None = None) -> bool:
    """Whether the person trusts `workspace` (its resolved path or an ancestor is recorded)."""
    return trusted_by(workspace, env) is not None


def trust(workspace: Path | str, env: Mapping[str, str] | None = None) -> Path:
    """Record `workspace` (resolved) as trusted; returns the recorded path. TrustError if it cannot."""
    target = _resolved(workspace)
    path = store_path(env)
    entries, ok = _read(path)
    if not ok and path.exists():
        with contextlib.suppress(OSError):
            os.replace(path, path.with_name(path.name + ".corrupt"))  # keep it for the person to look at
    if all(Path(e["path"]) != target for e in entries):
        entries.append({"path": str(target), "trusted_at": datetime.now(UTC).isoformat(timespec="seconds")})
    _write(path, entries)
    return target


def revoke(workspace: Path | str, env: Mapping[str, str] | None = None) -> bool:
    """Forget `workspace`'s own record; False when it was not recorded (an ancestor may still trust it)."""
    target = _resolved(workspace)
    path = store_path(env)
    entries, ok = _read(path)
    if not ok:
        return False
    kept = [e for e in entries if Path(e["path"]) != target]
    if len(kept) == len(entries):
        return False
    _write(path, kept)
    return True
