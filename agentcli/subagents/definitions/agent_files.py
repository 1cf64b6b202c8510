"""Agent definition files: Markdown with YAML front matter, in agentcli's, Claude Code's or opencode's format
(Codex, Gemini CLI, Qwen Code and opencode.json are read into the same shape by `foreign_agents`).

    ---
    name: code-reviewer
    description: Reviews a change for bugs and style.
    tools: Read, Grep, Glob          # or a YAML list; opencode: a mapping {write: false}
    model: sonnet                    # main | light | inherit | an alias | provider:model
    fork_context: true               # optional: every task starts from its parent's conversation
    isolation: worktree              # optional: every task writes in its own git worktree, merged back ("remote":
                                     # the same on the [executor] cluster)
    ---
    You are a careful code reviewer ...   (the body is the role prompt)

The front matter is read with a safe loader that also refuses anchors and aliases (`&a`, `*a`: the
"billion laughs" alias bomb is refused before anything is built) and is capped at 64 KiB; a tag such
as `!!python/object` is refused too, and the file skipped. Only scalars are ever turned into text.
Claude Code accepts descriptions that are not strict YAML (an unquoted `: ` inside
a long description with `<example>` blocks); such front matter is read again leniently, key by key
(see `lenient_front_matter`), still with the safe loader, and the file gets a warning.

Tools: names map case-insensitively onto ours (`read, GREP` → Read, Grep, `WebSearch`); tools agentcli lacks
(`Bash(git:*)` patterns) are dropped from an allow list with one warning per file. A WebSearch the
session has no backend for stays in the list: a call to it gets the line saying how to configure one. MCP tools
(`mcp__server__tool`, or `mcp__server` for all of a server's) are kept as written: they exist once their server runs
(`agentcli.mcp`). `mcpServers:` names the servers the agent uses, configured elsewhere or defined inline (`{name:
{command, args, env} | {type: http, url}}`); their tools join its `tools:` list. A pattern in `disallowed_tools`
(`Bash(rm:*)`) disallows the whole tool. opencode's mapping `tools: {write: false, "mcp_*": false, read: true}` is
read as opencode reads it: every tool starts enabled, entries apply in order (last match wins, `*` and `?`
wildcards), and the tools that end disabled become `disallowed_tools`; `true` entries never narrow the set to an
allow list (they only re-enable tools after a wildcard `false`). As in opencode, `edit` stands for every editing
tool (Edit, MultiEdit and NotebookEdit). opencode's `permission:` mapping is honoured where it forbids: `edit:
deny` disallows Write, Edit, MultiEdit and NotebookEdit, `bash: deny` (or `bash: {"*": deny}`) disallows Bash;
`ask` and `allow` are left to agentcli's own permission settings.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from agentcli.mcp import ServerSpec, agent_servers
from agentcli.subagents.definitions.front_matter import (
    KNOWN_KEYS,
    TOOL_TOKEN,
    AgentFileError,
    flag_value,
    is_scalar,
    read_bounded,
    read_front_matter,
    show_value,
    text_value,
)
from agentcli.tools import (
    EDIT_TOOLS,
    KNOWN_TOOL_NAMES,
    SKILL_TOOL_NAME,
    canonical_tool_name,
    covers,
    is_mcp_name,
    names_with,
)

Scope = Literal["built-in", "user", "project"]
FileFormat = Literal["built-in", "agentcli", "claude", "opencode", "codex", "gemini", "qwen"]

#: Tools that change files or run commands (the `mutating` trait): a type given none of them is read-only.
WRITE_TOOLS: tuple[str, ...] = names_with(lambda cls: cls.mutating and not cls.network_only)
MAX_FILE_BYTES = 1_000_000
MAX_NAME_CHARS = 64
_NAME_FORBIDDEN = frozenset("<>`")

_MAX_TURNS_KEYS = ("max_turns", "maxTurns", "maxSteps", "steps")
_TIMEOUT_KEYS = ("timeout_seconds", "timeoutSeconds")
_DISALLOWED_KEYS = ("disallowed_tools", "disallowedTools", "disallowed-tools")
DEFAULT_ALIASES = ("opus", "sonnet", "haiku")
# opencode's `edit` covers every editing tool but Write (its `write` is a tool of its own)
_OPENCODE_GROUPS = {"Edit": tuple(name for name in EDIT_TOOLS if name != "Write")}


def all_tool_names() -> tuple[str, ...]:
    """Every tool an agent could be given: the tools of `tools/` plus Task, TaskOutput, TaskCancel."""
    return KNOWN_TOOL_NAMES


def _allowed(wanted: tuple[str, ...] | None, denied: tuple[str, ...], available: Iterable[str]) -> list[str]:
    """(wanted or available) ∩ available − denied, in `available` order (`mcp__server`: all its tools)."""
    return [
        t for t in available
        if (wanted is None or any(covers(w, t) for w in wanted)) and not any(covers(d, t) for d in denied)
    ]


@lru_cache(maxsize=256)
def _writes_nothing(tools: tuple[str, ...] | None, disallowed: tuple[str, ...]) -> bool:
    """`AgentType.read_only` of these lists, worked out once (every Task call of a fan-out asks it)."""
    return not set(_allowed(tools, disallowed, all_tool_names())) & set(WRITE_TOOLS)


@dataclass(frozen=True, slots=True)
class AgentType:
    """One subagent type: built-in or read from an agent file."""

    name: str
    description: str
    prompt: str = field(repr=False)  # role prompt (file body / built-in prompt)
    tools: tuple[str, ...] | None  # canonical allow list (MCP: `mcp__server__tool`, `mcp__server`); None = all
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None  # raw: main | light | inherit | alias | provider:model | bare id; None = inherit
    max_turns: int | None = None
    timeout_seconds: int | None = None
    effort: str | None = None  # low | medium | high (Claude Code's `effort:`); None = the model's own setting
    fork_context: bool = False  # every task of this type starts from its parent's conversation (`fork_context:`)
    isolation: str | None = None  # "worktree": every task of this type works in its own git worktree (`isolation:`)
    source: str = "built-in"  # "built-in" or the file path
    scope: Scope = "built-in"
    file_format: FileFormat = "built-in"
    warnings: tuple[str, ...] = ()
    mcp_servers: tuple[str, ...] = ()  # `mcpServers:` the servers it uses (their tools join its allow list)
    mcp_specs: tuple[ServerSpec, ...] = ()  # the servers its file defines itself (started when it runs)
    skills: tuple[str, ...] = ()  # `skills:` the skills preloaded into its system prompt (`subagents.skills`)

    def allowed_tools(self, available: Iterable[str]) -> list[str]:
        """(tools or available) ∩ available − disallowed, in `available` order (`mcp__server`: all its tools)."""
        return _allowed(self.tools, self.disallowed_tools, available)

    @property
    def read_only(self) -> bool:
        """Whether the type can never write files or run commands, itself or through delegation.

        Its own tools decide: the runner gives every subagent below a read-only type read-only tools
        only, so with the Task tool every type it can reach is read-only too.
        """
        return _writes_nothing(self.tools, self.disallowed_tools)

    def as_dict(self, *, prompt: bool = True) -> dict[str, Any]:
        """A JSON-ready view, with the effective tools over every known tool."""
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "scope": self.scope,
            "format": self.file_format,
            "source": self.source,
            "model": self.model,
            "tools": list(self.tools) if self.tools is not None else None,
            "disallowed_tools": list(self.disallowed_tools),
            "allowed_tools": self.allowed_tools(all_tool_names()),
            "read_only": self.read_only,
            "max_turns": self.max_turns,
            "timeout_seconds": self.timeout_seconds,
            "effort": self.effort,
            "fork_context": self.fork_context,
            "isolation": self.isolation,
            "warnings": list(self.warnings),
            "skills": list(self.skills),
        }
        if prompt:
            data["prompt"] = self.prompt
        return data


def name_problem(name: str) -> str | None:
    """Why an agent name cannot be used (it reaches prompts, frames and terminals), or None."""
    if len(name) > MAX_NAME_CHARS:
        return f"the name is longer than {MAX_NAME_CHARS} characters"
    for ch in name:
        if ch in _NAME_FORBIDDEN:
            return f"the name contains {ch!r} (not allowed: < > `)"
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            return f"the name contains a control character (U+{ord(ch):04X})"
    return None


def _tool_items(value: Any, key: str, warnings: list[str]) -> list[str] | None:
    """The names of a comma/space separated string or a YAML list; None when absent or unusable."""
    if value is None:
        return None
    if isinstance(value, str):
        items = TOOL_TOKEN.findall(value)
    elif isinstance(value, list):
        items = []
        for item in value:
            if item is None:
                continue
            if not is_scalar(item):
                warnings.append(f"'{key}' entry ignored: expected a tool name, got {show_value(item)}")
                continue
            items += TOOL_TOKEN.findall(str(item))
    else:
        warnings.append(f"'{key}' ignored: expected a comma-separated string or a list")
        return None
    return items


def _canonical(name: str) -> str | None:
    if name.strip().lower() == SKILL_TOOL_NAME.lower():
        return SKILL_TOOL_NAME  # exists once the session has skills (`subagents.skill_tool`)
    return None if "(" in name else canonical_tool_name(name)


def _allow_list(items: list[str], lacking: list[str]) -> tuple[str, ...] | None:
    if any(item in ("*", "all", "All") for item in items):
        return None
    tools: list[str] = []
    for item in items:
        canonical = item if is_mcp_name(item) else _canonical(item)  # MCP tools are known once their server runs
        if canonical is None:
            lacking.append(item)
        elif canonical not in tools:
            tools.append(canonical)
    return tuple(tools)


def _deny_list(items: list[str], warnings: list[str]) -> list[str]:
    denied: list[str] = []
    for item in items:
        if is_mcp_name(item):
            denied.append(item)
            continue
        canonical = canonical_tool_name(item.split("(", 1)[0]) if "(" in item else canonical_tool_name(item)
        if canonical is None:
            continue  # a tool agentcli lacks is never given anyway
        if "(" in item:
            warnings.append(f"pattern rules are not supported: '{item}' disallows all of {canonical}")
        if canonical not in denied:
            denied.append(canonical)
    return denied


def _opencode_tools(mapping: Mapping[Any, Any], lacking: list[str], warnings: list[str]) -> list[str]:
    """opencode's `tools:` mapping → disallowed tools (all start enabled; last matching entry wins)."""
    universe = all_tool_names()
    enabled = dict.fromkeys(universe, True)
    for raw_key, value in mapping.items():
        key = str(raw_key).strip()
        if not isinstance(value, bool):
            warnings.append(f"tools entry '{show_value(key)}' ignored: expected true or false")
            continue
        if any(ch in key for ch in "*?["):
            matches = [n for n in universe if fnmatchcase(n.lower(), key.lower())]
        else:
            canonical = _canonical(key)
            matches = list(_OPENCODE_GROUPS.get(canonical, (canonical,))) if canonical else []
            if not matches and value:
                lacking.append(key)
        for name in matches:
            enabled[name] = value
    return [name for name in universe if not enabled[name]]


