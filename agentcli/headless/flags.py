"""Claude Code's headless command line (`claude -p`, and what the Claude Agent SDK passes), read the way its
parser reads it: a flag's value may follow it or be joined with `=`; list flags (`--allowedTools`, `--add-dir`,
`--mcp-config`, ...) take every following word up to the next flag and may repeat; `--resume` takes an optional
id. Every flag Claude Code documents is known: agentcli honours most (`HONOURED`); the rest are accepted and
named in one warning line each (`IGNORED`, with why), never a usage error. agentcli's own `--cwd`, `--config`,
`--trust` and `--yes` work here too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

Kind = Literal["bool", "value", "optional", "list"]


class FlagError(ValueError):
    """A headless command line agentcli cannot run (a flag without its value, a bad choice): one line."""


@dataclass(frozen=True, slots=True)
class Flag:
    """One flag: its spellings, where its value goes, and how it takes one."""

    names: tuple[str, ...]
    dest: str
    kind: Kind
    choices: tuple[str, ...] = ()


#: Flags agentcli carries out (docs: README, "Driving agentcli from the Claude Agent SDK").
HONOURED: Final[tuple[Flag, ...]] = (
    Flag(("-p", "--print"), "print", "bool"),
    Flag(("--output-format",), "output_format", "value", ("text", "json", "stream-json")),
    Flag(("--input-format",), "input_format", "value", ("text", "stream-json")),
    Flag(("--verbose",), "verbose", "bool"),
    Flag(("--system-prompt",), "system_prompt", "value"),
    Flag(("--system-prompt-file",), "system_prompt_file", "value"),
    Flag(("--append-system-prompt",), "append_system_prompt", "value"),
    Flag(("--append-system-prompt-file",), "append_system_prompt_file", "value"),
    Flag(("--permission-mode",), "permission_mode", "value",
         ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")),
    Flag(("--dangerously-skip-permissions",), "skip_permissions", "bool"),
    Flag(("--permission-prompt-tool",), "permission_prompt_tool", "value"),
    Flag(("--allowedTools", "--allowed-tools"), "allowed_tools", "list"),
    Flag(("--disallowedTools", "--disallowed-tools"), "disallowed_tools", "list"),
    Flag(("--tools",), "tools", "list"),
    Flag(("--max-turns",), "max_turns", "value"),
    Flag(("--max-budget-usd",), "max_budget_usd", "value"),
    Flag(("--model",), "model", "value"),
    Flag(("--fallback-model",), "fallback_model", "value"),
    Flag(("--mcp-config",), "mcp_config", "list"),
    Flag(("--add-dir",), "add_dir", "list"),
    Flag(("--plugin-dir",), "plugin_dir", "list"),
    Flag(("--strict-mcp-config",), "strict_mcp_config", "bool"),
    Flag(("--setting-sources",), "setting_sources", "value"),
    Flag(("--settings",), "settings", "value"),
    Flag(("-c", "--continue"), "continue_", "bool"),
    Flag(("-r", "--resume"), "resume", "optional"),
    Flag(("--session-id",), "session_id", "value"),
    Flag(("--fork-session",), "fork_session", "bool"),
    Flag(("--include-partial-messages",), "include_partial", "bool"),
    Flag(("--replay-user-messages",), "replay_user_messages", "bool"),
    Flag(("--json-schema",), "json_schema", "value"),
    Flag(("--agents",), "agents", "value"),
    Flag(("--effort",), "effort", "value", ("low", "medium", "high", "xhigh", "max")),
    Flag(("--managed-settings",), "managed_settings", "value"),
    # Settings the program sends in its `initialize` request (the TypeScript SDK's `--await-initialize`): agentcli
    # always reads `initialize` before its first turn, and reads every field it names (`headless.init_fields`).
    Flag(("--await-initialize",), "await_initialize", "bool"),
    Flag(("--initialize-fields",), "initialize_fields", "value"),
    Flag(("--managed-settings-in-initialize",), "managed_in_initialize", "bool"),
    # agentcli's own, as on `agentcli run`
    Flag(("--cwd",), "cwd", "value"),
    Flag(("--config",), "config", "value"),
    Flag(("--trust",), "trust", "bool"),
    Flag(("-y", "--yes"), "yes", "bool"),
)

#: Flags accepted and not carried out, each with the reason its warning gives.
IGNORED: Final[dict[str, tuple[Kind, str]]] = {
    "--betas": ("list", "agentcli sends no beta headers"),
    "--task-budget": ("value", "use [task_tool] max_tokens / max_cost_usd"),
    "--thinking": ("value", "set [models.main] thinking instead"),
    "--max-thinking-tokens": ("value", "set [models.main] thinking_budget_tokens instead"),
    "--thinking-display": ("value", "thinking is always shown as it streams"),
    "--include-hook-events": ("bool", "hook runs are reported as agentcli's own events only"),
    "--resume-session-at": ("value", "a session resumes at its end"),
    "--resume-drops-turn": ("value", "a session resumes at its end"),
    "--session-mirror": ("bool", "agentcli keeps sessions in its own store"),
    "--debug": ("optional", "use --verbose (agentcli's log file has the details)"),
    "-d": ("optional", "use --verbose (agentcli's log file has the details)"),
    "--debug-file": ("value", "agentcli logs to its own log file"),
    "--mcp-debug": ("bool", "use --verbose"),
    "--allow-dangerously-skip-permissions": ("bool", "use --permission-mode bypassPermissions"),
    "--ide": ("bool", "agentcli connects to no IDE"),
    "--no-session-persistence": ("bool", "agentcli always stores its sessions"),
    "--disable-slash-commands": ("bool", "headless prompts are never read as slash commands"),
    "--replay-user-message": ("bool", "did you mean --replay-user-messages?"),
    "--agent": ("value", "agentcli's main agent keeps its own role; a Task call names a subagent type"),
    "--plugin-dir-no-mcp": ("list", "use --plugin-dir (a plugin's MCP servers load with it)"),
    "--permission-prompts": ("value", "agentcli asks the program through can_use_tool (--permission-prompt-tool)"),
    "--channels": ("value", "agentcli has no channels"),
    "--project-config-root": ("value", "agentcli reads the project's config from the workspace (--cwd)"),
    "--sdk-url": ("value", "agentcli speaks to its program over standard input and output only"),
}

_BY_NAME: Final[dict[str, Flag]] = {name: flag for flag in HONOURED for name in flag.names}


@dataclass(slots=True)
class HeadlessArgs:
    """A headless command line, read. Unset values are None (or empty)."""

    prompt: str | None = None
    print: bool = False
    output_format: str = "text"
    input_format: str = "text"
    verbose: bool = False
    system_prompt: str | None = None
    system_prompt_file: str | None = None
    append_system_prompt: str | None = None
    append_system_prompt_file: str | None = None
    permission_mode: str | None = None
    skip_permissions: bool = False
    permission_prompt_tool: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    add_dir: list[str] = field(default_factory=list)  # additional directories, as [permissions] additional_directories
    plugin_dir: list[str] = field(default_factory=list)  # plugin folders for the session, as [plugins] dirs
    tools: list[str] | None = None
    max_turns: str | None = None
    max_budget_usd: str | None = None
    model: str | None = None
    fallback_model: str | None = None
    mcp_config: list[str] = field(default_factory=list)
    strict_mcp_config: bool = False
    setting_sources: str | None = None
    settings: str | None = None
    continue_: bool = False
    resume: str | None = None  # "" : --resume without an id
    session_id: str | None = None
    fork_session: bool = False
    include_partial: bool = False
    replay_user_messages: bool = False
    json_schema: str | None = None
    agents: str | None = None
    effort: str | None = None
    managed_settings: str | None = None
    await_initialize: bool = False
    initialize_fields: str | None = None
    managed_in_initialize: bool = False
    cwd: str | None = None
    config: str | None = None
    trust: bool = False
    yes: bool = False
    warnings: list[str] = field(default_factory=list)


#: The flags that make a command line without a command Claude Code's headless mode.
TRIGGERS: Final = frozenset({"-p", "--print", "--output-format", "--input-format"})


def is_headless(argv: list[str], commands: frozenset[str]) -> bool:
    """Whether `argv` (after the program name) is Claude Code's headless mode: no agentcli command first, and
    `-p`/`--print` or an output or input format among the flags."""
    if not argv or argv[0] in commands:
        return False
    for arg in argv:
        if arg == "--":
            return False
        if arg.partition("=")[0] in TRIGGERS:
            return True
    return False


def parse(argv: list[str]) -> HeadlessArgs:
    """Read a headless command line; `FlagError` for one agentcli cannot run."""
    args = HeadlessArgs()
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            positional += argv[i:]
            break
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, joined, inline = arg.partition("=")
        flag = _BY_NAME.get(name)
        kind: Kind = flag.kind if flag is not None else IGNORED.get(name, ("bool", ""))[0]
        if flag is None and name not in IGNORED and joined:
            kind = "value"  # a flag agentcli does not know, with its value joined: `--new-flag=x`
        value: str | list[str] | bool
        if kind == "bool":
            if joined:
                raise FlagError(f"{name} takes no value (got {arg!r})")
            value = True
        elif joined:
            value = [inline] if kind == "list" else inline
        elif kind == "value":
            if i >= len(argv):
                raise FlagError(f"{name} needs a value")
            value, i = argv[i], i + 1
        elif kind == "optional":
            if i < len(argv) and not argv[i].startswith("-"):
                value, i = argv[i], i + 1
            else:
                value = ""
        else:  # list: every word up to the next flag
            words: list[str] = []
            while i < len(argv) and not argv[i].startswith("-"):
                words.append(argv[i])
                i += 1
            if not words:
                raise FlagError(f"{name} needs at least one value")
            value = words
        if flag is None:
            why = IGNORED.get(name, ("bool", ""))[1]
            args.warnings.append(f"{name} is not honoured: {why}" if why else
                                 f"{name} is not a flag agentcli knows; ignored")
            continue
        _store(args, flag, value)
    if positional:
        args.prompt = " ".join(positional) if len(positional) > 1 else positional[0]
    return args


def _store(args: HeadlessArgs, flag: Flag, value: str | list[str] | bool) -> None:
    if flag.choices and isinstance(value, str) and value not in flag.choices:
        raise FlagError(f"{flag.names[-1]} {value!r} is not one of {', '.join(flag.choices)}")
    if flag.kind == "list":
        assert isinstance(value, list)
        current = getattr(args, flag.dest)
        setattr(args, flag.dest, [*(current or []), *value])
    else:
        setattr(args, flag.dest, value)


def split_rules(values: list[str]) -> list[str]:
    """`--allowedTools "Bash(git log:*) Edit,Read"`: rules separated by commas or spaces outside parentheses."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, ""
        for char in value:
            if char == "(":
                depth += 1
            elif char == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (char == "," or char.isspace()):
                if current.strip():
                    rules.append(current.strip())
                current = ""
            else:
                current += char
        if current.strip():
            rules.append(current.strip())
    return rules
