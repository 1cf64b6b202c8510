"""Claude Code's flags as agentcli's settings: config overrides (each named by its flag in `config show`'s
origins), permission rules, which tools the main agent is offered, its system prompt, MCP servers from
`--mcp-config` and Claude Code settings from `--settings`. The command line is the person's (or their
program's) own, so it may widen what the config allows, as `agentcli run`'s flags may.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.config import ConfigError, read_config_text
from agentcli.headless.flags import FlagError, HeadlessArgs, split_rules
from agentcli.headless.printer import MODES_BY_NAME
from agentcli.prompts import load_prompt

if TYPE_CHECKING:
    from agentcli.config import Settings


@dataclass(slots=True)
class Mapped:
    """What the flags ask of the session, beyond the config overrides."""

    overrides: dict[str, object] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)  # --settings' permissions.ask: asked every time
    system_prompt: str | None = None
    append: str = ""
    offered: set[str] | None = None  # --tools: the only built-in tools offered (None: all)
    withheld: set[str] = field(default_factory=set)  # bare --disallowedTools names: never offered
    mcp_servers: dict[str, Any] = field(default_factory=dict)  # --mcp-config's servers, Claude Code's shape
    model: str | None = None
    agents: dict[str, Any] = field(default_factory=dict)  # --agents: agent types defined on the command line
    strict_mcp: bool = False  # --strict-mcp-config: only --mcp-config's servers
    schema: dict[str, Any] | None = None  # --json-schema: every answer is a JSON document it validates
    sources: frozenset[str] | None = None  # --setting-sources: Claude Code settings read (None: all)
    effort: str = ""  # --effort, on agentcli's scale (low | medium | high)
    dirs: list[tuple[str, str]] = field(default_factory=list)  # additional directories: (path, the flag naming it)

    def set(self, key: str, value: object, flag: str) -> None:
        self.overrides[key] = value
        self.origins[key] = flag

    def offers(self) -> Callable[[str], bool]:
        """Whether the main agent is offered a tool, by name (MCP tools pass unless withheld by name)."""
        offered = {name.lower() for name in self.offered} if self.offered is not None else None
        withheld = {name.lower() for name in self.withheld}

        def offers(name: str) -> bool:
            lowered = name.lower()
            if lowered in withheld:
                return False
            return offered is None or lowered in offered or lowered.startswith("mcp__")

        return offers


def map_flags(args: HeadlessArgs) -> Mapped:
    """The flags' settings; `FlagError` for a value agentcli cannot use (a bad number, an unreadable file)."""
    mapped = Mapped()
    if args.skip_permissions:
        mapped.set("permissions.mode", "auto", "--dangerously-skip-permissions")
    elif args.permission_mode is not None:
        mapped.set("permissions.mode", MODES_BY_NAME[args.permission_mode], "--permission-mode")
    if args.max_turns is not None:
        mapped.set("agent.max_turns", _number(args.max_turns, "--max-turns", int), "--max-turns")
    if args.max_budget_usd is not None:
        mapped.set("budget.session_max_usd", _number(args.max_budget_usd, "--max-budget-usd", float),
                   "--max-budget-usd")
    mapped.allow = [as_rule(r) for r in split_rules(args.allowed_tools)]
    mapped.deny = [as_rule(r) for r in split_rules(args.disallowed_tools)]
    mapped.withheld = {r for r in mapped.deny if "(" not in r}
    if args.tools is not None:
        names = split_rules(args.tools)
        mapped.offered = None if names == ["default"] else set(names)
    if args.system_prompt_file is not None:
        mapped.system_prompt = _file(args.system_prompt_file, "--system-prompt-file")
    elif args.system_prompt is not None:  # "" is the SDK's default: a short role of its own, as Claude Code has
        mapped.system_prompt = args.system_prompt if args.system_prompt.strip() else load_prompt("system_sdk.md")
    appended = [args.append_system_prompt or ""]
    if args.append_system_prompt_file is not None:
        appended.append(_file(args.append_system_prompt_file, "--append-system-prompt-file"))
    mapped.append = "\n\n".join(a for a in appended if a.strip())
    for value in args.mcp_config:
        mapped.mcp_servers.update(_mcp_servers(value))
    mapped.strict_mcp = args.strict_mcp_config
    mapped.dirs = [(path, "--add-dir") for path in args.add_dir]
    if args.plugin_dir:
        mapped.set("plugins.dirs", [str(Path(p).expanduser().resolve()) for p in args.plugin_dir], "--plugin-dir")
    mapped.model = args.model
    if args.effort is not None:  # Claude Code's xhigh and max are agentcli's high (its most thinking)
        mapped.effort = "high" if args.effort in ("xhigh", "max") else args.effort
    if args.setting_sources is not None:
        sources = frozenset(s.strip() for s in args.setting_sources.split(",") if s.strip())
        if unknown := sorted(sources - {"user", "project", "local"}):
            raise FlagError(f"--setting-sources: {', '.join(unknown)} is not one of user, project, local")
        mapped.sources = sources
    if args.json_schema is not None:
        from agentcli.headless.structured import read_schema

        mapped.schema = read_schema(args.json_schema)
    if args.agents is not None:
        mapped.agents = _json_or_file(args.agents, "--agents")
    if args.settings is not None:
        claude_settings(mapped, _json_or_file(args.settings, "--settings"), "--settings")
    if args.managed_settings is not None:
        claude_settings(mapped, _json_or_file(args.managed_settings, "--managed-settings"), "--managed-settings",
                        managed=True)
    return mapped


