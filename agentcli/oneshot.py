"""`agentcli run`: one non-interactive job through the agent loop, printed as text, json or stream-json."""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from agentcli.agent.loop import RunOutcome
    from agentcli.agent.session import Session
    from agentcli.config import LoadedConfig
    from agentcli.output import Printer

log = logging.getLogger(__name__)
EXIT_OK, EXIT_FAILURE, EXIT_INTERRUPTED = 0, 1, 130


@dataclass(frozen=True, slots=True)
class OneShotOptions:
    """What the person asked `agentcli run` for."""

    prompt: str
    model: str
    output_format: str  # text | json | stream-json
    approve_mutating: bool
    workspace: Path
    verbose: bool


def _summary(session: Session, outcome: RunOutcome, printer: Printer, tasks: list[dict[str, object]]) -> None:
    from agentcli.output import RunSummary

    usage = session.total_usage
    printer.finish(
        RunSummary(
            status=outcome.status,
            result=outcome.result,
            session_id=session.id,
            model=session.model.display,
            turns=outcome.turns,
            error=outcome.error,
            usage={
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
            },
            cost_usd=session.total_cost_usd,
            tasks=tasks,
            stop_reason=outcome.stop_reason,
        )
    )


async def _run(loaded: LoadedConfig, options: OneShotOptions, out: TextIO, err: TextIO) -> int:
    from agentcli.agent.conversation import Conversation
    from agentcli.agent.loop import RunOutcome
    from agentcli.llm.base import ProviderError
    from agentcli.llm.models import ModelSpecError
    from agentcli.logs import setup_logging
    from agentcli.output import make_printer
    from agentcli.store.db import Store, StoreError

    settings = loaded.settings
    try:
        store = Store.open()
    except StoreError as exc:
        err.write(f"agentcli: {exc}\n")
        return EXIT_FAILURE
    try:
        conversation = Conversation(
            settings, options.workspace, model=options.model, store=store, oneshot=True, yes=options.approve_mutating
        )
    except (ProviderError, ModelSpecError) as exc:
        store.close()
        err.write(f"agentcli: {exc}\n")
        return EXIT_FAILURE
    setup_logging(settings.logging.level, verbose=options.verbose, secrets=[conversation.model.api_key])
    if settings.task_tool.enable_verbose_logging:
        logging.getLogger("agentcli.subagents").setLevel(logging.DEBUG)
    store.mark_running_cancelled()
    printer = make_printer(options.output_format, out, err, verbose=options.verbose)
    conversation.bus.subscribe(printer)
    session = conversation.session
    log.info("run started: session %s, model %s, workspace %s", session.id, conversation.model.display,
             options.workspace)
    outcome: RunOutcome | None = None
    try:
        outcome = await conversation.send(options.prompt)
    finally:
        if outcome is None:  # cancelled (Ctrl-C): the loop recorded it; say so in the printer's format
            outcome = RunOutcome("cancelled", "", session.turns, "interrupted")
        await conversation.aclose()
        store.close()
        _summary(session, outcome, printer, [r.model_dump(mode="json") for r in conversation.runner.records()])
        log.info("run finished: %s after %d turns", outcome.status, outcome.turns)
    if outcome.status == "completed":
        return EXIT_OK
    err.write(f"agentcli: {outcome.error or outcome.status}\n")
    return EXIT_FAILURE


def run_oneshot(
    loaded: LoadedConfig, options: OneShotOptions, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the job to completion and return the process exit code."""
    err_stream = err or sys.stderr
    try:
        return asyncio.run(_run(loaded, options, out or sys.stdout, err_stream))
    except KeyboardInterrupt:
        err_stream.write("agentcli: interrupted\n")
        return EXIT_INTERRUPTED
