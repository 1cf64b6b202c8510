"""Typed configuration: pydantic-settings' `Settings` with one pydantic model per section.

Imported lazily by `agentcli.config.load` (`agentcli --help` needs no pydantic).
The defaults here equal `default_config.toml`; a test keeps the two in step.
"""

from __future__ import annotations

import re
import typing
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

Provider = Literal["anthropic", "openai", "openai-compatible"]
PROVIDERS: tuple[str, ...] = typing.get_args(Provider)
RESERVED_ALIASES = frozenset({"main", "light", "inherit"})
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\(.*\))?$", re.DOTALL)


def _check_alias_name(name: str) -> str:
    if not name:
        raise ValueError("alias names must not be empty")
    if name in RESERVED_ALIASES:
        raise ValueError(f"alias name {name!r} is reserved")
    return name


def _check_alias_target(target: str) -> str:
    if target in ("main", "light"):
        return target
    provider, sep, model = target.partition(":")
    if not sep or not model or provider not in PROVIDERS:
        raise ValueError(f"must be 'main', 'light' or 'provider:model' with provider one of {', '.join(PROVIDERS)}")
    return target


def _check_tool_name(name: str) -> str:
    if not name.strip():
        raise ValueError("tool names must not be empty")
    return name


def _check_rule(rule: str) -> str:
    if not _RULE.match(rule):
        raise ValueError("a rule must look like Tool or Tool(pattern), e.g. 'Bash(git status*)'")
    return rule


def _check_env_name(name: str) -> str:
    if not _ENV_NAME.match(name):
        raise ValueError("must be an environment variable name, e.g. 'OPENAI_API_KEY'")
    return name


AliasName = Annotated[str, AfterValidator(_check_alias_name)]
AliasTarget = Annotated[str, AfterValidator(_check_alias_target)]
ToolName = Annotated[str, AfterValidator(_check_tool_name)]
PermissionRule = Annotated[str, AfterValidator(_check_rule)]
EnvVarName = Annotated[str, AfterValidator(_check_env_name)]


def spending_limit(value: object) -> float | None:
    """A spending limit as the layers write it: a number, with 0 (how the files write "unset") or "" (how
    `config show` prints it) for no limit. Text and booleans are refused (ValueError), so a limit read
    from a file is always the number the file shows; an untrusted layer is compared on this same value."""
    if isinstance(value, str) and not value.strip():
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number (0 for no limit)")
    return None if value == 0 else float(value)


def _limit_field(value: object) -> object:
    limit = spending_limit(value)
    return value if limit is not None else None  # the number itself: an int field stays an int


UsdLimit = Annotated[Annotated[float, Field(gt=0)] | None, BeforeValidator(_limit_field)]
TokenLimit = Annotated[Annotated[int, Field(gt=0)] | None, BeforeValidator(_limit_field)]


class _Section(BaseModel):
    """Base of every config table: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _cross_field(field: str, other: str) -> PydanticCustomError:
    """An error naming two keys of one table; `agentcli.config.load` adds values and sources."""
    return PydanticCustomError("cross_field", "must be <= {other}", {"field": field, "other": other})


class ModelSettings(_Section):
    """One model endpoint (`[models.main]`, `[models.light]`)."""

    provider: Provider = "anthropic"
    model: str = Field("claude-sonnet-5-5", min_length=1)
    base_url: str | None = None
    api_key: SecretStr | None = None
    max_output_tokens: int = Field(8192, ge=1, le=1_000_000)
    thinking: Literal["", "off", "on", "adaptive"] = ""
    thinking_budget_tokens: int = Field(4096, ge=1024, le=1_000_000)
    reasoning_effort: Literal["", "minimal", "low", "medium", "high"] = ""
    context_window: int = Field(0, ge=0, le=100_000_000)  # tokens; 0: from the price/model table

    @model_validator(mode="after")
    def _budget_fits(self) -> ModelSettings:
        if self.thinking == "on" and self.thinking_budget_tokens > self.max_output_tokens:
            raise _cross_field("thinking_budget_tokens", "max_output_tokens")
        return self

    @field_validator("base_url", "api_key", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """`""` means "not set": use the SDK's default or its environment variable."""
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL (or empty for the SDK default)")
        return value


class LightModelSettings(ModelSettings):
    """`[models.light]`: same fields, cheaper defaults."""

    model: str = Field("claude-haiku-5-5", min_length=1)
    max_output_tokens: int = Field(4096, ge=1, le=1_000_000)


def _default_aliases() -> dict[str, str]:
    return {"opus": "main", "sonnet": "main", "haiku": "light"}


