"""Where hooks come from, read into one list per event.

Sources, all added together (as Claude Code merges its settings files):

- the agentcli config's `[hooks]` (the layered config; an untrusted project file cannot set it);
- `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when that is set; `claude_settings` says where);
- in a trusted workspace only: `<workspace>/.claude/settings.json` and `.claude/settings.local.json`;
- the session's plugins' hooks (`agentcli.plugins`: `hooks/hooks.json` or their manifest's).

A hook an untrusted workspace names never runs; `HookConfig.notes` says so once. Entries agentcli
cannot run (another event, a hook type other than `command`) are skipped with a note too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from agentcli.config import project_claude_settings as project_claude_settings  # re-exported
from agentcli.config import user_claude_settings as user_claude_settings  # re-exported

if TYPE_CHECKING:
    from agentcli.config import HookEventName, HookMatcherSettings
    from agentcli.plugins import Plugin

HOOK_EVENTS: Final = (
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop", "SessionStart"
)
DEFAULT_TIMEOUT_SECONDS: Final = 60.0
AGENTCLI_CONFIG = "agentcli config [hooks]"


@dataclass(frozen=True, slots=True)
class HookCommand:
    """One command to run for one event, and where it was configured."""

    event: str
    command: str
    matcher: str
    timeout: float
    source: str
    callback_id: str = ""  # not a command: a program's callback (the Claude Agent SDK's hooks), asked by id
    block_on_failure: bool = False  # a callback's `onFailure: "block"`: its failure blocks what the event guards


@dataclass(slots=True)
class HookConfig:
    """Every configured hook by event, and lines for the person about what was not taken."""

    by_event: dict[str, list[HookCommand]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, hook: HookCommand) -> None:
        """Add one hook (the same command for the same event and matcher is kept once)."""
        hooks = self.by_event.setdefault(hook.event, [])
        if all((h.command, h.matcher, h.callback_id) != (hook.command, hook.matcher, hook.callback_id) for h in hooks):
            hooks.append(hook)

    def has(self, event: str) -> bool:
        """Whether any hook is configured for `event`."""
        return bool(self.by_event.get(event))

    def matching(self, event: str, target: str | None) -> list[HookCommand]:
        """The hooks of `event` whose matcher matches `target` (a tool name, an agent type, a start source);
        a None target (events without one) matches every hook. One command runs once per event."""
        found: dict[str, HookCommand] = {}
        for hook in self.by_event.get(event, []):
            if target is None or matches(hook.matcher, target):
                found.setdefault(hook.command, hook)
        return list(found.values())


def matches(matcher: str, name: str) -> bool:
    """Claude Code's matcher: empty or `*` match everything; otherwise a regex (so `Bash`, `Edit|Write`,
    `mcp__.*`) that must match the whole name."""
    if matcher in ("", "*"):
        return True
    pattern = _compiled(matcher)
    return pattern is not None and pattern.fullmatch(name) is not None


@cache
def _compiled(matcher: str) -> re.Pattern[str] | None:
    try:
        return re.compile(matcher)
    except re.error:
        return None


def load_hooks(
    configured: Mapping[HookEventName, list[HookMatcherSettings]],
    workspace: Path,
    *,
    trusted: bool,
    env: Mapping[str, str] | None = None,
    sources: frozenset[str] | None = None,
    plugins: Iterable[Plugin] = (),
) -> HookConfig:
    """Every hook that may run in `workspace` (the project's only when `trusted`). `sources` (Claude Code's
    `--setting-sources`): which of its settings files are read, `user`, `project` (settings.json) and `local`
    (settings.local.json); None reads them all."""
    env = os.environ if env is None else env
    config = HookConfig()
    for event, groups in configured.items():
        for group in groups:
            for hook in group.hooks:
                timeout = hook.timeout or DEFAULT_TIMEOUT_SECONDS
                config.add(HookCommand(event, hook.command, group.matcher, timeout, AGENTCLI_CONFIG))
    if sources is None or "user" in sources:
        _read_claude_file(user_claude_settings(env), config)
    for source, path in zip(("project", "local"), project_claude_settings(workspace), strict=True):
        if sources is not None and source not in sources:
            continue
        if trusted:
            _read_claude_file(path, config)
        elif _names_hooks(path):
            config.notes.append(
                f"hooks in {path} not run: the workspace is not trusted (run 'agentcli trust {workspace}' to run them)"
            )
    add_plugin_hooks(config, plugins)  # the session's plugins: already only those the trust rules let load
    return config


def add_plugin_hooks(config: HookConfig, plugins: Iterable[Plugin]) -> None:
    """Add the plugins' hooks, `${CLAUDE_PLUGIN_ROOT}` as each one's folder, with the file they came from."""
    for plugin in plugins:
        add_hooks(config, plugin.expand(dict(plugin.hooks)) or None, Path(plugin.hooks_origin or plugin.root))


def project_hooks(workspace: Path, env: Mapping[str, str] | None = None) -> HookConfig:
    """The hooks the workspace's own settings files name, trusted or not: what trusting it would run
    (a file that is the person's own settings, as in a home-folder workspace, is left out: it runs anyway)."""
    env = os.environ if env is None else env
    config = HookConfig()
    persons = _real(user_claude_settings(env))
    for path in project_claude_settings(workspace):
        if _real(path) != persons:
            _read_claude_file(path, config)
    return config


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _names_hooks(path: Path) -> bool:
    doc = _read_json(path, HookConfig())
    return isinstance(doc, dict) and bool(doc.get("hooks"))


def _read_json(path: Path, config: HookConfig) -> object:
    """A settings file's JSON object, read like a config file (`config.read_settings_doc`): a named pipe, a device
    or a huge file of a repository is a note, never a hang."""
    from agentcli.config import read_settings_doc

    return read_settings_doc(path, "hooks", config.notes)


def _read_claude_file(path: Path, config: HookConfig) -> None:
    """Add the `hooks` section of one Claude Code settings file; what cannot run is a note, never an error."""
    doc = _read_json(path, config)
    if doc is None:
        return
    add_hooks(config, doc.get("hooks") if isinstance(doc, dict) else None, path)


def add_hooks(config: HookConfig, hooks: object, path: Path) -> None:
    """Add a `hooks` object (Claude Code's, or the `[hooks]` table of an agentcli config file at `path`)."""
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        config.notes.append(f"hooks in {path} not read: 'hooks' must be an object of events")
        return
    for event, groups in hooks.items():
        if event not in HOOK_EVENTS:
            config.notes.append(f"{path}: {event} hooks skipped (agentcli runs {', '.join(HOOK_EVENTS)})")
            continue
        for where, group in _groups(groups):
            _add_group(config, path, event, f"{event}[{where}]", group)


def _groups(groups: object) -> Iterable[tuple[int, object]]:
    return enumerate(groups) if isinstance(groups, list) else [(0, groups)]


def _add_group(config: HookConfig, path: Path, event: str, where: str, group: object) -> None:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        config.notes.append(f"{path}: {where} skipped: it needs a 'hooks' list")
        return
    matcher = group.get("matcher") or ""
    if not isinstance(matcher, str) or (matcher not in ("", "*") and _compiled(matcher) is None):
        config.notes.append(f"{path}: {where} skipped: matcher {matcher!r} is not a valid regular expression")
        return
    for number, hook in enumerate(group["hooks"]):
        problem = _hook_problem(hook)
        if problem:
            config.notes.append(f"{path}: {where}.hooks[{number}] skipped: {problem}")
            continue
        timeout = hook.get("timeout")
        seconds = float(timeout) if timeout else DEFAULT_TIMEOUT_SECONDS
        config.add(HookCommand(event, hook["command"], matcher, seconds, str(path)))


def _hook_problem(hook: Any) -> str:
    if not isinstance(hook, dict):
        return "not an object"
    if hook.get("type", "command") != "command":
        return f"type {hook.get('type')!r} is not supported (only 'command')"
    if not isinstance(hook.get("command"), str) or not hook["command"].strip():
        return "no command"
    timeout = hook.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        return "timeout must be a positive number of seconds"
    return ""
