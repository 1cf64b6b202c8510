"""Claude Code's `permissions` settings, read as agentcli's permission rules.

Files, in Claude Code's order (later files' `defaultMode` wins; every file's rules are united):

- `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when that is set): the person's own, always read;
- `<workspace>/.claude/settings.json` and `.claude/settings.local.json`: the project's. Untrusted, only their
  `deny` rules apply (they only narrow); `allow`, `ask`, `defaultMode` and `additionalDirectories` wait for
  trust and are named in the untrusted-workspace warning (`ClaudePermissions.ignored`).

Rules (`permissions.allow` / `deny` / `ask`) keep Claude Code's syntax where agentcli reads it the same way
(`Bash(npm run test:*)`, `Bash(git * main)`, `Edit(src/**)`, `Read(./secrets/**)`, `WebFetch(domain:x.com)`,
`mcp__server`, `mcp__server__tool`; `Task(Explore)` / `Agent(Explore)` name a subagent type); paths are
rewritten where the two differ: `//abs/path` and `~/path` become
workspace-relative when they fall inside the workspace, `//abs/path` otherwise (it matches the absolute paths of
files in an additional directory, `tools.paths.match_glob`). What agentcli cannot express (`mcp__server__get_*`,
a rule that does not parse) is one note naming the file and the rule, never an error. `defaultMode` maps onto
`permissions.mode` (default → ask, acceptEdits → accept_edits, plan → readonly, bypassPermissions → auto);
agentcli's own config files set the mode over it. `additionalDirectories` (`ClaudePermissions.directories`)
join agentcli's `[permissions] additional_directories` (`additional_dirs`): folders beside the workspace the file
tools and Bash may work in.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from agentcli.config.layers import ConfigError, read_config_text

RuleKind = Literal["allow", "deny", "ask"]
RULE_KINDS: Final[tuple[RuleKind, ...]] = ("deny", "ask", "allow")
#: Claude Code's permission modes as agentcli's (`dontAsk` and `auto` have no equal here).
CLAUDE_MODES: Final[dict[str, str]] = {
    "default": "ask", "acceptEdits": "accept_edits", "plan": "readonly", "bypassPermissions": "auto",
}
#: The keys of a project's `permissions` that only trust applies (they would widen).
WIDENING_KEYS: Final = ("allow", "ask", "defaultMode", "additionalDirectories")
_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_PATH_TOOLS: Final = frozenset({"read", "edit", "write", "multiedit", "glob", "grep", "ls", "notebookedit"})


def user_claude_settings(env: Mapping[str, str]) -> Path:
    """The person's Claude Code settings file."""
    base = env.get("CLAUDE_CONFIG_DIR") or str(Path(env.get("HOME") or Path.home()) / ".claude")
    return Path(base).expanduser() / "settings.json"


def project_claude_settings(workspace: Path) -> list[Path]:
    """A project's Claude Code settings files, shared one first."""
    return [workspace / ".claude" / "settings.json", workspace / ".claude" / "settings.local.json"]


def settings_files(workspace: Path, env: Mapping[str, str], *, trusted: bool = True,
                   sources: frozenset[str] | None = None) -> list[tuple[str, Path]]:
    """Claude Code's settings files in its order, each with its source: the person's, then (when `trusted`) the
    project's shared and local ones; a home-folder workspace's are the person's own, listed once. `sources`
    (`--setting-sources`) keeps only those it names."""
    user = user_claude_settings(env)
    files = [("user", user)]
    if trusted:
        persons = _real(user)
        files += [(s, p) for s, p in zip(("project", "local"), project_claude_settings(workspace), strict=True)
                  if _real(p) != persons]
    return [(source, path) for source, path in files if sources is None or source in sources]


def read_settings_doc(path: Path, what: str, notes: list[str]) -> dict[str, object] | None:
    """One settings file's JSON object, read as a config file is (no pipe, device or huge file); None when it is
    missing or cannot be used, which is noted as `{what} in {path} not read: …`."""
    try:
        doc = json.loads(read_config_text(path))
    except FileNotFoundError:
        return None
    except ConfigError as exc:
        notes.append(f"{what} not read: {exc}")
        return None
    except (OSError, UnicodeDecodeError) as exc:
        notes.append(f"{what} in {path} not read: {getattr(exc, 'strerror', None) or exc}")
        return None
    except json.JSONDecodeError as exc:
        notes.append(f"{what} in {path} not read: not valid JSON (line {exc.lineno}: {exc.msg})")
        return None
    if not isinstance(doc, dict):
        notes.append(f"{what} in {path} not read: the file is not a JSON object")
        return None
    return doc