class ModelsSettings(_Section):
    """`[models]`: the two configured models and the names agent files use for them."""

    main: ModelSettings = Field(default_factory=ModelSettings)
    light: LightModelSettings = Field(default_factory=LightModelSettings)
    aliases: dict[AliasName, AliasTarget] = Field(default_factory=_default_aliases)


class LlmSettings(_Section):
    """`[llm]`: retries and timeouts of every model request."""

    max_retries: int = Field(4, ge=0, le=10)
    retry_initial_delay_seconds: float = Field(0.5, gt=0, le=60)
    retry_max_delay_seconds: float = Field(8.0, gt=0, le=600)
    request_timeout_seconds: float = Field(600.0, gt=0, le=86_400)
    connect_timeout_seconds: float = Field(10.0, gt=0, le=600)

    @model_validator(mode="after")
    def _delays_ordered(self) -> LlmSettings:
        if self.retry_initial_delay_seconds > self.retry_max_delay_seconds:
            raise _cross_field("retry_initial_delay_seconds", "retry_max_delay_seconds")
        return self


class TaskToolSettings(_Section):
    """`[task_tool]`: limits and policy of delegation to subagents (SPEC §2)."""

    enabled: bool = True
    max_depth: int = Field(2, ge=0, le=16)
    default_timeout_seconds: int = Field(300, ge=1, le=86_400)
    max_timeout_seconds: int = Field(1800, ge=1, le=86_400)
    idle_timeout_seconds: int = Field(120, ge=1, le=86_400)
    max_tokens: int = Field(50_000, ge=1)
    max_result_tokens: int = Field(2000, ge=1)
    max_tool_calls: int = Field(100, ge=1)
    max_concurrent: int = Field(5, ge=1, le=64)
    on_limit: Literal["queue", "error"] = "queue"
    type_fallback: Literal["error", "normalize", "best_match"] = "normalize"
    allow_model_override: bool = True
    enable_verbose_logging: bool = False
    deny_tools: list[ToolName] = Field(default_factory=list)
    max_cost_usd: UsdLimit = None  # dollar budget of one Task call's subtree; None: no limit
    cache_results: bool = True  # an identical read-only task whose inputs are unchanged reuses its result

    @model_validator(mode="after")
    def _timeouts_ordered(self) -> TaskToolSettings:
        if self.default_timeout_seconds > self.max_timeout_seconds:
            raise _cross_field("default_timeout_seconds", "max_timeout_seconds")
        return self


class BudgetSettings(_Section):
    """`[budget]`: limits on a whole session, the main agent and every subagent below it; None: no limit."""

    session_max_usd: UsdLimit = None
    session_max_tokens: TokenLimit = None


class ContextSettings(_Section):
    """`[context]`: keeping each agent's context inside its model's window."""

    compact_threshold: float = Field(0.8, ge=0.3, le=0.95)
    auto_compact: bool = False  # summarise with the light model (an extra model call) rather than drop the text
    prune_tool_results_chars: int = Field(4000, ge=200, le=10_000_000)
    keep_recent_ratio: float = Field(0.25, ge=0.05, le=0.6)
    max_messages: int = Field(120, ge=20, le=100_000)
    default_window: int = Field(128_000, ge=1000, le=100_000_000)
    server_window_timeout_seconds: float = Field(2.0, ge=0, le=60)  # asking an OpenAI-compatible server; 0: never
    lean_below_tokens: int = Field(32_000, ge=0, le=100_000_000)  # a smaller window gets the lean prompt; 0: never


class PermissionsSettings(_Section):
    """`[permissions]`: which tool calls run without asking."""

    mode: Literal["ask", "accept_edits", "auto", "readonly"] = "ask"  # = status.PermissionMode (a test holds them)
    allow: list[PermissionRule] = Field(default_factory=list)
    deny: list[PermissionRule] = Field(default_factory=list)
    ask: list[PermissionRule] = Field(default_factory=list)  # asked every time, whatever the mode (Claude Code's)
    allow_mutating_in_run: bool = False
    # Folders beside the workspace the file tools and Bash may also work in (`additional_dirs`)
    additional_directories: list[str] = Field(default_factory=list)


class ToolsSettings(_Section):
    """`[tools]`: how the tools are offered to the model."""

    # Named in ToolSearch's list and sent only once asked for: "auto" (the rarely used ones: each tool's `on_demand`
    # trait), "none", or the names (`mcp__server__*` covers a server's tools)
    defer: Literal["auto", "none"] | list[ToolName] = "auto"