def _number(text: str, flag: str, kind: Callable[[str], int | float]) -> int | float:
    try:
        value = kind(text)
    except ValueError:
        raise FlagError(f"{flag} {text!r} is not a number") from None
    if value < 0:
        raise FlagError(f"{flag} must not be negative")
    return value


def as_rule(rule: str) -> str:
    """A Claude Code permission rule as agentcli reads rules (`claude_settings.agentcli_rule`: `Read(./src/**)`
    names `src/**`); one agentcli cannot express is kept as written (it then fails to parse or never matches)."""
    from agentcli.config import agentcli_rule

    read, _ = agentcli_rule(rule, Path.cwd())
    return read if read is not None else rule


def _file(path: str, flag: str) -> str:
    try:  # through the config files' guard: a regular file of at most 1 MiB, UTF-8
        return read_config_text(Path(path).expanduser())
    except ConfigError as exc:
        raise FlagError(f"{flag}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FlagError(f"{flag} {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None


def _json_or_file(value: str, flag: str) -> dict[str, Any]:
    """A flag's JSON object, given inline or as a file."""
    text = value if value.lstrip().startswith("{") else _file(value, flag)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FlagError(f"{flag}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, dict):
        raise FlagError(f"{flag}: expected a JSON object")
    return data


def _mcp_servers(value: str) -> dict[str, Any]:
    data = _json_or_file(value, "--mcp-config")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise FlagError("--mcp-config: \"mcpServers\" must be an object")
    return servers


def claude_settings(mapped: Mapped, data: dict[str, Any], origin: str, *, managed: bool = False) -> None:
    """`--settings` (or the same object in `initialize`): a Claude Code settings object's permissions (allow,
    deny, ask, defaultMode, additionalDirectories), model and hooks. `managed` (`--managed-settings`, the
    organisation's): its defaultMode and model win over the flags' and the other settings'."""
    permissions = data.get("permissions") or {}
    if isinstance(permissions, dict):
        mapped.allow += [as_rule(r) for r in permissions.get("allow") or [] if isinstance(r, str)]
        mapped.deny += [as_rule(r) for r in permissions.get("deny") or [] if isinstance(r, str)]
        mapped.ask += [as_rule(r) for r in permissions.get("ask") or [] if isinstance(r, str)]
        folders = permissions.get("additionalDirectories") or []
        mapped.dirs += [(f, origin) for f in folders if isinstance(f, str)] if isinstance(folders, list) else []
        mode = permissions.get("defaultMode")
        if mode in MODES_BY_NAME and (managed or "permissions.mode" not in mapped.overrides):
            mapped.set("permissions.mode", MODES_BY_NAME[mode], origin)
    if isinstance(data.get("model"), str) and (managed or mapped.model is None):
        mapped.model = data["model"]
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event, matchers in hooks.items():
            mapped.set(f"hooks.{event}", matchers, origin)


def model_spec(name: str, settings: Settings) -> str:
    """A model as Claude Code's flags name it: main, light, an alias, provider:model, or a bare id of the main
    model's provider."""
    if name in ("main", "light") or ":" in name or name in settings.models.aliases:
        return name
    return f"{settings.models.main.provider}:{name}"
