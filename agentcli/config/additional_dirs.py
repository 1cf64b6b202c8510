"""Additional working directories: folders beside the workspace where the file tools and Bash may also work.

Two sources, united in this order (the first mention of a folder names where it came from):

- agentcli's `[permissions] additional_directories` (user file, `--config`, environment; an untrusted
  project's `.agentcli/config.toml` may not add any: `config_trust` ignores and names them);
- Claude Code's `permissions.additionalDirectories` (`claude_settings`): the person's `~/.claude/settings.json`
  always, the project's settings files only once the workspace is trusted.

`~` is expanded, a relative path is taken from the workspace, then symlinks are followed. A folder that does not
exist or is not a folder is skipped with one line; the workspace itself, or a folder inside it, adds nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CONFIG_SOURCE = "[permissions] additional_directories"


@dataclass(frozen=True, slots=True)
class AdditionalDir:
    """One usable additional directory (resolved) and where it was named."""

    path: Path
    written: str  # as the file has it
    source: str  # `[permissions] additional_directories (file)` or the Claude Code settings file


def resolve_additional_dirs(
    workspace: Path, named: Iterable[tuple[str, str]], home: Path | None = None
) -> tuple[list[AdditionalDir], list[str]]:
    """The usable folders of `named` ((path as written, where), in order) and one line per skipped one; `~` is
    `home` (None: the process's)."""
    root = _resolved(workspace.expanduser().absolute()) or workspace
    found: list[AdditionalDir] = []
    notes: list[str] = []
    for written, source in named:
        text = written.strip()
        if not text or "\x00" in text:
            notes.append(f"{source}: additional directory {written!r} skipped: not a path")
            continue
        candidate = Path(_expand(text, home))
        if not candidate.is_absolute():
            candidate = root / candidate
        path = _resolved(candidate)
        if path is None or not path.exists():
            notes.append(f"{source}: additional directory {text} skipped: it does not exist")
            continue
        if not path.is_dir():
            notes.append(f"{source}: additional directory {text} skipped: it is not a directory")
            continue
        if path == root or path.is_relative_to(root):
            continue  # inside the workspace already
        if any(path == known.path for known in found):
            continue
        found.append(AdditionalDir(path, text, source))
    return found, notes


def session_additional_dirs(
    workspace: Path, configured: Iterable[str], claude_dirs: Iterable[tuple[str, str]], config_source: str = "",
    home: Path | None = None,
) -> tuple[list[AdditionalDir], list[str]]:
    """agentcli's configured folders (`config_source` names the file, when known), then Claude Code's."""
    where = f"{CONFIG_SOURCE} ({config_source})" if config_source else CONFIG_SOURCE
    return resolve_additional_dirs(workspace, [*((item, where) for item in configured), *claude_dirs], home)


def _expand(text: str, home: Path | None) -> str:
    if home is not None and (text == "~" or text.startswith("~/")):
        return str(home) + text[1:]
    return os.path.expanduser(text)


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError):
        return None