@dataclass(frozen=True, slots=True)
class ClaudeRule:
    """One rule of a Claude Code settings file, as agentcli reads it."""

    kind: RuleKind
    rule: str  # agentcli's rule
    written: str  # as the file has it
    source: str  # the settings file


@dataclass(slots=True)
class ClaudePermissions:
    """What the Claude Code settings files say about permissions."""

    rules: list[ClaudeRule] = field(default_factory=list)
    mode: str | None = None  # agentcli's permissions.mode, from the last file that sets a usable defaultMode
    mode_source: str = ""
    notes: list[str] = field(default_factory=list)  # one line each: a rule or key agentcli does not use, and why
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (file, key) an untrusted project may not set
    directories: list[tuple[str, str]] = field(default_factory=list)  # (additionalDirectories entry, its file)

    def of(self, kind: RuleKind) -> list[ClaudeRule]:
        """The rules of one kind, in file order."""
        return [rule for rule in self.rules if rule.kind == kind]


def agentcli_rule(text: str, workspace: Path | None = None, home: Path | None = None) -> tuple[str | None, str]:
    """(agentcli's rule, "") for a Claude Code rule, or (None, why agentcli cannot use it)."""
    stripped = text.strip()
    if stripped.startswith("mcp__") and "*" in stripped:
        server, sep, rest = stripped[len("mcp__"):].partition("__")
        if sep and rest == "*" and "*" not in server:
            return f"mcp__{server}", ""  # every tool of the server
        return None, "agentcli's MCP rules name a server or one tool (no other wildcards)"
    match = _RULE.match(text)
    if not match:
        return None, "not a rule (write Tool or Tool(pattern))"
    tool, pattern = match.group(1), match.group(2)
    if pattern is None:
        return tool, ""
    pattern = pattern.strip()
    if tool.startswith("mcp__"):
        return None, "an MCP rule takes no pattern in parentheses"
    if tool.lower() in _PATH_TOOLS:
        path, why = _path_pattern(pattern, workspace, home)
        return (f"{tool}({path})", "") if path is not None else (None, why)
    if tool == "WebFetch" and pattern.startswith("domain:") and not pattern[len("domain:"):].strip():
        return None, "domain: names no host"
    if tool in ("Task", "Agent"):  # a subagent type: the Task call's target is `type: description`
        return f"Task({pattern}: *)", ""
    return f"{tool}({pattern})", ""


def _path_pattern(pattern: str, workspace: Path | None, home: Path | None) -> tuple[str | None, str]:
    """A path rule's pattern as agentcli's workspace-relative glob."""
    if pattern.startswith("./"):
        return pattern[2:] or "**", ""
    absolute: Path | None = None
    if pattern.startswith("//"):
        absolute = Path("/" + pattern.lstrip("/"))
    elif pattern == "~" or pattern.startswith("~/"):
        absolute = (home or Path.home()) / pattern[2:]
    if absolute is None:
        return pattern, ""  # `src/**`, and `/src/**` (relative to the project root) read the same in agentcli
    if workspace is None:
        return None, "an absolute path needs a workspace to be read against"
    ws = workspace.expanduser().absolute()
    text = absolute.as_posix()
    root = ws.as_posix().rstrip("/")
    if text == root or text == root + "/**":
        return "**", ""
    if text.startswith(root + "/"):
        return text[len(root) + 1:], ""
    return "/" + text, ""  # outside: `//abs/…`, matched against the absolute paths of additional directories


def read_claude_permissions(
    workspace: Path,
    *,
    trusted: bool,
    env: Mapping[str, str] | None = None,
    sources: frozenset[str] | None = None,
) -> ClaudePermissions:
    """The permission rules and mode of the person's and the project's Claude Code settings (the project's only
    narrowing ones unless `trusted`). `sources` (Claude Code's `--setting-sources`: `user`, `project`, `local`)
    limits the files read; None reads them all."""
    env = os.environ if env is None else env
    found = ClaudePermissions()
    home = Path(env.get("HOME") or Path.home())
    for source, path in settings_files(workspace, env, sources=sources):
        permissions = _permissions(path, found.notes)
        if permissions is None:
            continue
        narrowing_only = source != "user" and not trusted
        _read_permissions(found, permissions, path, workspace, home, narrowing_only)
    return found


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _permissions(path: Path, notes: list[str]) -> dict[str, object] | None:
    """The `permissions` object of one settings file; None when there is none (problems noted)."""
    doc = read_settings_doc(path, "permissions", notes)
    permissions = doc.get("permissions") if doc is not None else None
    if permissions is None:
        return None
    if not isinstance(permissions, dict):
        notes.append(f"permissions in {path} not read: 'permissions' must be an object")
        return None
    return permissions


