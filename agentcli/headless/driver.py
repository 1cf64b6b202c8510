"""`agentcli` in Claude Code's headless mode: the command line read (`flags`, `settings_map`), the session opened,
then its turns: one prompt (`-p "PROMPT"`), or with `--input-format stream-json` each user message on standard
input, in order, while control requests are served as they arrive (an `interrupt` stops the running turn, the
next message starts the next one). Every turn's lines go out as Claude Code writes them (`printer`). Each user
message's uuid (the program's, else one made here and replayed) names its prompt's checkpoint, which
`rewind_files` (`rewind`) goes back to.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentcli import process_exit
from agentcli.frontend import EXIT_FAILURE, EXIT_USAGE, Failure, load, workspace_dir
from agentcli.headless.control import ControlChannel
from agentcli.headless.flags import FlagError, HeadlessArgs, parse
from agentcli.headless.settings_map import Mapped, map_flags, model_spec
from agentcli.oneshot import EXIT_INTERRUPTED, EXIT_OK, SignalStop, error_result, settle_gc, stdin_lines
from agentcli.text import terminal_safe

if TYPE_CHECKING:
    from agentcli.agent import RunOutcome
    from agentcli.config import LoadedConfig
    from agentcli.conversation import Conversation
    from agentcli.headless.printer import HeadlessPrinter
    from agentcli.headless.structured import Structured
    from agentcli.llm import Message
    from agentcli.oneshot import Printer
    from agentcli.stream_json import UserInput

log = logging.getLogger(__name__)
#: Set by the Claude Agent SDK: it reads `session_state_changed` lines.
SESSION_STATE_ENV = "CLAUDE_CODE_SDK_READS_SESSION_STATE"


def main(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run Claude Code's headless mode; the process's exit code."""
    from agentcli.safe_text import from_argv, safe_streams

    safe_streams()
    out, err = out or sys.stdout, err or sys.stderr
    argv = [from_argv(a) for a in argv]
    output_format = _format_of(argv)
    try:
        args = parse(argv)
        _check(args)
        mapped = map_flags(args)
    except FlagError as exc:
        err.write(f"agentcli: {terminal_safe(str(exc))}\n")
        error_result(output_format, str(exc), out)
        return EXIT_USAGE
    for warning in args.warnings:
        err.write(f"agentcli: warning: {terminal_safe(warning)}\n")
    try:
        workspace = workspace_dir(Path(args.cwd) if args.cwd else None)
        if args.trust:
            from agentcli.config import trust

            trust.trust(workspace)
        loaded, spec = _config(workspace, args, mapped)
    except Failure as exc:
        error_result(output_format, exc.message, out)
        return int(exc.exit_code)
    stop = SignalStop()
    try:
        return asyncio.run(_session(loaded, spec, workspace, args, mapped, out, err, stop))
    except KeyboardInterrupt:
        err.write("agentcli: interrupted\n")
        return EXIT_INTERRUPTED
    except asyncio.CancelledError:
        if stop.signum is None:
            raise
        err.write(f"agentcli: stopped by {stop.name}\n")
        return stop.exit_code


def _format_of(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--output-format" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--output-format="):
            return arg.partition("=")[2]
    return "text"


def _check(args: HeadlessArgs) -> None:
    streamed = args.input_format == "stream-json"
    if streamed and args.output_format != "stream-json":
        raise FlagError("--input-format stream-json needs --output-format stream-json")
    if args.include_partial and args.output_format != "stream-json":
        raise FlagError("--include-partial-messages needs --output-format stream-json")
    if args.continue_ and args.resume is not None:
        raise FlagError("--continue and --resume cannot be used together")
    if args.resume == "":
        raise FlagError("--resume needs a session id in headless mode ('agentcli sessions list' shows them)")
    if args.permission_prompt_tool not in (None, "stdio"):
        raise FlagError(f"--permission-prompt-tool {args.permission_prompt_tool!r}: only \"stdio\" is supported "
                        "(the program answers can_use_tool requests)")
    if args.permission_prompt_tool == "stdio" and not streamed:
        raise FlagError("--permission-prompt-tool stdio needs --input-format stream-json")
    if args.fork_session and not (args.continue_ or args.resume):
        raise FlagError("--fork-session needs --resume or --continue")
    if args.session_id is not None and (args.continue_ or args.resume) and not args.fork_session:
        raise FlagError("--session-id names a new session: with --resume or --continue it needs --fork-session")
    if args.session_id is not None:
        import uuid

        try:
            uuid.UUID(args.session_id)
        except ValueError:
            raise FlagError(f"--session-id {args.session_id!r} is not a UUID") from None
    if not streamed and (args.prompt is None or not args.prompt.strip()):
        prompt = sys.stdin.read() if sys.stdin is not None and not sys.stdin.isatty() else ""
        if not prompt.strip():
            raise FlagError("the prompt is missing: agentcli -p \"PROMPT\" (or --input-format stream-json)")
        args.prompt = prompt


