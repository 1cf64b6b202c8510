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
        )
    )


async def _run(loaded: LoadedConfig, options: OneShotOptions, out: TextIO, err: TextIO) -> int:
    from agentcli.agent.loop import AgentLoop, RunOutcome
    from agentcli.agent.session import Session
    from agentcli.events import EventBus
    from agentcli.llm.base import ProviderError
    from agentcli.llm.models import ModelSpecError, ProviderPool, resolve_model
    from agentcli.llm.prices import cost_usd
    from agentcli.logs import setup_logging
    from agentcli.output import make_printer
    from agentcli.prompts import project_instructions, render_system_prompt
    from agentcli.store.db import Store
    from agentcli.store.recorder import StoreRecorder
    from agentcli.subagents.registry import AgentRegistry
    from agentcli.subagents.runner import ParentLink, SubagentRunner
    from agentcli.tools.base import FileLocks, ToolContext
    from agentcli.tools.permissions import PermissionPolicy

    settings = loaded.settings
    try:
        model = resolve_model(options.model, settings)
    except (ProviderError, ModelSpecError) as exc:
        err.write(f"agentcli: {exc}\n")
        return EXIT_FAILURE
    setup_logging(settings.logging.level, verbose=options.verbose, secrets=[model.api_key])
    if settings.task_tool.enable_verbose_logging:
        logging.getLogger("agentcli.subagents").setLevel(logging.DEBUG)

    store = Store.open()
    store.mark_running_cancelled()
    bus = EventBus()
    bus.subscribe(StoreRecorder(store))
    printer = make_printer(options.output_format, out, err, verbose=options.verbose)
    bus.subscribe(printer)

    session = Session(
        system_prompt=render_system_prompt(options.workspace, instructions=settings.agent.project_instructions),
        model=model,
        workspace=options.workspace,
    )
    permissions = PermissionPolicy.from_settings(settings.permissions, oneshot=True, yes=options.approve_mutating)
    context = ToolContext(
        workspace=options.workspace,
        agent="main",
        session_id=session.id,
        permissions=permissions,
        file_locks=FileLocks(),
        bash_timeout_seconds=settings.agent.bash_timeout_seconds,
        bash_output_limit_bytes=settings.agent.bash_output_limit_bytes,
    )
    pool = ProviderPool.from_settings(settings)
    runner = SubagentRunner(
        settings=settings,
        registry=AgentRegistry.load(options.workspace, aliases=settings.models.aliases),
        pool=pool,
        workspace=options.workspace,
        permissions=permissions,
        store=store,
        file_locks=context.file_locks,
        price=cost_usd,
        instructions=project_instructions(options.workspace) if settings.agent.project_instructions else "",
    )
    loop = AgentLoop(
        session,
        pool.get(model),
        runner.tools_for(ParentLink(session, bus)),
        context,
        bus,
        max_turns=settings.agent.max_turns,
        price=cost_usd,
        notices=runner.notices_for(session.id),
    )
    log.info("run started: session %s, model %s, workspace %s", session.id, model.display, options.workspace)
    outcome: RunOutcome | None = None
    try:
        outcome = await loop.run(options.prompt)
    finally:
        if outcome is None:  # cancelled (Ctrl-C): the loop recorded it; say so in the printer's format
            outcome = RunOutcome("cancelled", "", session.turns, "interrupted")
        await runner.aclose()
        await pool.aclose()
        await store.flush()
        store.close()
        _summary(session, outcome, printer, [r.model_dump(mode="json") for r in runner.records()])
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
