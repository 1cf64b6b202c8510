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

Wherever they are (the workspace may be the home folder, or hold them), compared as resolved paths
(symlinks and `..` followed) in lower case (a case-insensitive file system has one file for both):

- agentcli's config, data and state folders (`paths.config_dir`, `data_dir`, `state_dir`): the person's
  config, the trusted-workspaces list, the database, logs and history;
- Claude Code's user folder: `~/.claude` and `$CLAUDE_CONFIG_DIR` (the person's hooks run in every workspace);
- opencode's user config folder, `$XDG_CONFIG_HOME/opencode` (agent files agentcli reads);
- git's user config: `~/.gitconfig`, `$XDG_CONFIG_HOME/git/`, `$GIT_CONFIG_GLOBAL` (agentcli's own
  `git status` applies the person's git config).

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

from agentcli import paths

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


def persons_files(env: Mapping[str, str] | None = None) -> list[tuple[Path, str]]:
    """agentcli's, Claude Code's, opencode's and git's own folders and files of the person, each with what it is."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    xdg_config = paths.config_dir(env).parent
    found = [
        (paths.config_dir(env), "agentcli's own config folder (the person's config and agent files)"),
        (paths.data_dir(env), "agentcli's own data folder (the trusted-workspaces list, sessions)"),
        (paths.state_dir(env), "agentcli's own state folder (logs, prompt history)"),
        (home / ".claude", "Claude Code's user folder (its hooks run in every workspace)"),
        (xdg_config / "opencode", "opencode's user config folder (agent files)"),
        (home / ".gitconfig", "git's user config"),
        (xdg_config / "git", "git's user config"),
    ]
    if env.get("CLAUDE_CONFIG_DIR"):
        found.append((Path(env["CLAUDE_CONFIG_DIR"]).expanduser(), "Claude Code's user folder ($CLAUDE_CONFIG_DIR)"))
    if env.get("GIT_CONFIG_GLOBAL"):
        found.append((Path(env["GIT_CONFIG_GLOBAL"]).expanduser(), "git's user config ($GIT_CONFIG_GLOBAL)"))
    return found


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
    (`"git's config or hooks (…), which can make later runs start commands"`); "" for an ordinary file, and
    for one outside the workspace (the file tools refuse it themselves)."""
    if not target:
        return ""
    path = Path(target)
    real = _folded(path if path.is_absolute() else workspace / path)
    root = _folded(workspace)
    if not _within(real, root):
        return ""
    for place, what in persons_files(env):
        if _within(real, _folded(place)):
            return f"{what}, {_RUNS_LATER}"
    if real == root:
        return ""
    parts = real[len(root.rstrip(os.sep)) + 1 :].split(os.sep)
    for part in parts:
        if part in _WORKSPACE_FOLDERS:
            return f"{_WORKSPACE_FOLDERS[part]}, {_RUNS_LATER}"
    if parts[-1] in _WORKSPACE_FILES:
        return f"{_WORKSPACE_FILES[parts[-1]]}, {_RUNS_LATER}"
    return ""
