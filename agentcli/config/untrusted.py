"""The project layer of an untrusted workspace may narrow what agentcli does, never widen it.

`narrow_project_layer` walks the project file's leaves against the layers merged below it
(defaults, user file) and keeps only what cannot widen:

- `permissions.mode`: only when at least as strict as the value below (auto < accept_edits < ask < readonly);
- `permissions.allow`, `permissions.additional_directories`, `agent.bash_pass_env`, `web_fetch.allow_private_hosts`:
  only when every entry is already allowed below (a project may not add a folder the tools work in);
- `hooks`: never (a hook is a command agentcli runs: an untrusted project starts none);
- `permissions.allow_mutating_in_run`, `context.auto_compact`, `task_tool.enabled`, `task_tool.allow_model_override`,
  `task_tool.cache_results`: only `false`;
- limits on how long, how much and how many (`agent.max_turns`, `task_tool.max_tokens`, `max_tool_calls`,
  `max_depth`, `max_concurrent`, the timeouts, `agent.bash_output_limit_bytes`, `read_max_chars`,
  `web_fetch.max_download_bytes`, `models.<name>.max_output_tokens`, `llm.max_retries`, `shell.max_background`, …:
  `_CEILINGS`): only
  at most the value below (a project may lower a limit, never raise it);
- `context.compact_threshold`: only at least the value below (never more compactions than the person set);
- `permissions.deny`, `permissions.ask`, `task_tool.deny_tools`: united with the lists below (never dropped);
- `models.<name>.base_url` / `api_key` / `provider`: never (no credential goes to a URL it names);
- spending limits (`budget.session_max_usd`, `budget.session_max_tokens`, `task_tool.max_cost_usd`):
  only a limit at most the one below (0 or "" means none: a project may set a limit, never lift one);
- `mcp.*`: never (an MCP server is a process started, or a URL sent requests and headers);
- `lsp.servers.*`: only `disabled = true` (a language server is a command); `lsp.enabled`: only `false`;
  `lsp.wait_seconds`, `first_wait_seconds`, `max_servers`: `_CEILINGS`;
- `checkpoints.*`: never (a project may not take the person's undo away);
- `executor.*`: never (a cluster address is where the workspace and a provider key would be sent);
- `ui.status_line`: never (a command agentcli runs);
- `plugins.dirs`: never (a plugin's hooks and servers are commands); `plugins.enabled`: only `false`;
- `web_search.backend`: only `"none"`; `web_search.url` / `model`: never (queries would go where the project says);
  `web_search.blocked_domains`: united with the lists below; `web_search.allowed_domains`: only a non-empty list
  within the one below (any list when none is set below: it narrows); its limits are `_CEILINGS`;
- `sandbox.mode`: only when at least as strict as the value below (off < auto < required); `sandbox.network`:
  only `"deny"`; `sandbox.deny_read`: united with the lists below;
- everything else (model ids, aliases, logging, context shaping, the UI) applies as usual.

An ignored value equal to the one below is not reported (trusting would change nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agentcli.config.layers import KeyPath, dotted, leaves
from agentcli.status import PERMISSION_MODE_STRICTNESS

# Keyed by any string a file may hold, so an unknown value is a plain miss.
_STRICTNESS: dict[str, int] = {mode: rank for mode, rank in PERMISSION_MODE_STRICTNESS.items()}
_SUBSET_LISTS: frozenset[KeyPath] = frozenset(
    {("permissions", "allow"), ("permissions", "additional_directories"), ("agent", "bash_pass_env"),
     ("web_fetch", "allow_private_hosts")}
)
_UNION_LISTS: frozenset[KeyPath] = frozenset(
    {("permissions", "deny"), ("permissions", "ask"), ("task_tool", "deny_tools"), ("sandbox", "deny_read"),
     ("web_search", "blocked_domains")}
)
_SANDBOX_STRICTNESS: dict[str, int] = {"off": 0, "auto": 1, "required": 2}
_ENDPOINT_KEYS = frozenset({"base_url", "api_key", "provider"})
_SPENDING_LIMITS: frozenset[KeyPath] = frozenset(
    {("budget", "session_max_usd"), ("budget", "session_max_tokens"), ("task_tool", "max_cost_usd")}
)
_ONLY_FALSE: frozenset[KeyPath] = frozenset({
    ("permissions", "allow_mutating_in_run"), ("context", "auto_compact"),
    ("task_tool", "enabled"), ("task_tool", "allow_model_override"), ("task_tool", "cache_results"),
    ("lsp", "enabled"),
})
#: Limits a project may lower, never raise: how long, how much and how many agentcli does for the person.
_CEILINGS: frozenset[KeyPath] = frozenset({
    *(("llm", key) for key in ("max_retries", "request_timeout_seconds", "connect_timeout_seconds")),
    *(("task_tool", key) for key in ("max_depth", "default_timeout_seconds", "max_timeout_seconds",
                                     "idle_timeout_seconds", "max_tokens", "max_result_tokens", "max_tool_calls",
                                     "max_concurrent")),
    *(("agent", key) for key in ("max_turns", "bash_timeout_seconds", "bash_output_limit_bytes",
                                 "tool_timeout_seconds", "read_max_chars")),
    *(("web_fetch", key) for key in ("max_download_bytes", "max_output_chars", "timeout_seconds", "max_redirects")),
    *(("web_search", key) for key in ("max_uses", "max_results", "max_output_chars", "timeout_seconds")),
    ("context", "server_window_timeout_seconds"),
    ("shell", "max_background"), ("shell", "max_output_bytes"),
    *(("lsp", key) for key in ("wait_seconds", "first_wait_seconds", "max_servers")),
})
_MODEL_CEILINGS = frozenset({"max_output_tokens", "thinking_budget_tokens"})
#: What `below` returns for a key no lower layer sets.
MISSING = object()
_MISSING = MISSING


def _is_endpoint(path: KeyPath) -> bool:
    return len(path) >= 3 and path[0] == "models" and path[1] != "aliases" and path[2] in _ENDPOINT_KEYS


def _is_ceiling(path: KeyPath) -> bool:
    if path in _CEILINGS:
        return True
    return len(path) == 3 and path[0] == "models" and path[1] != "aliases" and path[2] in _MODEL_CEILINGS


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _decide(path: KeyPath, value: object, below: Any) -> tuple[bool, object]:
    """(apply?, value to assign) for one leaf of an untrusted project file."""
    if _is_endpoint(path) or path[:1] in (("hooks",), ("mcp",), ("checkpoints",), ("executor",)) \
            or path in (("ui", "status_line"), ("plugins", "dirs")):
        return False, value
    if path == ("plugins", "enabled"):
        return value is False, value
    if path[:2] == ("lsp", "servers"):  # a command to run: a project may only turn a server off
        return len(path) == 4 and path[3] == "disabled" and value is True, value
    if path in _SPENDING_LIMITS:
        from agentcli.config.schema import spending_limit  # the schema's own reading of a limit

        try:
            limit, lower = spending_limit(value), spending_limit(None if below is _MISSING else below)
        except ValueError:
            return True, value  # not a limit at all: validation refuses it with its own message
        if limit is None:
            return lower is None, value  # "no limit" may only stand where there is none already
        return lower is None or limit <= lower, value
    if path == ("permissions", "mode"):
        if below is _MISSING or not isinstance(value, str) or value not in _STRICTNESS:
            return True, value  # an invalid value fails validation with its own message
        return _STRICTNESS[value] >= _STRICTNESS.get(str(below), 0), value
    if path == ("sandbox", "mode"):
        if below is _MISSING or not isinstance(value, str) or value not in _SANDBOX_STRICTNESS:
            return True, value  # an invalid value fails validation with its own message
        return _SANDBOX_STRICTNESS[value] >= _SANDBOX_STRICTNESS.get(str(below), 0), value
    if path[:1] == ("web_search",) and path[1:] in (("backend",), ("url",), ("model",), ("allowed_domains",)):
        return _search_endpoint(path[1], value, below), value
    if path == ("sandbox", "network"):
        return value == "deny", value
    if path in _ONLY_FALSE:
        return value is False, value  # anything else (true, or a value that might coerce to it) is ignored
    if _is_ceiling(path):
        if not (_is_number(value) and _is_number(below)):
            return True, value  # an invalid value fails validation with its own message
        return value <= below, value
    if path == ("context", "compact_threshold"):
        if below is _MISSING or isinstance(value, bool) or not isinstance(value, int | float):
            return True, value  # an invalid value fails validation with its own message
        return value >= below, value
    if path in _SUBSET_LISTS:
        if not isinstance(value, list):
            return True, value
        allowed = below if isinstance(below, list) else []
        return all(item in allowed for item in value), value
    if path in _UNION_LISTS and isinstance(value, list) and isinstance(below, list):
        united = list(below) + [item for item in value if item not in below]
        return True, united
    return True, value


def _search_endpoint(key: str, value: object, below: Any) -> bool:
    """Whether an untrusted project's `web_search.<key>` applies: it may turn search off or narrow its domains,
    never say where queries go."""
    if key == "backend":
        return value == "none"
    if key == "allowed_domains":
        if not isinstance(value, list):
            return True  # validation refuses it with its own message
        lower = below if isinstance(below, list) else []
        return bool(value) and (not lower or all(item in lower for item in value))
    return False


def narrow_project_layer(
    data: Mapping[str, Any], below: Callable[[KeyPath], Any]
) -> tuple[list[tuple[KeyPath, object]], dict[str, object]]:
    """The leaves of the untrusted project file `data` that may apply, and those that may not.

    `below(path)` is the value the lower layers give a key (`MISSING` if none). Returns the leaves to assign
    (a united deny list in place of the file's) and the ignored dotted keys (in file order) with the value
    the file gives them.
    """
    kept: list[tuple[KeyPath, object]] = []
    ignored: dict[str, object] = {}
    for path, value in leaves(data):
        lower = below(path)
        apply, assigned = _decide(path, value, lower)
        if not apply:
            if value != lower and not (lower is None and value == ""):
                ignored[dotted(path)] = value
            continue
        if path in _UNION_LISTS and isinstance(value, list) and isinstance(lower, list):
            if any(item not in value for item in lower):
                ignored[dotted(path) + " (removing entries)"] = value
            if assigned == lower:
                continue  # nothing added: the value and its origin stay the lower layer's
        kept.append((path, assigned))
    return kept, ignored