def _opencode_permission(value: Any) -> list[str]:
    """Tools an opencode `permission:` mapping denies outright."""
    if not isinstance(value, dict):
        return []
    denied: list[str] = []
    for key, rule in value.items():
        if isinstance(rule, dict):
            rule = rule.get("*")
        if rule != "deny":
            continue
        if str(key).lower() == "edit":
            denied += EDIT_TOOLS  # Write, Edit, MultiEdit, NotebookEdit
        elif str(key).lower() == "bash":
            denied.append("Bash")
    return denied


def _model(value: str | None, file_format: FileFormat, aliases: Iterable[str], warnings: list[str]) -> str | None:
    from agentcli.llm import PROVIDERS

    if value is None:
        return None
    if "/" in value and ":" not in value:
        provider, _, model = value.partition("/")
        if file_format == "opencode" or provider in PROVIDERS:
            value = f"{provider}:{model}"
    lowered = value.lower()
    if lowered in ("main", "light", "inherit"):
        return lowered
    for alias in aliases:
        if alias.lower() == lowered:
            return alias
    provider, sep, model = value.partition(":")
    if sep and model:
        if provider not in PROVIDERS:
            warnings.append(
                f"model '{value}': unknown provider '{provider}' (known: {', '.join(PROVIDERS)}); kept as written"
            )
        return value
    known = ", ".join(["main", "light", "inherit", *aliases])
    warnings.append(
        f"model '{value}' is not one of {known} or provider:model; it is used as a model id of the main provider"
    )
    return value


