"""Command line: `agentcli` (TUI), `agentcli run`, `agentcli config show`. Heavy imports stay lazy."""

from __future__ import annotations

import gc
import shlex
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from agentcli.cli.common import ConfigOption, CwdOption, echo
from agentcli.frontend.common import EXIT_OK, EXIT_USAGE, Failure, fail, load, workspace_dir
from agentcli.headless.flags import is_headless

if TYPE_CHECKING:
    from agentcli.config.load import LoadedConfig
    from agentcli.conversation.trust_report import TrustReport
    from agentcli.oneshot.run import OneShotOptions

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


#: The command groups, by name: (module, its Typer app). Each is built when it is named (or listed by --help
#: and shell completion): typer builds a command's options from its signature, for every command it is
#: given, and doing so for these ~10 cost every `agentcli run` ~5 ms before its first request.
GROUPS: dict[str, tuple[str, str]] = {
    "config": ("agentcli.cli.app", "config_app"),
    "agents": ("agentcli.cli.agents", "agents_app"),
    "tasks": ("agentcli.cli.tasks", "tasks_app"),
    "sessions": ("agentcli.cli.sessions", "sessions_app"),
    "mcp": ("agentcli.cli.mcp", "mcp_app"),
    "worktrees": ("agentcli.cli.worktrees", "worktrees_app"),
    "skills": ("agentcli.cli.skills", "skills_app"),
    "commands": ("agentcli.cli.skills", "commands_app"),
}


