"""`agentcli run`: one non-interactive job through the agent loop, printed as text, json, stream-json or events;
with `--input-format stream-json`, a session driven turn by turn by user messages on standard input."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agentcli import process_exit

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from agentcli.agent import RunOutcome, Session
    from agentcli.config import LoadedConfig, Settings
    from agentcli.conversation import Conversation
    from agentcli.llm import Message
    from agentcli.oneshot.printer_base import Printer

log = logging.getLogger(__name__)
EXIT_OK, EXIT_FAILURE, EXIT_INTERRUPTED = 0, 1, 130
#: Handled like Ctrl-C: the turn is cancelled, its Bash groups killed, the records marked cancelled.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class SignalStop:
    """SIGTERM / SIGHUP while a run is going: cancel the run's task once and remember the signal."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._task: asyncio.Task[object] | None = None

    def install(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[object] | None) -> None:
        """Route the stop signals to `task.cancel()` (where the platform has them)."""
        self._task = task
        for sig in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._stop, sig)

    def disarm(self) -> None:
        """The work is over: a late signal no longer interrupts the clean-up."""
        self._task = None

    def _stop(self, sig: int) -> None:
        task, self._task = self._task, None
        if task is None:
            return  # already stopping, or done: let the clean-up finish
        self.signum = int(sig)
        task.cancel()

    @property
    def exit_code(self) -> int:
        """128 + the signal number (143 for SIGTERM, 129 for SIGHUP)."""
        return 128 + (self.signum or 0)

    @property
    def name(self) -> str:
        """SIGTERM / SIGHUP."""
        return signal.Signals(self.signum or 0).name if self.signum else "signal"


@dataclass(frozen=True, slots=True)
class OneShotOptions:
    """What the person asked `agentcli run` for."""

    prompt: str
    model: str
    output_format: str  # text | json | stream-json | events
    approve_mutating: bool
    workspace: Path
    verbose: bool
    resume: str | None = None  # a session id or prefix; "" to pick one (on a terminal)
    continue_latest: bool = False  # the workspace's latest session
    keep_model: bool = False  # --model was given: it wins over a resumed session's own model
    input_format: str = "text"  # stream-json: the turns are user messages read from standard input
    include_partial: bool = False  # stream-json: `stream_event` lines as text streams


JSON_FORMATS = ("json", "stream-json", "events")


def error_result(output_format: str, message: str, out: TextIO, *, session_id: str = "", num_turns: int = 0) -> None:
    """In a JSON output format, the result line of a run that failed before it started (or of a bad input line):
    `is_error` true and the one-line message. Nothing in text format (the message is on stderr)."""
    if output_format not in JSON_FORMATS:
        return
    from agentcli.stream_json import dumps
    from agentcli.stream_json import error_result as result_line
    from agentcli.text import json_safe

    with contextlib.suppress(OSError, ValueError):
        out.write(json_safe(dumps(result_line(message, session_id=session_id, num_turns=num_turns))) + "\n")
        out.flush()


def _summary(session: Session, outcome: RunOutcome, printer: Printer, tasks: list[dict[str, object]]) -> None:
    from agentcli.oneshot.printer_base import RunSummary

    ledger = session.ledger
    total = ledger.total
    usage = total.as_dict()
    del usage["cost_usd"]
    printer.finish(
        RunSummary(
            status=outcome.status,
            result=outcome.result,
            session_id=session.id,
            model=session.model.display,
            turns=outcome.turns,
            error=outcome.error,
            usage=usage,  # the whole tree's tokens (agentcli.agent.ledger)
            cost_usd=total.cost_usd,
            ledger=ledger.as_dict(),
            tasks=tasks,
            stop_reason=outcome.stop_reason,
        )
    )