def _config(workspace: Path, args: HeadlessArgs, mapped: Mapped) -> tuple[LoadedConfig, str]:
    """The layered config with the flags on top; the model spec (a bare model id replaces the main model's)."""
    overrides, origins = dict(mapped.overrides), dict(mapped.origins)
    config = Path(args.config) if args.config else None
    spec = mapped.model or "main"
    loaded = load(workspace, config, overrides, origins, claude_sources=mapped.sources)
    if spec not in ("main", "light") and ":" not in spec and spec not in loaded.settings.models.aliases:
        overrides["models.main.model"], origins["models.main.model"] = spec, "--model"
        loaded = load(workspace, config, overrides, origins, trusted=loaded.trusted, claude_sources=mapped.sources)
        spec = "main"
    return loaded, spec


async def _session(loaded: LoadedConfig, spec: str, workspace: Path, args: HeadlessArgs, mapped: Mapped,
                   out: TextIO, err: TextIO, stop: SignalStop) -> int:
    from agentcli.conversation import Conversation, OpenError, ResumeError
    from agentcli.headless.approver import SdkApprover
    from agentcli.headless.printer import HeadlessPrinter
    from agentcli.oneshot import make_printer

    stop.install(asyncio.get_running_loop(), asyncio.current_task())
    streamed = args.input_format == "stream-json"
    printer: Printer
    if args.output_format == "stream-json":
        printer = HeadlessPrinter(out, err, partial=args.include_partial,
                                  session_state=os.environ.get(SESSION_STATE_ENV) == "1")
    else:
        printer = make_printer(args.output_format, out, err, verbose=args.verbose)
    channel = ControlChannel(printer.write if isinstance(printer, HeadlessPrinter) else lambda line: None)
    approver = SdkApprover(channel, printer) if args.permission_prompt_tool == "stdio" and isinstance(
        printer, HeadlessPrinter) else None
    try:
        conversation = Conversation.open(loaded.settings, workspace, model=spec, approver=approver, oneshot=True,
                                         yes=args.yes, verbose=args.verbose)
    except OpenError as exc:
        err.write(f"agentcli: {exc}\n")
        error_result(args.output_format, str(exc), out)
        return EXIT_FAILURE
    try:
        _shape(conversation, mapped, approver, channel if streamed else None)
        conversation.keep_transcript()  # the program's hooks (registered at initialize) read it
        if args.continue_ or args.resume:
            for note in (await conversation.resume(args.resume, keep_model=mapped.model is not None)).notes:
                err.write(f"agentcli: note: {note}\n")
            if args.fork_session:
                await conversation.fork(args.session_id)
        elif args.session_id is not None:
            try:
                conversation.find_session(args.session_id)
            except ResumeError:
                conversation.session.id = args.session_id  # Claude Code's UUIDs are agentcli session ids too
            else:
                raise ResumeError(f"--session-id {args.session_id} is already in use")
        if mapped.effort:  # after a resume, which takes the stored session's model
            conversation.use_effort(mapped.effort)
        if args.fallback_model:
            conversation.use_fallback(model_spec(args.fallback_model, loaded.settings))
        conversation.bus.subscribe(printer)
        if streamed:
            assert isinstance(printer, HeadlessPrinter)
            outcome = await Driver(conversation, printer, channel, args, err, mapped.schema).run()
        else:
            outcome = await _one_turn(conversation, printer, args, mapped.schema)
    except (ValueError, ResumeError) as exc:
        err.write(f"agentcli: {terminal_safe(str(exc))}\n")
        error_result(args.output_format, str(exc), out, session_id=conversation.session.id)
        return EXIT_USAGE if isinstance(exc, ValueError) else EXIT_FAILURE
    finally:
        stop.disarm()
        await conversation.aclose()  # every write has succeeded or failed after this (also when stopped)
        process_exit.ready()  # nothing left to tear down: the process ends at once (the SDK waits for it)
    if report := conversation.persistence_report("run"):
        err.write(report + "\n")
        return EXIT_FAILURE
    return EXIT_OK if outcome is None or outcome.status == "completed" else EXIT_FAILURE


