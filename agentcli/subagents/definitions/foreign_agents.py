"""Other tools' agent definitions, read unchanged as agentcli subagent types.

- **Codex** (`.codex/agents/**/*.toml`, `$CODEX_HOME/agents/` or `~/.codex/agents/`): a TOML file, as Codex's
  `config/agent_roles.rs` reads it: `name`, `description` and `developer_instructions` (the role prompt) are
  required; `model` and `model_reasoning_effort` (minimal/low → low, medium, high/xhigh → high) apply;
  `sandbox_mode = "read-only"` gives the type only the read-only tools (workspace-write and danger-full-access
  give every tool, which agentcli's permission rules and Bash sandbox still govern). Every other key (Codex
  config such as `nickname_candidates`, `approval_policy`, `mcp_servers`) is named once as ignored.
- **Gemini CLI** (`.gemini/agents/*.md`, `~/.gemini/agents/`; files starting with `_` are skipped, as Gemini
  does): YAML front matter `name`, `description`, `tools` (Gemini's names: `read_file`, `grep_search`,
  `run_shell_command`, `mcp_server_tool`, …), `model`, `max_turns`, `timeout_mins`; the body is the role
  prompt. `kind: remote` (an A2A agent) is skipped; `temperature`, `display_name`, `policy`, `mcp_servers` are
  named once as ignored.
- **Qwen Code** (`.qwen/agents/*.md`, `~/.qwen/agents/`): Claude Code's front matter (Qwen mirrors it) with
  Qwen's tool names, plus its older `modelConfig.model` and `runConfig.max_turns` / `max_time_minutes`;
  `approvalMode`, `color`, `temperature` and the rest of those tables are named once as ignored.
- **opencode** `agent` entries of `opencode.json` (`<workspace>/opencode.json`, `$XDG_CONFIG_HOME/opencode/`):
  each entry is read like an opencode agent file (`description`, `mode`, `model`, `tools`, `permission`, `steps`,
  `disable`) with `prompt` as the role prompt (`{file:./x.md}` reads a file beside the config, which for a
  project must stay inside the workspace). `opencode.jsonc` with comments is not read (named once).

Tool names map onto agentcli's (`FOREIGN_TOOL_NAMES`); tools agentcli lacks are dropped with one warning.
Model names go through `[models.aliases]` like any agent file's. A file that cannot be used is one
`AgentFileError` line; what it says that agentcli cannot use is one warning per file, never fatal.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agentcli.subagents.definitions.agent_files import (
    AgentType,
    FileFormat,
    Scope,
    agent_from_front_matter,
    read_agent_text,
)
from agentcli.subagents.definitions.front_matter import AgentFileError, read_front_matter
from agentcli.tools import READ_ONLY_TOOLS

#: Gemini CLI's and Qwen Code's tool names (and their display names), keyed without case, `_`, `-` or spaces.
FOREIGN_TOOL_NAMES: dict[str, str] = {
    "readfile": "Read", "readmanyfiles": "Read", "writefile": "Write", "replace": "Edit", "edit": "Edit",
    "runshellcommand": "Bash", "shell": "Bash", "grepsearch": "Grep", "searchfilecontent": "Grep",
    "searchtext": "Grep", "glob": "Glob", "findfiles": "Glob", "listdirectory": "LS", "readfolder": "LS",
    "webfetch": "WebFetch", "googlewebsearch": "WebSearch", "websearch": "WebSearch", "writetodos": "TodoWrite",
    "todowrite": "TodoWrite", "task": "Task",
    "activateskill": "Skill",  # Gemini CLI's skill loader: agentcli's Skill tool (`subagents.skill_tool`)
}  # fmt: skip
_EFFORTS = {"none": "low", "minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}
_SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
_CODEX_KEYS = frozenset({"name", "description", "developer_instructions", "model", "model_reasoning_effort",
                         "sandbox_mode"})
_GEMINI_KEYS = frozenset({"name", "description", "tools", "model", "max_turns", "timeout_mins", "kind"})
_QWEN_DROPPED = frozenset({"approvalMode", "color", "temperature", "top_p"})
_OPENCODE_KEYS = frozenset({"description", "mode", "model", "prompt", "tools", "permission", "steps", "maxSteps",
                            "disable", "temperature", "top_p", "hidden", "color", "options"})
_FILE_REF = re.compile(r"^\{file:(.+)\}$")


def _key(name: str) -> str:
    return "".join(ch for ch in name.strip().lower() if ch not in "_- ")


def foreign_tool(name: str) -> str:
    """agentcli's name for a Gemini CLI or Qwen Code tool name (`read_file` → Read, `mcp_github_get` →
    `mcp__github__get`); other names unchanged (agentcli's own reading then keeps or drops them)."""
    text = name.strip()
    if text.startswith("mcp_") and not text.startswith("mcp__"):
        server, sep, tool = text[len("mcp_"):].partition("_")
        if sep and server and tool and tool != "*":
            return f"mcp__{server}__{tool}"
        if sep and server and tool == "*":
            return f"mcp__{server}"
    return FOREIGN_TOOL_NAMES.get(_key(text), text)


def _tool_list(value: object) -> object:
    """A `tools` list or comma-separated string with each name mapped; anything else unchanged."""
    if isinstance(value, str):
        return [foreign_tool(item) for item in value.split(",") if item.strip()]
    if isinstance(value, list):
        return [foreign_tool(item) if isinstance(item, str) else item for item in value]
    return value


def _ignored(keys: Iterable[str], tool: str) -> list[str]:
    names = sorted(dict.fromkeys(keys))
    return [f"{tool} keys with no meaning in agentcli ignored: {', '.join(names)}"] if names else []


def parse_codex_agent(path: Path, *, scope: Scope, aliases: Iterable[str]) -> AgentType:
    """One Codex agent role file (TOML). AgentFileError: the one-line reason it is skipped."""
    try:
        data = tomllib.loads(read_agent_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise AgentFileError(f"not valid TOML: {exc}") from None
    except RecursionError:
        raise AgentFileError("not valid TOML: nested too deeply") from None
    warnings: list[str] = []
    for key in ("name", "description", "developer_instructions"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise AgentFileError(f"'{key}' must be a string")
        if not (value or "").strip():
            raise AgentFileError(f"missing required '{key}' (Codex requires it)")
    front: dict[str, Any] = {"name": data["name"], "description": data["description"]}
    if isinstance(data.get("model"), str):
        front["model"] = data["model"]
    effort = data.get("model_reasoning_effort")
    if effort is not None:
        if isinstance(effort, str) and effort.strip().lower() in _EFFORTS:
            front["effort"] = _EFFORTS[effort.strip().lower()]
        else:
            warnings.append(f"model_reasoning_effort {effort!r} ignored: expected {', '.join(_EFFORTS)}")
    sandbox = data.get("sandbox_mode")
    if sandbox == "read-only":
        front["tools"] = list(READ_ONLY_TOOLS)
    elif sandbox == "danger-full-access":
        warnings.append("sandbox_mode danger-full-access: every tool, still under agentcli's permission rules and "
                        "Bash sandbox")
    elif sandbox is not None and sandbox not in _SANDBOX_MODES:
        warnings.append(f"sandbox_mode {sandbox!r} ignored: expected {', '.join(_SANDBOX_MODES)}")
    warnings += _ignored((k for k in data if k not in _CODEX_KEYS), "Codex")
    return agent_from_front_matter(front, data["developer_instructions"], stem=path.stem, scope=scope,
                                   file_format="codex", aliases=aliases, source=str(path), warnings=warnings)


def parse_markdown_agent(path: Path, *, scope: Scope, file_format: FileFormat, aliases: Iterable[str]) -> AgentType:
    """One Gemini CLI or Qwen Code agent file (Markdown with YAML front matter)."""
    data, body, warnings = read_front_matter(read_agent_text(path))
    if file_format == "gemini":
        front, dropped = _gemini(data)
    else:
        front, dropped = _qwen(data)
    warnings += _ignored(dropped, "Gemini CLI" if file_format == "gemini" else "Qwen Code")
    return agent_from_front_matter(front, body, stem=path.stem, scope=scope, file_format=file_format,
                                   aliases=aliases, source=str(path), warnings=warnings)


def _gemini(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    kind = data.get("kind", "local")
    if kind == "remote" or "agent_card_url" in data:
        raise AgentFileError("a remote (A2A) agent: agentcli runs local agents only")
    front = {k: v for k, v in data.items() if k in _GEMINI_KEYS and k not in ("kind", "timeout_mins", "tools")}
    if "tools" in data:
        front["tools"] = _tool_list(data["tools"])
    minutes = data.get("timeout_mins")
    if isinstance(minutes, int) and not isinstance(minutes, bool) and minutes > 0:
        front["timeout_seconds"] = minutes * 60
    elif minutes is not None:
        front["timeout_seconds"] = minutes  # agentcli's reading names the bad value
    return front, [k for k in data if k not in _GEMINI_KEYS]


def _qwen(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    front = {k: v for k, v in data.items() if k not in _QWEN_DROPPED and k not in ("modelConfig", "runConfig")}
    dropped = [k for k in data if k in _QWEN_DROPPED]
    for key in ("tools", "disallowedTools", "disallowed_tools"):
        if key in front:
            front[key] = _tool_list(front[key])
    model_config = data.get("modelConfig")
    if isinstance(model_config, dict):
        if isinstance(model_config.get("model"), str) and "model" not in front:
            front["model"] = model_config["model"]
        dropped += [f"modelConfig.{k}" for k in model_config if k != "model"]
    run_config = data.get("runConfig")
    if isinstance(run_config, dict):
        if "max_turns" in run_config and "max_turns" not in front:
            front["max_turns"] = run_config["max_turns"]
        minutes = run_config.get("max_time_minutes")
        if isinstance(minutes, int | float) and not isinstance(minutes, bool) and minutes > 0:
            front.setdefault("timeout_seconds", max(1, int(minutes * 60)))
        dropped += [f"runConfig.{k}" for k in run_config if k not in ("max_turns", "max_time_minutes")]
    return front, dropped


def opencode_config_agents(
    path: Path, *, scope: Scope, aliases: Iterable[str], root: Path | None
) -> tuple[list[AgentType], list[tuple[str, str]]]:
    """The subagents of one opencode config file's `agent` object, and (source, reason) for each entry skipped.
    `root`: the folder `{file:…}` prompts must stay inside (a project's workspace); None for the person's own."""
    try:
        text = read_agent_text(path)
    except AgentFileError as exc:
        return [], [(str(path), str(exc))]
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = " (comments in opencode.jsonc are not read)" if path.suffix == ".jsonc" else ""
        return [], [(str(path), f"not valid JSON{hint}: {exc.msg} at line {exc.lineno}")]
    agents = doc.get("agent") if isinstance(doc, dict) else None
    if agents is None:
        return [], []
    if not isinstance(agents, dict):
        return [], [(str(path), "'agent' must be an object of agents")]
    found: list[AgentType] = []
    problems: list[tuple[str, str]] = []
    for name, entry in agents.items():
        source = f"{path} (agent.{name})"
        try:
            if not isinstance(entry, dict):
                raise AgentFileError("an agent entry must be an object")
            found.append(_opencode_entry(str(name), entry, path, source, scope, aliases, root))
        except AgentFileError as exc:
            problems.append((source, str(exc)))
    return found, problems


def _opencode_entry(
    name: str, entry: Mapping[str, Any], path: Path, source: str, scope: Scope, aliases: Iterable[str],
    root: Path | None,
) -> AgentType:
    front = {k: v for k, v in entry.items() if k in _OPENCODE_KEYS and k != "prompt"}
    front["name"] = name
    prompt = entry.get("prompt")
    body = ""
    if isinstance(prompt, str):
        match = _FILE_REF.match(prompt.strip())
        body = _prompt_file(match.group(1).strip(), path, root) if match else prompt
    elif prompt is not None:
        raise AgentFileError("'prompt' must be text or {file:path}")
    warnings = _ignored((k for k in entry if k not in _OPENCODE_KEYS), "opencode")
    return agent_from_front_matter(front, body, stem=name, scope=scope, file_format="opencode", aliases=aliases,
                                   source=source, warnings=warnings)


def _prompt_file(ref: str, config: Path, root: Path | None) -> str:
    """The text of a `{file:…}` prompt, relative to the config file's folder (`~/` from home)."""
    target = Path(ref).expanduser()
    if not target.is_absolute():
        target = config.parent / target
    if root is not None:
        try:
            real = target.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise AgentFileError(f"prompt file {ref}: {getattr(exc, 'strerror', None) or exc}") from None
        if not real.is_relative_to(root.resolve()):
            raise AgentFileError(f"prompt file {ref} is outside the workspace; not read")
    if not target.is_file():  # never a named pipe or a device (a read would hang)
        raise AgentFileError(f"prompt file {ref} is not a regular file")
    try:
        return read_agent_text(target)
    except AgentFileError as exc:
        raise AgentFileError(f"prompt file {ref}: {exc}") from None
