"""Files whose change makes a later run start something: an edit of them is asked every time.

Allow rules, remembered "allow always" answers and mode accept_edits never cover an edit (Write, Edit,
MultiEdit) of these files; the person's answer or mode auto (--yes) still do, and a one-shot run without
--yes refuses the edit with `guarded_reason`'s words. `/export` never writes there.

Inside the workspace, at any depth (a folder below may be started as a workspace of its own later, and
trusting a folder trusts every folder below it), by path component in any letter case:

- `.agentcli/`: agentcli's project config and agent files;
- `.claude/`: Claude Code's project folder (settings and settings.local with hooks, permissions and MCP
  servers; agents, commands, skills, hooks), whose settings and agents agentcli reads;
- `.opencode/`: opencode's project folder, whose agent files agentcli reads;
- `.mcp.json`: the project's MCP servers (a process started, a URL sent headers);
- any `.git` component: a repository's config (fsmonitor, filters, aliases) and hooks, nested repositories
  and `.git` files (gitdir pointers) included.

Left out on purpose (ordinary project files, which agentcli neither reads nor runs): `AGENTS.md` and
`CLAUDE.md` (they shape prompts; editing them is everyday work), build and task files (`Makefile`,
`package.json` scripts, `.vscode/tasks.json`, CI files, a `core.hooksPath` folder such as `.husky/`),
`.gitattributes` and `.gitmodules` (a filter or an update command they name runs only when a git config,
guarded, defines it), `.envrc` (direnv asks again after any change), and other tools' folders agentcli does not
read (`.agents/`, `.codex/`, `.cursor/`). They run only when the person runs them; docs/SECURITY.md lists this
as a known limit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

_RUNS_LATER = "which can make later runs start commands"
#: Path components inside a workspace, in lower case, and what they are.
_WORKSPACE_FOLDERS: dict[str, str] = {
    ".agentcli": "agentcli's project config or agent files",
    ".claude": "Claude Code's project folder (settings with hooks, permissions and MCP servers; agents, "
    "commands, skills)",
    ".opencode": "opencode's project folder (agent files)",
    ".git": "git's config or hooks (a .git folder or file)",
}
_WORKSPACE_FILES: dict[str, str] = {".mcp.json": "the project's list of MCP servers"}


def _folded(path: Path) -> str:
    """`path` resolved (symlinks, `..`), in lower case."""
    try:
        real = path.resolve(strict=False)
    except (OSError, RuntimeError):
        real = Path(os.path.abspath(path))
    return str(real).lower()


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def guarded_reason(target: str, workspace: Path, env: Mapping[str, str] | None = None) -> str:
    """What the file `target` (workspace-relative or absolute) is, when an edit of it is asked every time
    (`"git's config or hooks (…), which can make later runs start commands"`); "" for an ordinary file."""
    if not target:
        return ""
    path = Path(target)
    absolute = path if path.is_absolute() else workspace / path
    real = _folded(absolute)
    root = _folded(workspace)
    if not _within(real, root) or real == root:
        return ""
    parts = real[len(root.rstrip(os.sep)) + 1 :].split(os.sep)
    for part in parts:
        if part in _WORKSPACE_FOLDERS:
            return f"{_WORKSPACE_FOLDERS[part]}, {_RUNS_LATER}"
    if parts[-1] in _WORKSPACE_FILES:
        return f"{_WORKSPACE_FILES[parts[-1]]}, {_RUNS_LATER}"
    return ""