class AgentSettings(_Section):
    """`[agent]`: the main agent's loop and its shell."""

    max_turns: int = Field(50, ge=1, le=10_000)
    project_instructions: bool = True
    bash_timeout_seconds: int = Field(120, ge=1, le=86_400)
    bash_output_limit_bytes: int = Field(30_000, ge=100, le=100_000_000)
    bash_pass_env: list[EnvVarName] = Field(default_factory=list)
    tool_timeout_seconds: int = Field(300, ge=1, le=86_400)
    # What one Read returns (~25k tokens, like Claude Code); at least a few 2000-character lines
    read_max_chars: int = Field(100_000, ge=10_000, le=2_000_000)


class LoggingSettings(_Section):
    """`[logging]`."""

    level: Literal["debug", "info", "warning", "error"] = "info"

    @field_validator("level", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value


class UiSettings(_Section):
    """`[ui]`: the TUI."""

    notify: Literal["bell", "osc", "off"] = "bell"  # when an approval waits or a long turn ends
    notify_after_seconds: float = Field(30.0, ge=0, le=86_400)  # a turn at least this long rings when it ends
    theme: str = Field("", max_length=64)  # the TUI's colour theme ("": Textual's default); saved when changed
    output_style: str = Field("", max_length=64)  # the main agent's output style ("": Claude Code's outputStyle)
    status_line: str = Field("", max_length=4096)  # a command printing the status line ("": Claude Code's statusLine)
    vim_mode: bool = False  # vim keys in the prompt (normal and insert modes); /vim toggles it and saves it here


HookEventName = Literal[
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop", "SessionStart"
]  # = hooks.config.HOOK_EVENTS (a test holds them)


class HookCommandSettings(_Section):
    """One hook command, as Claude Code writes it: `{type = "command", command = "...", timeout = 60}`."""

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: float | None = Field(None, gt=0, le=3600)  # seconds; None: the default (60)


class HookMatcherSettings(_Section):
    """Hook commands for the tool names `matcher` matches (a regex, `A|B`, `*` or empty for all)."""

    matcher: str = ""
    hooks: list[HookCommandSettings] = Field(min_length=1)

    @field_validator("matcher")
    @classmethod
    def _check_matcher(cls, value: str) -> str:
        if value not in ("", "*"):
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


class WebFetchSettings(_Section):
    """The WebFetch tool: what it may reach, and how much it reads."""

    allow_private_hosts: list[str] = Field(default_factory=list)  # hosts, IPs or CIDR networks off the public internet
    max_download_bytes: int = Field(5_000_000, ge=1000, le=1_000_000_000)
    max_output_chars: int = Field(100_000, ge=1000, le=10_000_000)
    timeout_seconds: float = Field(30.0, gt=0, le=600)
    max_redirects: int = Field(5, ge=0, le=20)


WebSearchBackend = Literal["auto", "anthropic", "searxng", "brave", "tavily", "exa", "none"]


class WebSearchSettings(_Section):
    """The WebSearch tool (`agentcli.tools.web.search`): where queries go and how much comes back.

    `auto`: Anthropic's server-side search when the agent's model is Anthropic's, else none. API keys come only
    from the environment (BRAVE_API_KEY, TAVILY_API_KEY, EXA_API_KEY).
    """

    backend: WebSearchBackend = "auto"
    url: str = ""  # the SearXNG instance (its JSON API must be enabled), e.g. http://127.0.0.1:8888
    model: str = ""  # the Anthropic model that runs a search ("": the agent's own, when it is Anthropic's)
    max_uses: int = Field(5, ge=1, le=20)  # searches one WebSearch call may make (Anthropic's max_uses)
    max_results: int = Field(10, ge=1, le=50)  # results one call returns (HTTP backends)
    allowed_domains: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    blocked_domains: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    max_output_chars: int = Field(20_000, ge=1000, le=1_000_000)  # the text the model reads of one call
    timeout_seconds: float = Field(60.0, gt=0, le=600)


class SandboxSettings(_Section):
    """`[sandbox]`: the OS sandbox every Bash command runs in (`agentcli.tools.sandbox.policy`)."""

    mode: Literal["auto", "required", "off"] = "auto"  # = tools.sandbox.SandboxMode
    network: Literal["deny", "allow"] = "deny"
    deny_read: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)  # paths no command may read


class ShellSettings(_Section):
    """`[shell]`: commands that run in the background (`Bash(run_in_background=true)`)."""

    max_background: int = Field(8, ge=0, le=256)  # running at once per session; one line when reached
    max_output_bytes: int = Field(1 << 20, ge=1024, le=1 << 30)  # a command's output file keeps its newest bytes


class CheckpointsSettings(_Section):
    """`[checkpoints]`: the workspace's files kept before every prompt, for /rewind and /undo."""

    enabled: bool = True
    max_file_bytes: int = Field(5 << 20, ge=1, le=1 << 40)  # a larger file is left out (and said so)
    max_files: int = Field(100_000, ge=1, le=10_000_000)  # more changed files than this: no checkpoint (said so)