async def _run(
    loaded: LoadedConfig, options: OneShotOptions, out: TextIO, err: TextIO, stop: SignalStop | None = None
) -> int:
    from agentcli.agent import RunOutcome
    from agentcli.oneshot.printers import make_printer
    from agentcli.tools import PermissionPolicy

    settings = loaded.settings
    if stop is not None:
        stop.install(asyncio.get_running_loop(), asyncio.current_task())
    if notice := PermissionPolicy.yes_ignored(settings.permissions, options.approve_mutating):
        err.write(f"agentcli: {notice}\n")  # readonly wins over --yes; said once
    conversation = await _open(settings, options, out, err)
    if conversation is None:
        return EXIT_FAILURE
    printer = make_printer(options.output_format, out, err, verbose=options.verbose,
                           partial=options.include_partial, permission_mode=settings.permissions.mode)
    conversation.bus.subscribe(printer)
    session = conversation.session
    log.info("run started: session %s, model %s, workspace %s", session.id, conversation.model.display,
             options.workspace)
    outcome: RunOutcome | None = None
    driven = _Driven()  # --input-format stream-json: each turn prints its own result line
    try:
        # Nothing to paint meanwhile: a worker thread would only slow the SDK import down.
        await conversation.prepare(in_thread=False, on_sent=settle_gc)
        if options.input_format == "stream-json":
            outcome = await _drive(conversation, printer, options, out, err, driven)
        else:
            prompt = await command_prompt(conversation, options, err)
            if prompt is None:
                outcome = RunOutcome("failed", "", 0, "the slash command could not be expanded")
                return EXIT_FAILURE  # the reason is said; the result line follows (finally)
            outcome = await conversation.send(prompt)
    finally:
        if stop is not None:
            stop.disarm()
        if outcome is None:  # cancelled (Ctrl-C, SIGTERM, SIGHUP): the loop recorded it; say so in the printer's format
            reason = f"stopped by {stop.name}" if stop is not None and stop.signum else "interrupted"
            outcome = RunOutcome("cancelled", "", session.turns, reason)
        await conversation.aclose()  # every write has succeeded or failed after this
        process_exit.ready()  # store, clients, subagents and tool processes are closed: no teardown needed
        report = conversation.persistence_report("run")
        with contextlib.suppress(OSError, ValueError):  # a terminal that hung up cannot take the output
            if options.input_format != "stream-json" or driven.busy:  # stopped mid-turn: that turn's result
                _summary(session, outcome, printer, _tasks(conversation))
            if report:
                err.write(report + "\n")
        log.info("run finished: %s after %d turns", outcome.status, outcome.turns)
    if report:
        return EXIT_FAILURE if outcome.status == "completed" else _failed(outcome, err)
    if outcome.status == "completed":
        return EXIT_OK
    if options.input_format == "stream-json" and not driven.busy:
        return EXIT_FAILURE  # each bad line and failed turn said why when it happened: not again at the exit
    return _failed(outcome, err)


async def _open(settings: Settings, options: OneShotOptions, out: TextIO, err: TextIO) -> Conversation | None:
    """The run's conversation, resumed when asked; None when it cannot open (said, with the error result)."""
    from agentcli.conversation import Conversation, OpenError
    from agentcli.text import terminal_safe

    try:
        conversation = Conversation.open(
            settings, options.workspace, model=options.model, oneshot=True, yes=options.approve_mutating,
            verbose=options.verbose,
        )
    except OpenError as exc:
        err.write(f"agentcli: {exc}\n")
        error_result(options.output_format, str(exc), out)
        return None
    if options.continue_latest or options.resume is not None:
        from agentcli.conversation import ResumeError

        try:
            ref = None if options.continue_latest else options.resume
            resumed = await conversation.resume(ref, keep_model=options.keep_model)
        except ResumeError as exc:
            err.write(f"agentcli: {terminal_safe(str(exc))}\n")
            error_result(options.output_format, str(exc), out)
            await conversation.aclose()
            return None
        for note in resumed.notes:
            err.write(f"agentcli: note: {note}\n")
    return conversation


async def _with_mentions(conversation: Conversation, prompt: str, err: TextIO) -> str | Message:
    """The prompt with the files and images its `@paths` name; a line on stderr for each."""
    from agentcli.frontend import with_mentions
    from agentcli.text import terminal_safe

    if "@" not in prompt:
        return prompt
    message, lines = await with_mentions(prompt, conversation.runner.tool_context(conversation.session))
    for line in lines:
        err.write(terminal_safe(f"agentcli: {line}") + "\n")
    return message