def _positive_int(data: Mapping[str, Any], keys: tuple[str, ...], warnings: list[str]) -> int | None:
    for key in keys:
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        warnings.append(f"'{key}: {show_value(value)}' ignored: expected a whole number of at least 1")
    return None


def _effort(data: Mapping[str, Any], warnings: list[str]) -> str | None:
    value = text_value(data, "effort", warnings)
    if value is None or value.lower() in ("low", "medium", "high"):
        return value.lower() if value else None
    warnings.append(f"'effort: {show_value(value)}' ignored: expected low, medium or high")
    return None


def _isolation(data: Mapping[str, Any], warnings: list[str]) -> str | None:
    value = text_value(data, "isolation", warnings)
    if value is None or value.strip().lower() in ("worktree", "remote"):
        return value.strip().lower() if value else None
    warnings.append(f"'isolation: {show_value(value)}' ignored: expected worktree or remote")
    return None


def _name_and_description(
    data: Mapping[str, Any], stem: str, file_format: FileFormat, warnings: list[str]
) -> tuple[str, str]:
    """The agent's name and description; AgentFileError when it is not a usable subagent (unknown keys warned)."""
    mode = data.get("mode")
    if isinstance(mode, str) and mode.strip().lower() == "primary":
        raise AgentFileError("primary agent, not a subagent (mode: primary)")
    if data.get("disable") is True:
        raise AgentFileError("disabled (disable: true)")
    name = text_value(data, "name", warnings) or (stem.strip() if file_format == "opencode" else None)
    if not name:
        raise AgentFileError("missing required 'name' in the front matter")
    problem = name_problem(name)
    if problem:
        raise AgentFileError(f"refused agent name: {problem}")
    description = text_value(data, "description", warnings)
    if not description:
        raise AgentFileError("missing required 'description' in the front matter")
    unknown = sorted(k for k in data if k not in KNOWN_KEYS)
    if unknown:
        warnings.append(f"unknown front matter keys ignored: {', '.join(unknown)}")
    return name, description