class McpServerSettings(_Section):
    """`[mcp.servers.NAME]`: one MCP server (a process over stdio, or a streamable HTTP URL); `${VAR}` and
    `${VAR:-default}` in its strings are expanded when it starts (`agentcli.mcp.specs`)."""

    type: Literal["stdio", "http", "streamable-http"] | None = None  # default: stdio with `command`, http with `url`
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)


class McpSettings(_Section):
    """`[mcp]`: MCP servers and their time limits."""

    startup_timeout_seconds: float = Field(30.0, gt=0, le=600)
    call_timeout_seconds: float = Field(120.0, gt=0, le=86_400)
    servers: dict[str, McpServerSettings] = Field(default_factory=dict)


class LspServerSettings(_Section):
    """`[lsp.servers.NAME]`: one language server; a built-in's name (basedpyright, pyright, pyrefly, ty, pylsp,
    typescript, gopls, rust-analyzer) changes that entry, any other name adds one (then `command` and `extensions`)."""

    command: list[Annotated[str, Field(min_length=1)]] | None = None  # argv; None: the built-in's
    extensions: list[Annotated[str, Field(min_length=1)]] | None = None  # ".py", ...; None: the built-in's
    initialization_options: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    root_markers: list[Annotated[str, Field(min_length=1)]] | None = None  # files marking a root; None: the built-in's
    disabled: bool = False


class LspSettings(_Section):
    """`[lsp]`: language servers' diagnostics after edits and the LSP tool (`agentcli.lsp`)."""

    enabled: bool = True
    wait_seconds: float = Field(2.0, ge=0, le=60)  # the bounded wait for an edit's diagnostics
    first_wait_seconds: float = Field(10.0, ge=0, le=300)  # the same while a server is still starting
    max_servers: int = Field(4, ge=0, le=64)  # running at once per session
    servers: dict[str, LspServerSettings] = Field(default_factory=dict)


class ExecutorSettings(_Section):
    """`[executor]`: where subagents run. "local" (this process); "ray" also runs `isolation: "remote"` tasks on a
    Ray cluster (`pip install 'agentcli[ray]'`)."""

    kind: Literal["local", "ray"] = "local"
    address: str = ""  # the cluster ("ray://host:10001", "host:6379", "auto"); "": RAY_ADDRESS, else a local Ray
    num_cpus: float = Field(1.0, gt=0, le=1024)  # per remote subagent
    memory_mb: int = Field(0, ge=0, le=16_777_216)  # per remote subagent; 0: Ray's default (none reserved)
    subagents_per_worker: int = Field(4, ge=1, le=256)  # remote subagents one worker process runs at once
    isolate_writers: Literal["", "worktree", "remote"] = ""  # every writing subagent isolated like this
    keep_warm: int = Field(1, ge=0, le=256)  # idle worker processes kept (their reservation held) for the next tasks


class PluginsSettings(_Section):
    """`[plugins]`: Claude Code's plugins beyond those installed (`agentcli plugins`) and enabled."""

    enabled: bool = True  # false: no plugin loads
    dirs: list[str] = Field(default_factory=list, max_length=64)  # plugin folders loaded for the session (--plugin-dir)


class Settings(BaseSettings):
    """The whole validated configuration. dynaconf merges the layers (`agentcli.config.merge`); the merged tables
    are this class's only source (`settings_customise_sources`), so pydantic-settings validates them and reads
    nothing itself."""

    model_config = SettingsConfigDict(extra="forbid", frozen=True, validate_default=True)

    models: ModelsSettings = Field(default_factory=ModelsSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    task_tool: TaskToolSettings = Field(default_factory=TaskToolSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    permissions: PermissionsSettings = Field(default_factory=PermissionsSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    ui: UiSettings = Field(default_factory=UiSettings)
    web_fetch: WebFetchSettings = Field(default_factory=WebFetchSettings)
    web_search: WebSearchSettings = Field(default_factory=WebSearchSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    checkpoints: CheckpointsSettings = Field(default_factory=CheckpointsSettings)
    shell: ShellSettings = Field(default_factory=ShellSettings)
    hooks: dict[HookEventName, list[HookMatcherSettings]] = Field(default_factory=dict)
    mcp: McpSettings = Field(default_factory=McpSettings)
    lsp: LspSettings = Field(default_factory=LspSettings)
    executor: ExecutorSettings = Field(default_factory=ExecutorSettings)
    plugins: PluginsSettings = Field(default_factory=PluginsSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the merged layers, given to the constructor: the environment is one of dynaconf's layers (with
        agentcli's names and trust rules), and no `.env` file or secrets folder is read."""
        return (init_settings,)
