"""`agentcli run`: one task non-interactively, its options checked and its config loaded before the run.

Only typer and the standard library at import time: the one-shot, config and prompt modules load inside.
"""

from __future__ import annotations

import gc
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common import (
    ConfigOption,
    ContinueOption,
    CwdOption,
    ModelOption,
    ResumeOption,
    TrustOption,
)
from agentcli.cli.trust import record_trust
from agentcli.frontend import EXIT_USAGE, Failure, fail, load, workspace_dir

if TYPE_CHECKING:
    from agentcli.config import LoadedConfig
    from agentcli.oneshot import OneShotOptions

SESSION_PREFIX = "ses_"


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


def resume_choice(continue_: bool, resume: str | None) -> str | None:
    """What to resume: None (a new session), "" (pick one), an id; exits 2 when both flags are given."""
    if continue_ and resume is not None:
        fail("--continue and --resume cannot be used together", EXIT_USAGE)
    return None if resume is None else resume.strip()


def model_spec(
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
    from agentcli.oneshot import error_result, pause_gc, run_oneshot

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
    from agentcli.oneshot import OneShotOptions
    from agentcli.safe_text import from_argv, from_bytes

    choice = resume_choice(continue_, resume)
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
        record_trust(workspace)
    flags: tuple[dict[str, object], dict[str, str]] = ({}, {})
    if max_budget_usd is not None:
        flags = ({"budget.session_max_usd": max_budget_usd}, {"budget.session_max_usd": "--max-budget-usd"})
    loaded, spec = model_spec(workspace, config, model, load(workspace, config, *flags), flags)
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