class _Group(TyperGroup):
    """The app's group: `--resume` without an ID (see `optional_resume`); a `run` whose flags are wrong still
    ends with a JSON result line when its command line asked for a JSON output format; the command groups
    (`GROUPS`) are built when first named."""

    def list_commands(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        return [*super().list_commands(ctx), *(name for name in GROUPS if name not in self.commands)]

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:  # type: ignore[override]  # click's Command
        if cmd_name in GROUPS and cmd_name not in self.commands:
            import importlib

            import typer.main

            module, attr = GROUPS[cmd_name]
            group = typer.main.get_group(getattr(importlib.import_module(module), attr))
            group.name = cmd_name
            self.add_command(group, cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> Any:  # type: ignore[override]
        try:
            return super().resolve_command(ctx, args)
        except Exception as exc:  # "No such command" (a usage error): its "did you mean" names the groups too
            if getattr(exc, "exit_code", None) != EXIT_USAGE or all(name in self.commands for name in GROUPS):
                raise
            for name in GROUPS:
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
                from agentcli.oneshot.run import error_result

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
config_app = typer.Typer(help="Inspect the effective configuration.", rich_markup_mode=None)


class OutputFormat(StrEnum):
    """One-shot output formats."""

    text = "text"
    json = "json"
    stream_json = "stream-json"
    events = "events"


class InputFormat(StrEnum):
    """Where `run` takes its turns from."""

    text = "text"
    stream_json = "stream-json"


TrustOption = Annotated[
    bool, typer.Option("--trust", help="Trust this workspace (recorded): apply its .agentcli/config.toml in full.")
]


def _record_trust(workspace: Path) -> None:
    """`--trust` / the TUI prompt: remember the workspace as trusted, or exit 1 saying why not."""
    from agentcli.config import trust

    try:
        trust.trust(workspace)
    except trust.TrustError as exc:
        fail(str(exc))


ModelOption = Annotated[str | None, typer.Option("--model", help="main, light, an alias or provider:model.")]
ContinueOption = Annotated[
    bool, typer.Option("--continue", "-c", help="Continue the latest session of this workspace.")
]
ResumeOption = Annotated[
    str | None,
    typer.Option(
        "--resume", metavar="[ID]",
        help="Resume a stored session by id (or unique prefix); without an ID, pick one of this workspace's.",
    ),
]
SESSION_PREFIX = "ses_"


def _resume_choice(continue_: bool, resume: str | None) -> str | None:
    """What to resume: None (a new session), "" (pick one), an id; exits 2 when both flags are given."""
    if continue_ and resume is not None:
        fail("--continue and --resume cannot be used together", EXIT_USAGE)
    return None if resume is None else resume.strip()


def _model_spec(
    workspace: Path,
    config: Path | None,
    model: str | None,
    loaded: LoadedConfig,
    flags: tuple[dict[str, object], dict[str, str]] | None = None,
) -> tuple[LoadedConfig, str]:
    """The model spec to use; a bare model id replaces the main model's id, as the command-line layer
    (with `flags`, the other command-line overrides and the flag each came from)."""
    spec = model or "main"
    if spec not in ("main", "light") and ":" not in spec and spec not in loaded.settings.models.aliases:
        overrides, origins = flags or ({}, {})
        overrides, origins = {**overrides, "models.main.model": spec}, {**origins, "models.main.model": "--model"}
        loaded = load(workspace, config, overrides, origins, trusted=loaded.trusted)
        spec = "main"
    return loaded, spec


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
        workspace = workspace_dir(cwd)
        if trust:
            _record_trust(workspace)
        loaded, spec = _model_spec(workspace, config, model, load(workspace, config))
        from agentcli.ui.launch import run_tui

        def trusted_config() -> LoadedConfig:
            """The TUI's trust prompt said "trust": record it and load the full config."""
            _record_trust(workspace)
            return _model_spec(workspace, config, model, load(workspace, config, trusted=True))[0]

        raise typer.Exit(run_tui(
            loaded, workspace, spec, verbose=verbose, trust_reload=trusted_config,
            resume=_resume_choice(continue_, resume), continue_latest=continue_, keep_model=model is not None,
        ))


@app.command()
def demo(cwd: CwdOption = None) -> None:
    """Open the TUI on a scripted demo: a fake model delegates real read-only work on this folder (no key)."""
    from agentcli.cli.demo import run_demo

    workspace = workspace_dir(cwd)
    load(workspace, None)  # an invalid config is one line and exit 2 before the demo starts
    raise typer.Exit(run_demo(workspace))


@config_app.command("show")
def config_show(
    cwd: CwdOption = None,
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON with each value's layer.")] = False,
) -> None:
    """Print the effective merged config, the layer each value came from, secrets redacted."""
    from agentcli.cli.common import context_windows
    from agentcli.config.load import render_config
    from agentcli.text import json_safe, terminal_safe
    from agentcli.tools.sandbox.policy import session_sandbox

    workspace = workspace_dir(cwd)
    loaded = load(workspace, config)
    text = render_config(loaded, json=as_json)
    if not as_json:  # what [sandbox] amounts to on this system: on or off, with what
        sandbox = session_sandbox(loaded.settings, workspace)
        sandbox.add_write_roots([d.path for d in loaded.additional_dirs[0]])
        windows = "".join(f"# {line}\n" for line in context_windows(loaded.settings))
        text = text.replace("\n\n", f"\n# {sandbox.describe()}\n{windows}\n", 1)
    print(json_safe(text) if as_json else terminal_safe(text))  # project config values are untrusted


@app.command()
def run(
    ctx: typer.Context,
    prompt: Annotated[str | None, typer.Argument(help='The task; "-" reads it from standard input.')] = None,
    model: ModelOption = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option("--output-format", help="text, json (one result object), stream-json (Claude Code's lines) "
                     "or events (agentcli's own event lines)."),
    ] = OutputFormat.text,
    input_format: Annotated[
        InputFormat,
        typer.Option("--input-format", help="text (the PROMPT) or stream-json: user messages on standard input, "
                     "one JSON line each, each a turn of one session (needs --output-format stream-json)."),
    ] = InputFormat.text,
    include_partial_messages: Annotated[
        bool, typer.Option("--include-partial-messages", help="stream-json: stream_event lines as text streams.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve mutating tools.")] = False,
    cwd: CwdOption = None,
    config: ConfigOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log details; tracebacks on errors.")] = False,
    trust: TrustOption = False,
    max_budget_usd: Annotated[
        float | None,
        typer.Option(
            "--max-budget-usd",
            help="Stop the run once it has spent this many dollars (budget.session_max_usd; 0: no limit).",
        ),
    ] = None,
    continue_: ContinueOption = False,
    resume: ResumeOption = None,
) -> None:
    """Run one task non-interactively and print the answer; --continue / --resume go on with a stored session."""
    from agentcli.oneshot.run import error_result, pause_gc, run_oneshot

    pause_gc()  # until the first request is out (start-up speed; see there)
    ctx.call_on_close(gc.enable)  # also when none went out, or when this runs inside another program
    try:
        options, loaded = _run_options(
            prompt, model, output_format.value, input_format.value, include_partial_messages, yes, cwd, config,
            verbose, trust, max_budget_usd, continue_, resume,
        )
    except Failure as exc:  # an error before the run: a JSON output format still ends with a result line
        error_result(output_format.value, exc.message, sys.stdout)
        raise
    raise typer.Exit(run_oneshot(loaded, options))


def _run_options(
    prompt: str | None, model: str | None, output_format: str, input_format: str, partial: bool, yes: bool,
    cwd: Path | None, config: Path | None, verbose: bool, trust: bool, max_budget_usd: float | None,
    continue_: bool, resume: str | None,
) -> tuple[OneShotOptions, LoadedConfig]:
    """`run`'s options checked and its config loaded; `fail` (a `Failure`) on a mistake."""
    from agentcli.oneshot.run import OneShotOptions
    from agentcli.safe_text import from_argv, from_bytes

    choice = _resume_choice(continue_, resume)
    streamed = input_format == InputFormat.stream_json
    if streamed and output_format != OutputFormat.stream_json:
        fail("--input-format stream-json needs --output-format stream-json", EXIT_USAGE)
    if partial and output_format != OutputFormat.stream_json:
        fail("--include-partial-messages needs --output-format stream-json", EXIT_USAGE)
    if streamed:
        if prompt is not None:
            fail("--input-format stream-json reads the prompts from standard input: give no PROMPT", EXIT_USAGE)
        if choice == "":
            fail("--resume needs a session id with --input-format stream-json", EXIT_USAGE)
        prompt = ""
    elif prompt is None:  # `run --resume "the task"`: the bare --resume took the prompt for its ID
        if not choice or choice.startswith(SESSION_PREFIX):
            fail("the prompt is missing: agentcli run [--continue | --resume [ID]] PROMPT", EXIT_USAGE)
        prompt, choice = choice, ""
    if choice == "" and not (sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()):
        fail("--resume needs a session id when there is no terminal to pick one in: 'agentcli sessions list' "
             "shows them (or --continue takes this workspace's latest)", EXIT_USAGE)
    if prompt == "-" and not streamed:
        try:
            prompt = from_bytes(sys.stdin.buffer.read()) if sys.stdin is not None else ""
        except OSError as exc:
            fail(f"cannot read the prompt from standard input: {exc.strerror or exc}", EXIT_USAGE)
    else:
        prompt = from_argv(prompt)  # bytes that were not UTF-8 become U+FFFD
    if not streamed and not prompt.strip():
        fail("the prompt is empty", EXIT_USAGE)
    workspace = workspace_dir(cwd)
    from agentcli.prompts import prefetch_git_summary

    prefetch_git_summary(workspace)  # the session's system prompt holds git's status: fetched while the rest loads
    if trust:
        _record_trust(workspace)
    flags: tuple[dict[str, object], dict[str, str]] = ({}, {})
    if max_budget_usd is not None:
        flags = ({"budget.session_max_usd": max_budget_usd}, {"budget.session_max_usd": "--max-budget-usd"})
    loaded, spec = _model_spec(workspace, config, model, load(workspace, config, *flags), flags)
    options = OneShotOptions(
        prompt=prompt,
        model=spec,
        output_format=output_format,
        approve_mutating=yes,
        workspace=workspace,
        verbose=verbose,
        resume=choice,
        continue_latest=continue_,
        keep_model=model is not None,
        input_format=input_format,
        include_partial=partial,
    )
    return options, loaded


@app.command("acp")
def acp_command(
    model: ModelOption = None,
    config: ConfigOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log details to the log file.")] = False,
) -> None:
    """Serve an editor over the Agent Client Protocol on stdio (Zed, JetBrains, Neovim, Emacs): each session runs
    in the folder the editor names."""
    from agentcli.acp_agent.server import serve
    from agentcli.acp_agent.session import Options

    raise typer.Exit(serve(Options(model=model, config=config, verbose=verbose)))


#: The commands, for telling `agentcli run ...` from Claude Code's headless flags.
COMMANDS = frozenset({"run", "demo", "trust", "config", "acp", *GROUPS})


@app.command("trust")
def trust_command(
    directory: Annotated[
        Path | None, typer.Argument(metavar="DIR", help="The workspace (default: the current directory).")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="Show the trusted workspaces.")] = False,
    revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting DIR.")] = False,
) -> None:
    """Trust a workspace: its .agentcli/config.toml may then widen permissions and set model endpoints, and its
    hooks and MCP servers run (each is named)."""
    from agentcli.config import trust

    if list_:
        for path in trust.trusted_paths():
            print(path)
        return
    if directory is not None and not directory.expanduser().is_dir():
        fail(f"{directory} is not a directory", EXIT_USAGE)
    workspace = workspace_dir(directory)
    if revoke:
        removed = trust.revoke(workspace)
        print(f"no longer trusted: {workspace}" if removed else f"{workspace} was not in the trusted list")
        ancestor = trust.trusted_by(workspace)
        if ancestor is not None:
            fail(f"{workspace} is still trusted through {ancestor} (run 'agentcli trust --revoke {ancestor}')")
        return
    report = _trust_report(workspace)
    try:
        recorded = trust.trust(workspace)
    except trust.TrustError as exc:
        fail(str(exc))
    print(f"trusted: {recorded} (recorded in {trust.store_path()})")
    if report.settings:
        echo(f"it applies these settings of {report.project_file or 'its Claude Code settings files'}:")
        echo("\n".join(f"  {line}" for line in report.settings))
    if report.arms:
        echo("it runs these hooks and MCP servers (with the environment variables they are given):")
        echo("\n".join(f"  {line}" for line in report.lines()))
    if report.problems:
        echo("not read, so what it runs may be more than listed:")
        echo("\n".join(f"  {line}" for line in report.problems))
    if report.changes:
        echo(f"('agentcli trust --revoke {shlex.quote(str(recorded))}' takes it back)")


def _trust_report(workspace: Path) -> TrustReport:
    """What trusting `workspace` applies, runs and reaches (its config's settings when the config loads)."""
    from agentcli.config.load import ConfigError, load_config
    from agentcli.conversation.trust_report import what_trust_arms

    try:
        loaded = load_config(workspace=workspace, trusted=False)
    except ConfigError:
        return what_trust_arms(workspace)  # the config's own error is said when it is used
    return what_trust_arms(workspace, loaded)


def entry() -> None:
    """The `agentcli` command (and `python -m agentcli`): the app, then the process ends (see `process_exit`)."""
    from agentcli.process_exit import finish

    argv = sys.argv[1:]
    if is_headless(argv, COMMANDS):  # Claude Code's flags and no command: its headless mode (the Agent SDK's)
        from agentcli.headless.driver import main as headless

        gc.enable()  # its session settles collection itself after the first request
        finish(headless(argv))
    try:
        app(prog_name="agentcli")  # usage lines and shell completion (_AGENTCLI_COMPLETE) name the command
    except SystemExit as exc:
        finish(exc.code)
    finish(0)