async def command_prompt(conversation: Conversation, options: OneShotOptions, err: TextIO) -> str | Message | None:
    """The prompt to send: `/name args` naming a custom command (`slash_commands`) is its expansion, with its
    `!`commands`` run (trusted workspace, approved: refused without --yes) and `@paths` attached; any other prompt
    with its `@paths` attached (images too), as the TUI does. None after saying (one line) why the command cannot
    be expanded."""
    from agentcli.frontend import CommandSet, model_spec
    from agentcli.text import terminal_safe

    text = options.prompt.strip()
    word, _, arguments = text.partition(" ")
    found = None
    if len(word) >= 2 and word.startswith("/") and "/" not in word[1:]:
        found = CommandSet.load(options.workspace, skills=conversation.skills.skills.values(),
                                plugins=conversation.plugins.plugins).find(word[1:])
    if found is None:
        return await _with_mentions(conversation, options.prompt, err)
    if isinstance(found, list):
        names = ", ".join(f"/{c.qualified}" for c in found)
        err.write(terminal_safe(f"agentcli: {word} is ambiguous: {names}") + "\n")
        return None
    from agentcli.config import trust
    from agentcli.frontend import command_message, user_message
    from agentcli.subagents import AgentFileError

    ctx = conversation.runner.tool_context(conversation.session)
    try:
        message = await command_message(found, arguments, ctx, trusted=trust.is_trusted(options.workspace))
    except AgentFileError as exc:
        err.write(terminal_safe(f"agentcli: {word}: {found.path}: {exc}") + "\n")
        return None
    for note in message.notes:
        err.write(terminal_safe(f"agentcli: {word}: {note}") + "\n")
    if found.skill_folder is not None:  # a skill invoked by name: the files it bundles are readable
        conversation.allow_reads(found.skill_folder)
    if found.model and not options.keep_model:
        try:
            conversation.set_model(model_spec(found.model, conversation.settings))
        except Exception as exc:  # a model this configuration cannot use: go on with the current one
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            err.write(terminal_safe(f"agentcli: {word}: model {found.model!r} not used ({why}); "
                                    f"using {conversation.model.display}") + "\n")
    return user_message(message.prompt, message.extras)


def summarize(conversation: Conversation, outcome: RunOutcome, printer: Printer) -> None:
    """The printer's end of a turn (the result line or object, the text summary)."""
    _summary(conversation.session, outcome, printer, _tasks(conversation))


def _tasks(conversation: Conversation) -> list[dict[str, object]]:
    return [r.model_dump(mode="json") for r in conversation.runner.records()]


@dataclass(slots=True)
class _Driven:
    """Where `--input-format stream-json` stands: a turn is running (stopped there, its result is due)."""

    busy: bool = False


async def _drive(
    conversation: Conversation, printer: Printer, options: OneShotOptions, out: TextIO, err: TextIO, state: _Driven
) -> RunOutcome:
    """`--input-format stream-json`: each user message on standard input is a turn of the one session, in
    order, until EOF; each turn ends with its result line. A line that is not a user message gets an error
    result line (and one on stderr) and the session goes on. The outcome: the last failed turn's (a bad
    line counts as failed), else the last turn's."""
    from agentcli.agent import RunOutcome
    from agentcli.stream_json import InputLineError, parse_input_line
    from agentcli.text import terminal_safe

    session = conversation.session
    failed: RunOutcome | None = None
    last: RunOutcome | None = None
    number = 0
    async for text in stdin_lines():
        number += 1
        try:
            item = parse_input_line(text, number)
        except InputLineError as exc:
            err.write(f"agentcli: {terminal_safe(str(exc))}\n")
            error_result(options.output_format, str(exc), out, session_id=session.id, num_turns=session.turns)
            failed = RunOutcome("failed", "", session.turns, str(exc))
            continue
        if item is None:
            continue
        printer.begin()
        state.busy = True
        last = await conversation.send(item.prompt)
        state.busy = False
        _summary(session, last, printer, _tasks(conversation))
        if last.status != "completed":
            err.write(f"agentcli: {terminal_safe(last.error or last.status)}\n")
            failed = last
    if last is None and failed is None:
        reason = "standard input held no user message (--input-format stream-json)"
        err.write(f"agentcli: {reason}\n")
        error_result(options.output_format, reason, out, session_id=session.id)
        return RunOutcome("failed", "", 0, reason)
    return failed or last or RunOutcome("failed", "", 0, "no turn")