def _read_permissions(
    found: ClaudePermissions, permissions: dict[str, object], path: Path, workspace: Path, home: Path,
    narrowing_only: bool,
) -> None:
    source = str(path)
    for key in WIDENING_KEYS:
        if narrowing_only and permissions.get(key) not in (None, [], ""):
            found.ignored.append((source, key))
    for kind in RULE_KINDS:
        if narrowing_only and kind != "deny":
            continue
        items = permissions.get(kind)
        if items is None:
            continue
        if not isinstance(items, list):
            found.notes.append(f"{path}: permissions.{kind} skipped: expected a list of rules")
            continue
        for item in items:
            if not isinstance(item, str):
                found.notes.append(f"{path}: permissions.{kind} entry {item!r} skipped: expected a rule string")
                continue
            rule, why = agentcli_rule(item, workspace, home)
            if rule is None:
                found.notes.append(f"{path}: permissions.{kind} rule {item!r} not used: {why}")
            else:
                found.rules.append(ClaudeRule(kind, rule, item, source))
    if narrowing_only:
        return
    mode = permissions.get("defaultMode")
    if mode is not None:
        if isinstance(mode, str) and mode in CLAUDE_MODES:
            found.mode, found.mode_source = CLAUDE_MODES[mode], source
        else:
            found.notes.append(f"{path}: permissions.defaultMode {mode!r} not used: agentcli knows "
                               f"{', '.join(CLAUDE_MODES)}")
    folders = permissions.get("additionalDirectories")
    if folders is None:
        return
    if not isinstance(folders, list):
        found.notes.append(f"{path}: permissions.additionalDirectories skipped: expected a list of paths")
        return
    for folder in folders:
        if isinstance(folder, str) and folder.strip():
            found.directories.append((folder.strip(), source))
        else:
            found.notes.append(f"{path}: permissions.additionalDirectories entry {folder!r} skipped: expected a path")


def claude_output_style(workspace: Path, *, trusted: bool, env: Mapping[str, str] | None = None,
                        sources: frozenset[str] | None = None) -> str:
    """The `outputStyle` the Claude Code settings name (local over project over the person's; a project's only when
    `trusted`), or "" when none does; a file that cannot be read names none."""
    style = _last_setting("outputStyle", workspace, trusted, env, sources)
    return style.strip() if isinstance(style, str) else ""


def claude_status_line(workspace: Path, *, trusted: bool, env: Mapping[str, str] | None = None,
                       sources: frozenset[str] | None = None) -> str:
    """The command of the `statusLine` the Claude Code settings set (`{"type": "command", "command": ...}`; local over
    project over the person's, a project's only when `trusted`: it is a command), or ""."""
    line = _last_setting("statusLine", workspace, trusted, env, sources)
    if isinstance(line, dict) and line.get("type", "command") == "command" and isinstance(line.get("command"), str):
        return str(line["command"]).strip()
    return ""


def _last_setting(key: str, workspace: Path, trusted: bool, env: Mapping[str, str] | None,
                  sources: frozenset[str] | None) -> object:
    """`key` of the last settings file that sets it (the person's, then a trusted project's shared and local)."""
    found: object = None
    for _, _, value in claude_setting_layers(key, workspace, trusted=trusted, env=env, sources=sources):
        if value not in (None, ""):
            found = value
    return found


def claude_setting_layers(key: str, workspace: Path, *, trusted: bool, env: Mapping[str, str] | None = None,
                          sources: frozenset[str] | None = None) -> list[tuple[str, Path, object]]:
    """`key` as each settings file sets it, in Claude Code's order (the person's, then a trusted project's shared
    and local): (its source, the file, the value). A file that cannot be read, or lacks the key, is left out."""
    env = os.environ if env is None else env
    found: list[tuple[str, Path, object]] = []
    for source, path in settings_files(workspace, env, trusted=trusted, sources=sources):
        doc = read_settings_doc(path, key, [])  # what cannot be read is told by the hooks' and rules' readers
        if doc is not None and key in doc:
            found.append((source, path, doc[key]))
    return found