def program_forward(channel: ControlChannel) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]:
    """How the session's MCP client reaches a server in the program: `mcp_message` control requests."""

    async def forward(server: str, message: dict[str, Any]) -> dict[str, Any] | None:
        answer = await channel.request({"subtype": "mcp_message", "server_name": server, "message": message})
        response = answer.get("mcp_response")
        return response if isinstance(response, dict) else None

    return forward


def _shape(conversation: Conversation, mapped: Mapped, approver: Any, channel: ControlChannel | None) -> None:
    """The flags' system prompt, tools, rules and MCP servers, before the first turn. ValueError: a bad rule or
    server definition (one line)."""
    from agentcli.mcp import SpecError
    from agentcli.tools import PermissionRule

    if mapped.sources is not None:
        conversation.use_setting_sources(mapped.sources)
    conversation.shape_main_agent(system_prompt=mapped.system_prompt, append=mapped.append, offers=mapped.offers())
    if mapped.dirs:
        conversation.add_directories(mapped.dirs)
    policy = conversation.permissions
    policy.allow += [PermissionRule.parse(rule) for rule in mapped.allow]
    policy.deny += [PermissionRule.parse(rule) for rule in mapped.deny]
    policy.ask += [PermissionRule.parse(rule) for rule in mapped.ask]
    try:  # the main agent's servers: these, and unless --strict-mcp-config the configured ones too
        conversation.mcp.add_main(mapped.mcp_servers, origin="--mcp-config", only=mapped.strict_mcp)
    except SpecError as exc:
        raise ValueError(str(exc)) from None
    if mapped.agents:
        from agentcli.headless.agents import define_agents

        notes = define_agents(conversation.registry, mapped.agents, source="--agents",
                              aliases=conversation.settings.models.aliases)
        if notes:
            raise ValueError(notes[0])
    if channel is not None:
        conversation.mcp.program = program_forward(channel)
    if approver is not None:
        approver.policy = policy
        approver.interrupt = conversation.cancel_turn
        conversation.use_questions(approver.ask_questions)  # AskUserQuestion: the program's can_use_tool answers


async def _turn(conversation: Conversation, prompt: str | Message, schema: dict[str, Any] | None,
                message_id: str | None = None) -> Structured:
    """One turn (`message_id`: the user message's uuid, for its checkpoint); with `--json-schema` its answer checked
    (and repaired once) against the schema."""
    from agentcli.headless.structured import Structured, structured_turn

    if schema is None:
        return Structured(await conversation.send(prompt, message_id=message_id))
    return await structured_turn(conversation, prompt, schema, message_id)


async def _one_turn(conversation: Conversation, printer: Printer, args: HeadlessArgs,
                    schema: dict[str, Any] | None) -> RunOutcome:
    from agentcli.oneshot import summarize

    assert args.prompt is not None
    await conversation.prepare(in_thread=False, on_sent=settle_gc)
    turn = await _turn(conversation, args.prompt, schema)
    outcome = turn.outcome
    if turn.document is not None:  # text and json print the document as the answer
        outcome = replace(outcome, result=json.dumps(turn.document, ensure_ascii=False, separators=(",", ":")))
    summarize(conversation, outcome, printer)
    return outcome


