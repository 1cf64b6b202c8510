"""Command line: the `agentcli` app (the TUI without a command), its commands built lazily, and the entry.

Each command lives in a module of this package (`run`, `demo`, `acp`, `trust`, `config`, `agents`...), imported
and built only when it is named or listed. Heavy imports stay lazy.
"""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from agentcli.cli.common import ConfigOption, ContinueOption, CwdOption, ModelOption, ResumeOption, TrustOption
from agentcli.frontend import EXIT_OK, EXIT_USAGE, load, workspace_dir
from agentcli.headless import is_headless

if TYPE_CHECKING:
    from agentcli.config import LoadedConfig


def optional_resume(args: list[str]) -> list[str]:
    """`--resume` takes an optional ID: a bare one (last, or before another option) becomes `--resume=`,
    which asks for a picker (the parser has no options with an optional value)."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--":
            break
        if arg == "--resume" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = "--resume="
    return out


def output_format_of(args: list[str]) -> str:
    """The `--output-format` a `run` command line asks for ("" when it is not a `run` or names none)."""
    if "run" not in args:
        return ""
    found = ""
    for i, arg in enumerate(args[args.index("run") + 1:], args.index("run") + 1):
        if arg == "--":
            break
        if arg == "--output-format" and i + 1 < len(args):
            found = args[i + 1]
        elif arg.startswith("--output-format="):
            found = arg.partition("=")[2]
    return found


#: The single commands, by name: (module, the command's function), in the order --help lists them.
SINGLE_COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("agentcli.cli.demo", "demo_command"),
    "run": ("agentcli.cli.run", "run"),
    "acp": ("agentcli.cli.acp", "acp_command"),
    "trust": ("agentcli.cli.trust", "trust_command"),
}
#: The command groups, by name: (module, its Typer app). Each command and group is built when it is named (or
#: listed by --help and shell completion): typer builds a command's options from its signature, for every
#: command it is given, and doing so for these ~10 cost every `agentcli run` ~5 ms before its first request.
GROUPS: dict[str, tuple[str, str]] = {
    "config": ("agentcli.cli.config", "config_app"),
    "agents": ("agentcli.cli.agents", "agents_app"),
    "tasks": ("agentcli.cli.tasks", "tasks_app"),
    "sessions": ("agentcli.cli.sessions", "sessions_app"),
    "mcp": ("agentcli.cli.mcp", "mcp_app"),
    "lsp": ("agentcli.cli.lsp", "lsp_app"),
    "worktrees": ("agentcli.cli.worktrees", "worktrees_app"),
    "skills": ("agentcli.cli.skills", "skills_app"),
    "commands": ("agentcli.cli.skills", "commands_app"),
    "plugins": ("agentcli.cli.plugins", "plugins_app"),
}
#: The commands, for telling `agentcli run ...` from Claude Code's headless flags.
COMMANDS = frozenset({*SINGLE_COMMANDS, *GROUPS})


def _build(name: str) -> Any:  # click's Command
    """The click command (or group) `name` names, its module imported."""
    import importlib

    import typer.main

    if name in GROUPS:
        module, attr = GROUPS[name]
        return typer.main.get_group(getattr(importlib.import_module(module), attr))
    module, attr = SINGLE_COMMANDS[name]
    holder = typer.Typer(rich_markup_mode=None, add_completion=False)
    holder.command(name)(getattr(importlib.import_module(module), attr))
    return typer.main.get_command(holder)


class _Group(TyperGroup):
    """The app's group: `--resume` without an ID (see `optional_resume`); a `run` whose flags are wrong still
    ends with a JSON result line when its command line asked for a JSON output format; the commands and command
    groups (`SINGLE_COMMANDS`, `GROUPS`) are built when first named."""

    def list_commands(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        return [*(name for name in super().list_commands(ctx) if name not in COMMANDS), *SINGLE_COMMANDS, *GROUPS]

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:  # type: ignore[override]  # click's Command
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            command = _build(cmd_name)
            command.name = cmd_name
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> Any:  # type: ignore[override]
        try:
            return super().resolve_command(ctx, args)
        except Exception as exc:  # "No such command" (a usage error): its "did you mean" names the groups too
            if getattr(exc, "exit_code", None) != EXIT_USAGE or all(name in self.commands for name in COMMANDS):
                raise
            for name in [*SINGLE_COMMANDS, *GROUPS]:
                self.get_command(ctx, name)
            return super().resolve_command(ctx, args)

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        self.command_line = optional_resume(args)
        return super().parse_args(ctx, self.command_line)

    def invoke(self, ctx: typer.Context) -> object:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except Exception as exc:  # the parser's usage errors (click's UsageError: exit code 2, format_message)
            message = getattr(exc, "format_message", None)
            if getattr(exc, "exit_code", None) == EXIT_USAGE and callable(message):
                from agentcli.oneshot import error_result

                error_result(output_format_of(getattr(self, "command_line", [])), str(message()), sys.stdout)
            raise


app = typer.Typer(
    name="agentcli",
    cls=_Group,
    help="A terminal coding assistant that delegates focused work to subagents. "
    "Without a command it opens the interactive TUI in the current directory (--cwd to choose another).",
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
    cwd: CwdOption = None,
    config: ConfigOption = None,
    model: ModelOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log details to the log file.")] = False,
    trust: TrustOption = False,
    continue_: ContinueOption = False,
    resume: ResumeOption = None,
) -> None:
    """Without a command: the interactive TUI in the current directory. `agentcli run "PROMPT"` runs a one-shot job."""
    from agentcli.safe_text import safe_streams

    if ctx.invoked_subcommand != "run":
        gc.enable()  # paused since the process started (`agentcli.__main__`); `run` keeps it so until its request

    safe_streams()  # text that is not valid Unicode prints as U+FFFD, never a traceback
    if version:
        from agentcli import __version__

        print(f"agentcli {__version__}")
        raise typer.Exit(EXIT_OK)
    if ctx.invoked_subcommand is None:
        from agentcli.cli.run import model_spec, resume_choice
        from agentcli.cli.trust import record_trust

        workspace = workspace_dir(cwd)
        if trust:
            record_trust(workspace)
        loaded, spec = model_spec(workspace, config, model, load(workspace, config))
        from agentcli.ui import run_tui

        def trusted_config() -> LoadedConfig:
            """The TUI's trust prompt said "trust": record it and load the full config."""
            record_trust(workspace)
            return model_spec(workspace, config, model, load(workspace, config, trusted=True))[0]

        raise typer.Exit(run_tui(
            loaded, workspace, spec, verbose=verbose, trust_reload=trusted_config,
            resume=resume_choice(continue_, resume), continue_latest=continue_, keep_model=model is not None,
        ))


def entry() -> None:
    """The `agentcli` command (and `python -m agentcli`): the app, then the process ends (see `process_exit`)."""
    from agentcli.process_exit import finish

    argv = sys.argv[1:]
    if is_headless(argv, COMMANDS):  # Claude Code's flags and no command: its headless mode (the Agent SDK's)
        from agentcli.headless import main as headless

        gc.enable()  # its session settles collection itself after the first request
        finish(headless(argv))
    try:
        app(prog_name="agentcli")  # usage lines and shell completion (_AGENTCLI_COMPLETE) name the command
    except SystemExit as exc:
        finish(exc.code)
    finish(0)