def _tool_lists(data: Mapping[str, Any], warnings: list[str]) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """(allow list or None for all, disallowed tools) of `tools`, `permission` and the disallowed keys."""
    lacking: list[str] = []
    tools: tuple[str, ...] | None = None
    disallowed: list[str] = []
    raw_tools = data.get("tools")
    if isinstance(raw_tools, dict):
        disallowed += _opencode_tools(raw_tools, lacking, warnings)
    else:
        items = _tool_items(raw_tools, "tools", warnings)
        if items is not None:
            tools = _allow_list(items, lacking)
    disallowed += [t for t in _opencode_permission(data.get("permission")) if t not in disallowed]
    for key in _DISALLOWED_KEYS:
        items = _tool_items(data.get(key), key, warnings)
        for tool in _deny_list(items or [], warnings):
            if tool not in disallowed:
                disallowed.append(tool)
    if lacking:
        warnings.append(f"tools agentcli lacks were dropped: {', '.join(dict.fromkeys(lacking))}")
    return tools, tuple(disallowed)


def read_agent_text(path: Path) -> str:
    """The text of an agent file, read bounded (at most `MAX_FILE_BYTES`), UTF-8; AgentFileError otherwise."""
    return read_bounded(path, MAX_FILE_BYTES)


def parse_agent_file(
    path: Path,
    *,
    scope: Scope,
    file_format: FileFormat,
    aliases: Iterable[str] | None = None,
    source: str | None = None,
) -> AgentType:
    """Read one agent file. Raises AgentFileError (the one-line reason) when it must be skipped."""
    data, body, warnings = read_front_matter(read_agent_text(path))
    return agent_from_front_matter(
        data,
        body,
        stem=path.stem,
        scope=scope,
        file_format=file_format,
        aliases=DEFAULT_ALIASES if aliases is None else tuple(aliases),
        source=source or str(path),
        warnings=warnings,
    )


def agent_from_front_matter(
    data: Mapping[str, Any],
    body: str,
    *,
    stem: str,
    scope: Scope,
    file_format: FileFormat,
    aliases: Iterable[str],
    source: str,
    warnings: list[str] | None = None,
) -> AgentType:
    """Build the AgentType of parsed front matter and body; AgentFileError when it must be skipped."""
    warnings = list(warnings or [])
    name, description = _name_and_description(data, stem, file_format, warnings)
    tools, disallowed = _tool_lists(data, warnings)
    servers, specs, server_warnings = agent_servers(
        data.get("mcpServers"), origin=f"agent file {source}", project=scope == "project"
    )
    warnings += server_warnings
    if tools is not None:  # the servers it names are its own: their tools join its allow list
        tools = (*tools, *(f"mcp__{name}" for name in servers if f"mcp__{name}" not in tools))

    model = _model(text_value(data, "model", warnings), file_format, aliases, warnings)
    skills = _tool_items(data.get("skills"), "skills", warnings) or []
    prompt = body.strip()
    if not prompt:
        warnings.append("empty body: the description is used as the role prompt")
        prompt = description
    return AgentType(
        name=" ".join(name.split()),
        description=description,
        prompt=prompt,
        tools=tools,
        disallowed_tools=disallowed,
        model=model,
        max_turns=_positive_int(data, _MAX_TURNS_KEYS, warnings),
        timeout_seconds=_positive_int(data, _TIMEOUT_KEYS, warnings),
        effort=_effort(data, warnings),
        fork_context=flag_value(data, "fork_context", False, warnings),
        isolation=_isolation(data, warnings),
        source=source,
        scope=scope,
        file_format=file_format,
        warnings=tuple(warnings),
        mcp_servers=servers,
        mcp_specs=tuple(specs),
        skills=tuple(dict.fromkeys(skills)),
    )