class Driver:
    """`--input-format stream-json`: user messages become turns, one at a time, in order; control lines are
    served as they come; standard input's end finishes the running turn and ends the session."""

    def __init__(self, conversation: Conversation, printer: HeadlessPrinter, channel: ControlChannel,
                 args: HeadlessArgs, err: TextIO, schema: dict[str, Any] | None = None) -> None:
        from agentcli.headless.init_fields import FlagsGiven
        from agentcli.headless.requests import Requests
        from agentcli.headless.rewind import FileRewinds, rewinding_enabled

        self.conversation = conversation
        self.printer = printer
        self.channel = channel
        self.args = args
        self.err = err
        self.requests = Requests(conversation, channel, printer,
                                 lambda line: err.write(f"agentcli: warning: {terminal_safe(line)}\n"),
                                 FlagsGiven(mode=args.permission_mode is not None or args.skip_permissions,
                                            model=args.model is not None))
        self.queue: asyncio.Queue[tuple[UserInput, str] | None] = asyncio.Queue()  # a message, its uuid
        self.outcome: RunOutcome | None = None  # the last turn's, or a bad line's after it
        self.schema = schema
        self.running = False  # a message taken from the queue is being answered
        self.rewinds = FileRewinds(conversation, lambda: self.running or not self.queue.empty(),
                                   rewinding_enabled(os.environ))
        channel.handlers["rewind_files"] = self.rewinds.rewind_files

    async def run(self) -> RunOutcome | None:
        self._import_sdk()
        worker = asyncio.create_task(self._turns(), name="headless-turns")
        number = 0
        try:
            async for text in stdin_lines():
                number += 1
                self._line(text, number)
                if worker.done():
                    break
        finally:
            self.queue.put_nowait(None)
            self.channel.close()
            with contextlib.suppress(asyncio.CancelledError):
                await worker
            await self.channel.drain()
        return self.outcome

    def _import_sdk(self) -> None:
        """Import the provider's SDK (~1-2 s) in a daemon thread while the program sends `initialize` and its first
        message: the first turn builds the agent only after `initialize` (its agents join the Task tool)."""
        import importlib
        import threading

        name = "anthropic" if self.conversation.model.provider == "anthropic" else "openai"
        threading.Thread(target=importlib.import_module, args=(name,), name="agentcli-sdk-import", daemon=True).start()

    def _line(self, text: str, number: int) -> None:
        from agentcli.stream_json import InputLineError, load_line, user_input

        if not text.strip():
            return
        try:
            data = load_line(text, f"standard input line {number}")
        except InputLineError as exc:
            self._bad(str(exc))
            return
        if isinstance(data, dict) and self.channel.receive(data):
            return
        if isinstance(data, dict) and data.get("type") == "keep_alive":
            return
        try:
            item = user_input(data, number)
        except InputLineError as exc:
            self._bad(str(exc))
            return
        given = data.get("uuid")
        message_id = given if isinstance(given, str) and given else _uuid()
        if self.args.replay_user_messages:
            self.printer.write({**data, "session_id": self.conversation.session.id, "uuid": message_id,
                                "isReplay": True})
        self.queue.put_nowait((item, message_id))

    def _bad(self, message: str) -> None:
        from agentcli.agent import RunOutcome

        self.err.write(f"agentcli: {terminal_safe(message)}\n")
        self.outcome = RunOutcome("failed", "", 0, message)

    async def _turns(self) -> None:
        while (entry := await self.queue.get()) is not None:
            self.running = True
            try:
                await self._answer(*entry)
            finally:
                self.running = False

    async def _answer(self, item: UserInput, message_id: str) -> None:
        """One user message's turn, from its init line to its result (once no rewind is under way)."""
        conversation, printer = self.conversation, self.printer
        await self.rewinds.idle()
        # Built at the first turn, after `initialize` (its agents join the Task tool's description).
        await self.requests.settled.wait()
        await conversation.prepare(in_thread=False, on_sent=settle_gc)
        printer.start_turn(
            session_id=conversation.session.id, cwd=str(conversation.workspace),
            model=conversation.model.model, tools=await conversation.offered_tools(),
            mode=conversation.permissions.mode, agents=conversation.registry.names(),
            mcp=[{"name": n, "status": "connected" if s.status == "running" else s.status}
                 for n, s in conversation.mcp.servers.items()],
            plugins=[{"name": p.name, "path": str(p.root), **({"version": p.version} if p.version else {})}
                     for p in conversation.plugins.plugins],
            plugin_notes={"plugin_errors": conversation.plugins.errors,
                          "plugin_warnings": conversation.plugins.warnings},
        )
        turn = await _turn(conversation, item.prompt, self.schema or self.requests.schema, message_id)
        self.outcome = outcome = turn.outcome
        printer.end_turn(status=outcome.status, result=outcome.marked_result(), error=outcome.error,
                         stop_reason=outcome.stop_reason, structured=turn.document, subtype=turn.subtype,
                         idle=self.queue.empty())

def _uuid() -> str:
    import uuid

    return str(uuid.uuid4())
