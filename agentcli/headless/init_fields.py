"""The settings a program sends in its `initialize` control request, field by field: the TypeScript Claude Agent
SDK (`@anthropic-ai/claude-agent-sdk`, its `sdk.mjs`) puts its system prompt, its in-process MCP servers, its
other MCP servers and (on request) its settings and disallowed tools only there; the Python SDK
(`_internal/query.py`) its agents, hooks and a few switches. Each field is honoured here with the meaning its flag
has (`--system-prompt`, `--mcp-config`, `--settings`, ...), or answered with one warning line saying why not
(`NOT_HONOURED`); a field agentcli does not know is named in a warning too. `initialize`'s own handler
(`requests`) does `hooks` and `agents`.

What the answer tells the program (`applied`): `mcp_servers_applied`, `settings_applied`,
`disallowed_tools_applied`, `managed_settings_applied`, `plugins_applied` (every plugin listed is loaded: those not
loaded yet are loaded before the first turn, as `--plugin-dir`) and `sdk_mcp_manifests_parked` (`not_honoured`:
agentcli asks each server for its tools over `mcp_message`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from agentcli.headless.control import RequestError
from agentcli.headless.settings_map import Mapped, as_rule, claude_settings, model_spec
from agentcli.prompts import load_prompt

if TYPE_CHECKING:
    from agentcli.conversation import Conversation

Warn = Callable[[str], object]

#: Fields read elsewhere (`requests.Requests.initialize`) or that ask nothing of agentcli.
ELSEWHERE: Final = frozenset({
    "subtype", "hooks", "agents",
    "supportedDialogKinds",  # which dialogs the program can show: agentcli asks it none (request_user_dialog)
    "sdkMcpServerManifestsOrigin",  # only for a remote session's manifests
})

#: Fields agentcli does not carry out when they ask for something, with the reason their warning gives.
NOT_HONOURED: Final[dict[str, str]] = {
    "planModeInstructions": "agentcli's plan mode (readonly) has no workflow text to replace",
    "toolAliases": "the model's tool calls are run by the names agentcli offers",
    "codeRunningMcpTools": "agentcli treats every MCP tool alike (its permission rules decide)",
    "excludeDynamicSections": "the workspace facts stay in the system prompt, after its stable part",
    "title": "a session is titled by its first prompt",
    "skills": "every skill agentcli finds is listed (an agent file's skills: preloads skills)",
    "webSearchIsolationExemptMcpServers": "agentcli's WebSearch goes to its [web_search] backend, never an MCP server",
    "promptSuggestions": "agentcli suggests no next prompts",
    "agentProgressSummaries": "task_progress reports each subagent tool call, without a model-written summary",
    "rapidFollowupPreempt": "a message sent during a turn waits for the turn to end",
    "offersBypassSwitchBack": "no such switch in agentcli",
    "keepsBypassHeld": "no such switch in agentcli",
    "workspaceTrust": "a workspace is trusted by 'agentcli trust' or --trust, not by the program",
}

#: Switches whose false, or true, is what agentcli does anyway (no warning then).
ALREADY: Final[dict[str, bool]] = {
    "systemPromptSnapshot": True,  # the system prompt is rendered once, when the session starts
    "forwardSubagentText": True,  # a subagent's messages are forwarded whole, text included
    "forwardNestedSubagentToolCalls": True,  # and so are those of the subagents below it
    "perTaskStopAffordance": False,  # an interrupt stops the turn and the subagents it runs
}


@dataclass(slots=True)
class Applied:
    """What `initialize` changed that later turns read, and what the answer tells the program."""

    schema: dict[str, Any] | None = None  # `jsonSchema`: answers checked against it (as `--json-schema`)
    answer: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FlagsGiven:
    """What the command line already fixed, which a program's `settings` does not change (Claude Code's order)."""

    mode: bool = False  # --permission-mode or --dangerously-skip-permissions
    model: bool = False  # --model


def apply_fields(conversation: Conversation, request: dict[str, Any], warn: Warn, flags: FlagsGiven) -> Applied:
    """Carry out `request`'s fields on the session before its first turn; one warning line per field agentcli does
    not honour. `RequestError` for a field of the wrong shape."""
    applied = Applied()
    _system_prompt(conversation, request)
    _mcp_servers(conversation, request, warn, applied)
    for key, managed in (("settings", False), ("managedSettings", True)):
        if (data := request.get(key)) is not None:
            if not isinstance(data, dict):
                raise RequestError(f"initialize: {key} must be an object")
            _settings(conversation, data, warn, flags, key, managed=managed)
            applied.answer["managed_settings_applied" if managed else "settings_applied"] = True
    if (denied := request.get("disallowedTools")) is not None:
        _disallowed(conversation, _strings(denied, "disallowedTools"))
        applied.answer["disallowed_tools_applied"] = True
    if (schema := request.get("jsonSchema")) is not None:
        if not isinstance(schema, dict):
            raise RequestError("initialize: jsonSchema must be an object")
        applied.schema = schema
    if (text := request.get("appendSubagentSystemPrompt")) is not None:
        conversation.runner.planner.subagent_append = _text(text, "appendSubagentSystemPrompt")
    if (plugins := request.get("plugins")) is not None:
        applied.answer["plugins_applied"] = _plugins(conversation, plugins, warn)
    _warn_rest(request, warn)
    return applied


def _plugins(conversation: Conversation, entries: object, warn: Warn) -> bool:
    """`plugins` (`[{"type": "local", "path": ...}]`, the stdin form of `--plugin-dir`): loaded now, before the first
    turn; whether every one listed is loaded."""
    from agentcli.conversation import add_plugins

    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise RequestError("initialize: plugins must be a list of {type, path} objects")
    paths = [str(e.get("path") or "") for e in entries if e.get("type") == "local"]
    for entry in entries:
        if entry.get("type") != "local":
            warn(f"initialize: plugins: type {str(entry.get('type'))[:40]!r} is not loaded (only \"local\" folders)")
    for line in add_plugins(conversation, paths):
        warn(f"initialize: plugins: {line}")
    roots = {str(plugin.root) for plugin in conversation.plugins.plugins}
    return len(paths) == len(entries) and all(_resolved(path, conversation) in roots for path in paths)


def _resolved(path: str, conversation: Conversation) -> str:
    folder = Path(path).expanduser()
    return str((folder if folder.is_absolute() else conversation.workspace / folder).resolve())


def _warn_rest(request: dict[str, Any], warn: Warn) -> None:
    """One line for each field that asks for what agentcli does not do, and for each field it does not know."""
    handled = {"systemPrompt", "appendSystemPrompt", "sdkMcpServers", "sdkMcpServerConfigs", "sdkMcpServerManifests",
               "mcpServers", "settings", "managedSettings", "disallowedTools", "jsonSchema",
               "appendSubagentSystemPrompt", "plugins"}
    for key, value in request.items():
        if key in ELSEWHERE or key in handled or value is None:
            continue
        if key in ALREADY:
            if bool(value) != ALREADY[key]:
                warn(f"initialize: {key}={str(bool(value)).lower()} is not honoured: agentcli's is "
                     f"{str(ALREADY[key]).lower()}")
        elif key in NOT_HONOURED:
            if value not in (False, [], {}, ""):
                warn(f"initialize: {key} is not honoured: {NOT_HONOURED[key]}")
        else:
            warn(f"initialize: {key} is not a field agentcli knows; ignored")


def _text(value: object, key: str) -> str:
    if not isinstance(value, str):
        raise RequestError(f"initialize: {key} must be a string")
    return value


def _strings(value: object, key: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RequestError(f"initialize: {key} must be a string or a list of strings")
    return list(value)


def _system_prompt(conversation: Conversation, request: dict[str, Any]) -> None:
    """`systemPrompt` (the parts of a custom prompt, joined) replaces agentcli's role as `--system-prompt` does, an
    empty one is the SDK's default (agentcli's short role for programs); `appendSystemPrompt` joins what
    `--append-system-prompt` added. The rules for untrusted data, the workspace facts and the date stay."""
    parts, append = request.get("systemPrompt"), request.get("appendSystemPrompt")
    if parts is None and append is None:
        return
    role, appended = conversation.person_settings.system
    if parts is not None:
        text = "\n\n".join(p for p in _strings(parts, "systemPrompt") if p.strip())
        role = text or load_prompt("system_sdk.md")
    if append is not None and _text(append, "appendSystemPrompt").strip():
        appended = "\n\n".join(a for a in (appended, append) if a.strip())
    conversation.shape_main_agent(system_prompt=role, append=appended)


def _mcp_servers(conversation: Conversation, request: dict[str, Any], warn: Warn, applied: Applied) -> None:
    """`sdkMcpServers` (the program's in-process servers, reached over `mcp_message`, as `--mcp-config`'s
    `"type": "sdk"`), `sdkMcpServerConfigs` (their tool policies) and `mcpServers` (as one `--mcp-config` item);
    a server that cannot be used is skipped with a warning, as Claude Code skips it."""
    names = request.get("sdkMcpServers")
    program = {name: {"type": "sdk", "name": name} for name in _strings(names or [], "sdkMcpServers")}
    _add_servers(conversation, program, "initialize (sdkMcpServers)", warn)
    configs = request.get("sdkMcpServerConfigs")
    if isinstance(configs, dict):
        for name, config in configs.items():
            if name in program and isinstance(config, dict):
                _server_config(conversation, name, config, warn)
    if isinstance(manifests := request.get("sdkMcpServerManifests"), dict) and program:
        # agentcli's MCP client does its own handshake over mcp_message: nothing for the program to change
        applied.answer["sdk_mcp_manifests_parked"] = {name: "not_honoured" for name in manifests if name in program}
    if (servers := request.get("mcpServers")) is not None:
        if not isinstance(servers, dict):
            raise RequestError("initialize: mcpServers must be an object of name -> server")
        _add_servers(conversation, servers, "initialize (mcpServers)", warn)
        applied.answer["mcp_servers_applied"] = True


def _add_servers(conversation: Conversation, servers: dict[str, Any], origin: str, warn: Warn) -> None:
    from agentcli.mcp import SpecError

    for name, raw in servers.items():
        try:
            conversation.mcp.add_main({name: raw}, origin=origin)
        except SpecError as exc:
            warn(f"{exc}; skipped")


def _server_config(conversation: Conversation, name: str, config: dict[str, Any], warn: Warn) -> None:
    """One in-process server's settings: its tools' `always_ask` / `always_deny` become ask / deny rules."""
    from agentcli.tools import PermissionRule

    policy = conversation.permissions
    for entry in config.get("tools") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        rule = PermissionRule.parse(f"mcp__{name}__{entry['name']}")
        wanted = entry.get("permission_policy")
        if wanted == "always_deny":
            policy.deny.append(rule)
        elif wanted != "always_allow":  # always_ask, and a policy it does not know, ask (Claude Code's reading)
            policy.ask.append(rule)
    if config.get("timeout") is not None:
        warn(f"initialize: sdkMcpServerConfigs.{name}.timeout is not honoured: [mcp] call_timeout_seconds applies")


def _settings(conversation: Conversation, data: dict[str, Any], warn: Warn, flags: FlagsGiven, key: str, *,
              managed: bool) -> None:
    """A Claude Code settings object, as `--settings` (or `--managed-settings`) reads it, on the open session: its
    rules, additional directories and hooks join the session's; its defaultMode and model apply unless a flag set
    them (managed settings win over the flags)."""
    from pathlib import Path

    from agentcli.hooks import HookConfig, add_hooks
    from agentcli.tools import PermissionRule

    origin = f"initialize ({key})"
    mapped = Mapped()
    claude_settings(mapped, data, origin, managed=managed)
    policy = conversation.permissions
    policy.allow += [PermissionRule.parse(rule) for rule in mapped.allow]
    policy.deny += [PermissionRule.parse(rule) for rule in mapped.deny]
    policy.ask += [PermissionRule.parse(rule) for rule in mapped.ask]
    if (mode := mapped.overrides.get("permissions.mode")) is not None and (managed or not flags.mode):
        policy.set_mode(mode)  # type: ignore[arg-type]
    if mapped.dirs:
        conversation.add_directories(mapped.dirs)
    if mapped.model is not None and (managed or not flags.model):
        conversation.set_model(model_spec(mapped.model, conversation.settings))
    config = HookConfig()
    add_hooks(config, data.get("hooks"), Path(origin))
    for hook in (hook for hooks in config.by_event.values() for hook in hooks):
        conversation.hooks.config.add(hook)
    for note in config.notes:
        warn(note)


def _disallowed(conversation: Conversation, rules: list[str]) -> None:
    """`disallowedTools`, as `--disallowedTools`: deny rules, and a bare name also hides the tool."""
    from agentcli.headless.flags import split_rules
    from agentcli.tools import PermissionRule

    denied = [as_rule(rule) for rule in split_rules(rules)]
    conversation.permissions.deny += [PermissionRule.parse(rule) for rule in denied]
    hidden = {rule.lower() for rule in denied if "(" not in rule}
    offers = conversation.person_settings.offers
    role, appended = conversation.person_settings.system
    conversation.shape_main_agent(system_prompt=role, append=appended,
                                  offers=lambda name: name.lower() not in hidden and offers(name))