async def stdin_lines() -> AsyncIterator[str]:
    """Standard input's lines as they arrive, read by a daemon thread (a blocked read never holds up the exit
    after Ctrl-C, and a regular file works as well as a pipe)."""
    import threading

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def read() -> None:
        from agentcli.safe_text import from_bytes

        try:
            stream = sys.stdin.buffer if sys.stdin is not None else None
            for raw in iter(stream.readline, b"") if stream is not None else ():
                loop.call_soon_threadsafe(queue.put_nowait, from_bytes(raw))
        except (OSError, ValueError):
            pass  # a closed or unreadable stdin ends the input
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
                loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=read, name="agentcli-stdin", daemon=True).start()
    while (line := await queue.get()) is not None:
        yield line


def pause_gc() -> None:
    """Start-up: no collection passes while the SDK's and agentcli's modules load (each full pass over their
    objects takes 0.1-0.2 s); `settle_gc` turns collection back on once the first request is out."""
    gc.disable()


def settle_gc() -> None:
    """The first request is out: what start-up allocated lives as long as the process (modules, classes,
    schemas), so it is moved out of the collector's view (`gc.freeze`) and collection resumes."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def pick_session(workspace: Path, err: TextIO) -> str | None:
    """`run --resume` without an ID on a terminal: a numbered list of this workspace's sessions, read before the
    run starts (Ctrl-C there is a plain interrupt); the chosen id, or None after saying why there is none."""
    from agentcli.figures import format_cost
    from agentcli.frontend import format_when, stored_ledger
    from agentcli.store import Store, StoreError
    from agentcli.text import terminal_safe

    try:
        with Store.open() as store:
            sessions = store.list_sessions(limit=9, workspace=str(workspace))
            spent = [store.session_spend(s.id) for s in sessions]
    except StoreError as exc:
        err.write(f"agentcli: {terminal_safe(str(exc))}\n")
        return None
    if not sessions:
        err.write(terminal_safe(f"agentcli: no stored session in {workspace}") + "\n")
        return None
    err.write("Sessions of this workspace, most recent first:\n")
    for number, (record, tree) in enumerate(zip(sessions, spent, strict=True), 1):
        total = stored_ledger(tree).total if tree is not None else None
        cost = format_cost(total.cost_usd) if total is not None and total.requests else "-"
        model = f"{record.provider}:{record.model}" if record.provider else record.model
        line = f"  {number}. {record.title or '(untitled)'}  [{format_when(record.updated_at)} · {model} · {cost}]"
        err.write(terminal_safe(f"{line}  {record.id}") + "\n")
    err.write(f"Resume which one (1-{len(sessions)}, Enter to give up)? ")
    err.flush()
    answer = sys.stdin.readline().strip()
    if answer.isdigit() and 1 <= int(answer) <= len(sessions):
        return sessions[int(answer) - 1].id
    err.write(terminal_safe(f"agentcli: {'no session chosen' if not answer else f'{answer!r} is not one of the list'}")
              + "\n")
    return None


def _failed(outcome: RunOutcome, err: TextIO) -> int:
    from agentcli.text import terminal_safe

    err.write(f"agentcli: {terminal_safe(outcome.error or outcome.status)}\n")
    return EXIT_FAILURE


def run_oneshot(
    loaded: LoadedConfig, options: OneShotOptions, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the job to completion and return the process exit code."""
    err_stream = err or sys.stderr
    if options.resume == "":  # --resume without an ID: ask first (the command line made sure there is a terminal)
        try:
            picked = pick_session(options.workspace, err_stream)
        except KeyboardInterrupt:
            _say(err_stream, "\nagentcli: interrupted\n")
            return EXIT_INTERRUPTED
        if picked is None:
            return EXIT_FAILURE
        options = replace(options, resume=picked)
    stop = SignalStop()
    try:
        return asyncio.run(_run(loaded, options, out or sys.stdout, err_stream, stop))
    except KeyboardInterrupt:
        _say(err_stream, "agentcli: interrupted\n")
        return EXIT_INTERRUPTED
    except asyncio.CancelledError:
        if stop.signum is None:
            raise
        _say(err_stream, f"agentcli: stopped by {stop.name}\n")
        return stop.exit_code


def _say(stream: TextIO, text: str) -> None:
    """Write a last line; a terminal that hung up (SIGHUP) cannot take it, and that is fine."""
    with contextlib.suppress(OSError, ValueError):
        stream.write(text)
        stream.flush()
