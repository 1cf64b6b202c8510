"""Slash commands of the TUI: /help, /agents, /skills, /tasks, /bg (`ui.background`), /mcp, /model, /new (/clear),
/resume, /rewind, /undo, /redo (those three in `ui.rewind`), /cost, /compact, /copy, /export, /notify,
/output-style, /vim, /go, /quit;
then the person's and the project's own (`slash_commands`), which never take a built-in's name."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from agentcli.figures import compact_tokens, format_cost, spend_text, tokens_text
from agentcli.ui.background import background_command
from agentcli.ui.host import AppHost
from agentcli.ui.keys import keys_help
from agentcli.ui.model import format_seconds
from agentcli.ui.plan import GO_PROMPT
from agentcli.ui.plugin_command import plugin_command
from agentcli.ui.rewind import redo_command, rewind_command, undo_command

if TYPE_CHECKING:
    from agentcli.conversation import Conversation, Resumed
    from agentcli.frontend import CommandSet, CustomCommand
    from agentcli.ui.model import Entry
    from agentcli.ui.notify import Notifier, NotifyMode
    from agentcli.ui.widgets.prompt_input import PromptInput



class CommandHost(AppHost, Protocol):
    """What commands need from the app."""

    async def reset_view(self) -> None: ...

    async def show_history(self) -> None: ...

    async def pick_session(self, choices: list[tuple[str, str]]) -> str | None: ...

    async def redraw_history(self) -> None: ...

    def edit_prompt(self, text: str) -> None: ...

    def quit_app(self) -> None: ...

    @property
    def plan_ready(self) -> bool: ...

    def start_turn(self, text: str) -> None: ...

    @property
    def notifier(self) -> Notifier: ...

    def save_setting(self, key: tuple[str, ...], value: str | bool) -> None: ...

    @property
    def prompt(self) -> PromptInput: ...

    @property
    def transcript(self) -> list[Entry]: ...

    def copy_to_clipboard(self, text: str) -> None: ...

    @property
    def custom_commands(self) -> CommandSet: ...

    def reload_commands(self) -> None: ...

    def start_command(self, line: str, command: CustomCommand, arguments: str) -> None: ...


Handler = Callable[[CommandHost, str], Awaitable[None]]

KEYS_HELP = keys_help() + (
    "\nCtrl+R searches the prompt history (kept per workspace). / at the start lists commands and @ lists "
    "workspace paths: Tab completes. @path attaches that file to the prompt; !command runs a shell command (its "
    "output goes with your next prompt). A prompt sent while a turn runs is queued and sent when it ends (Up in "
    "an empty prompt takes it back to edit); /commands run at once."
)


async def _help(host: CommandHost, arg: str) -> None:
    lines = ["Commands:"] + [f"  /{name:<7} {text}" for name, (_, text) in COMMANDS.items()]
    custom = host.custom_commands
    if custom.commands:
        lines += ["", "Your commands (.claude/commands):"]
        lines += [f"  /{name} {label}" for name, label in custom.completions().items()]
    lines += [f"  not used: {problem.path}: {problem.reason}" for problem in custom.problems]
    host.say("\n".join([*lines, "", KEYS_HELP]))


async def _skills(host: CommandHost, arg: str) -> None:
    catalog = host.conversation.skills
    if not catalog.skills and not catalog.problems:
        host.say("No skills (folders with a SKILL.md in .claude/skills or .agents/skills, of the workspace or ~).")
        return
    lines = ["Skills (the model sees each name and description, and loads one with the Skill tool):"]
    lines += [f"  {skill.name} ({skill.scope}): {skill.description}" for skill in catalog.skills.values()]
    lines += [f"  skipped: {problem.path}: {problem.reason}" for problem in catalog.problems]
    lines += [f"  shadowed: {skill.path} (by {catalog.skills[skill.name].path})" for skill in catalog.shadowed]
    host.say("\n".join(lines))


async def _agents(host: CommandHost, arg: str) -> None:
    types = host.conversation.registry.types
    if not types:
        host.say("No subagent types are available.")
        return
    lines = ["Subagent types:"]
    for agent in types.values():
        access = "read-only" if agent.read_only else "can edit and run commands"
        lines.append(f"  {agent.name} ({agent.model or 'inherit'}, {access}): {agent.description.strip()}")
    host.say("\n".join(lines))


async def _mcp(host: CommandHost, arg: str) -> None:
    manager = host.conversation.mcp
    if not manager.servers and not manager.problems:
        host.say("No MCP servers configured (.mcp.json, [mcp.servers.NAME] in the config, or agent files' "
                 "mcpServers).")
        return
    host.say("\n".join(["MCP servers:", *(f"  {line}" for line in manager.report_lines())]))


async def _tasks(host: CommandHost, arg: str) -> None:
    records = host.conversation.runner.records()
    if not records:
        host.say("No tasks in this session yet.")
        return
    lines = ["Tasks of this session:"]
    now = datetime.now(UTC)
    for r in records:
        if r.status == "running" and r.started_at is not None:  # still running: how long so far
            started = r.started_at if r.started_at.tzinfo else r.started_at.replace(tzinfo=UTC)
            took = format_seconds(max((now - started).total_seconds(), 0.0)) + " so far"
        else:
            took = format_seconds((r.time_ms or 0) / 1000)
        tokens = compact_tokens(r.input_tokens + r.output_tokens)
        indent = "  " * r.depth
        lines.append(
            f"{indent}{r.task_id}  {r.subagent_type:<8} {r.status:<10} {r.description}  "
            f"({r.model_used}, {took}, {r.tool_calls} tool{'s' if r.tool_calls != 1 else ''}, {tokens} tok)"
        )
    host.say("\n".join(lines))


async def _msg(host: CommandHost, arg: str) -> None:
    ref, _, text = arg.partition(" ")
    if not ref or not text.strip():
        host.say_error("/msg: usage: /msg TASK_ID text (a task id, a unique prefix or a label such as explore#2)")
        return
    try:
        host.say(host.conversation.message_subagent(ref, text.strip()))
    except ValueError as exc:
        host.say_error(f"/msg: {exc}")


async def _model(host: CommandHost, arg: str) -> None:
    conversation = host.conversation
    if not arg:
        host.say(f"Model: {conversation.model.display} ({conversation.model.provider}:{conversation.model.model}). "
                 "Change it with /model main | light | provider:model.")
        return
    if host.turn_running:
        host.say_error("/model: a turn is running; press Esc to stop it first")
        return
    try:  # switching provider may import its SDK: do it off the UI thread
        model = await asyncio.to_thread(conversation.set_model, arg)
    except Exception as exc:
        host.say_error(f"/model: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        return
    host.say(f"Model set to {model.display} ({model.provider}:{model.model}).")


async def _new(host: CommandHost, arg: str) -> None:
    if host.turn_running:
        host.say_error("/new: a turn is running; press Esc to stop it first")
        return
    old = host.conversation.session
    await host.conversation.new_session()
    await host.reset_view()
    host.say("Started a new session." + (f" /resume {old.id} goes back to the last one." if old.next_seq else ""))


def resumed_text(resumed: Resumed, conversation: Conversation) -> str:
    """What a resume says: which session, its model, what it has spent, and the tasks its end cut off."""
    record, ledger = resumed.record, conversation.session.ledger
    total = ledger.total
    cost = format_cost(total.cost_usd) if total.requests else "nothing"
    compacted = ", from its latest compaction" if resumed.compacted else ""
    lines = [
        f"Resumed session {record.id}: {record.title or '(untitled)'} ({resumed.messages} messages in context"
        f"{compacted}; model {conversation.model.display}; spent so far {cost})."
    ]
    for task in resumed.cut_tasks:
        lines.append(
            f"  Task {task.task_id} ({task.subagent_type}: {task.description}) was cancelled when the session "
            "ended; ask the agent to resume it."
        )
    lines += [f"  Note: {note}" for note in resumed.notes]
    return "\n".join(lines)


async def _resume(host: CommandHost, arg: str) -> None:
    from agentcli.conversation import ResumeError

    if host.turn_running:
        host.say_error("/resume: a turn is running; press Esc to stop it first")
        return
    conversation = host.conversation
    ref = arg or None
    try:
        if ref is None:
            from agentcli.ui.widgets.session_picker import session_label

            current = conversation.session.id
            sessions = [s for s in conversation.recent_sessions() if s.id != current]
            if not sessions:
                host.say("No other session of this workspace to resume.")
                return
            ref = await host.pick_session([(s.id, session_label(s, conversation.spent(s.id))) for s in sessions])
            if ref is None:
                return
        resumed = await conversation.resume(ref)
    except ResumeError as exc:
        host.say_error(f"/resume: {exc}")
        return
    await host.reset_view()
    await host.show_history()
    host.say(resumed_text(resumed, conversation))


async def _cost(host: CommandHost, arg: str) -> None:
    ledger = host.conversation.session.ledger  # the session's one ledger (agentcli.agent.ledger)
    total, own, delegated = ledger.total, ledger.own, ledger.delegated
    host.say(
        f"Tokens: {tokens_text(total.usage)}, in {total.requests} request{'' if total.requests == 1 else 's'}. "
        f"Cost: {format_cost(total.cost_usd)}"
        + ("" if total.cost_usd is not None or not total.requests else " (no price known for this model)")
        + " (session total, subagents included)"
        f"\n  main agent: {spend_text(own.usage, own.cost_usd, own.requests)}"
        f"\n  subagents:  {spend_text(delegated.usage, delegated.cost_usd, delegated.requests)}"
    )


async def _compact(host: CommandHost, arg: str) -> None:
    if host.turn_running:
        host.say_error("/compact: a turn is running; press Esc to stop it first")
        return
    host.say("Compacting the context" + (f" (focus: {arg})" if arg else "") + "…")
    try:
        done = await host.conversation.compact(arg)
    except Exception as exc:
        host.say_error(f"/compact: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        return
    if not done:
        host.say("Nothing to compact yet: the context holds only the latest exchange.")


async def _copy(host: CommandHost, arg: str) -> None:
    from agentcli.ui.export import last_answer, last_code_block, transcript_markdown

    what = arg.strip().lower()
    if what in ("", "answer"):
        text, name = last_answer(host.transcript), "the last answer"
    elif what == "code":
        text, name = last_code_block(host.transcript), "the last code block"
    elif what == "all":
        conversation = host.conversation
        text, name = transcript_markdown(host.transcript, session_id=conversation.session.id,
                                         workspace=str(conversation.workspace),
                                         model=conversation.model.display), "the transcript (Markdown)"
    else:
        host.say_error("/copy: say /copy (the last answer), /copy code (its last code block) or /copy all")
        return
    if not text:
        host.say_error(f"/copy: there is no {name.removeprefix('the ')} yet")
        return
    host.copy_to_clipboard(text)
    lines = text.count("\n") + 1
    host.say(f"Copied {name} ({lines} line{'s' if lines != 1 else ''}) to the clipboard "
             "(OSC 52: most terminals take it; some, e.g. macOS Terminal, or tmux without set-clipboard, do not).")


async def _export(host: CommandHost, arg: str) -> None:
    from agentcli.ui.export import ExportError, export_target, transcript_markdown, write_export

    conversation = host.conversation
    session = conversation.session
    target, force = export_target(arg, session.id)
    text = transcript_markdown(host.transcript, session_id=session.id, workspace=str(conversation.workspace),
                               model=conversation.model.display)
    ctx = conversation.runner.tool_context(session)
    try:
        rel = await asyncio.to_thread(write_export, target, text, ctx, force=force)
    except ExportError as exc:
        host.say_error(f"/export: {exc}")
        return
    host.say(f"Exported the transcript to {rel} (the full session: agentcli sessions show {session.id}).")


async def _quit(host: CommandHost, arg: str) -> None:
    host.quit_app()


NOTIFY_MODES: dict[NotifyMode, str] = {
    "bell": "the terminal bell",
    "osc": "a desktop notification where the terminal shows one, else the bell",
    "off": "nothing",
}


async def _notify(host: CommandHost, args: str) -> None:
    choice = args.strip()
    if not choice:
        host.say(f"Notifications: {host.notifier.mode} ({NOTIFY_MODES[host.notifier.mode]}) when an approval waits "
                 f"or a turn of {host.notifier.after_seconds:g} s or more ends. /notify bell | osc | off changes "
                 "it (saved in your config).")
        return
    mode = next((known for known in NOTIFY_MODES if known == choice), None)
    if mode is None:
        host.say_error(f"/notify: unknown choice {choice!r}: bell, osc or off")
        return
    host.notifier.mode = mode
    host.save_setting(("ui", "notify"), mode)
    host.say(f"Notifications: {mode} ({NOTIFY_MODES[mode]}), saved in your config.")


async def _output_style(host: CommandHost, arg: str) -> None:
    settings = host.conversation.person_settings
    styles = await asyncio.to_thread(settings.output_styles)
    current = settings.style.name if settings.style is not None else "default"
    if not arg:
        lines = [f"Output style: {current}. /output-style NAME changes it (saved in your config). Styles:"]
        for name in styles.names():
            style = styles.get(name)
            about = f" ({style.scope}): {style.description}" if style is not None else ": agentcli's own"
            lines.append(f"  {'*' if name.lower() == current.lower() else ' '} {name}{about}")
        lines += [f"  skipped {problem.path}: {problem.reason}" for problem in styles.problems]
        host.say("\n".join(lines))
        return
    if arg.lower() != "default" and styles.get(arg) is None:
        host.say_error(f"/output-style: no style {arg!r}: {', '.join(styles.names())}")
        return
    chosen = settings.use_style(arg)
    settings.restyle(host.conversation.session)
    name = chosen.name if chosen is not None else "default"
    host.save_setting(("ui", "output_style"), name)
    host.say(f"Output style: {name}, from the next message (saved in your config).")


async def _vim(host: CommandHost, arg: str) -> None:
    choice = arg.strip().lower()
    if choice not in ("", "on", "off"):
        host.say_error(f"/vim: unknown choice {arg.strip()!r}: /vim (toggles), /vim on or /vim off")
        return
    on = choice == "on" if choice else not host.prompt.vim_enabled
    host.prompt.set_vim_mode(on)
    host.save_setting(("ui", "vim_mode"), on)
    if on:
        host.say("Vim keys on (saved in your config): Esc goes to normal mode (h j k l w b e 0 $, d c y with a motion, "
                 "dd, x, p, u, …), i a o back to insert; the status bar shows the mode. Enter sends in both modes.")
    else:
        host.say("Vim keys off (saved in your config).")


async def _go(host: CommandHost, args: str) -> None:
    if host.turn_running:
        host.say_error("/go: a turn is running; /go carries out a plan once the turn that made it has ended.")
        return
    policy = host.conversation.permissions
    if policy.mode != "readonly" or not host.plan_ready:
        host.say_error("/go: no plan to carry out: switch to plan mode (Shift+Tab until the status bar says "
                       "read-only (plan)) and ask for one first.")
        return
    if args.strip() not in ("", "ask"):
        host.say_error(f"/go: unknown argument {args.strip()!r}: /go or /go ask")
        return
    policy.set_mode("ask" if args.strip() == "ask" else "accept_edits")
    host.start_turn(GO_PROMPT)


COMMANDS: dict[str, tuple[Handler, str]] = {
    "help": (_help, "this help"),
    "agents": (_agents, "list the subagent types with their descriptions"),
    "skills": (_skills, "list the skills the model may load (SKILL.md folders), and the files skipped"),
    "tasks": (_tasks, "this session's subagent tasks and their status"),
    "bg": (background_command, "the background commands: follow one's output, stop one (also Ctrl+G); "
           "/bg move: the running Bash command to the background (also Ctrl+B)"),
    "msg": (_msg, "message a running subagent: /msg ID text (also Ctrl+T on its block); it reads it at its next turn"),
    "model": (_model, "show or set the model: /model main | light | provider:model"),
    "new": (_new, "start a new session (empty history and view); the last one can be resumed"),
    "clear": (_new, "the same as /new"),
    "resume": (_resume, "resume a stored session of this workspace: /resume [ID] (a picker without an ID)"),
    "rewind": (rewind_command, "go back to an earlier prompt: its files, the conversation, or both, after a preview "
                               "(also Esc Esc in an empty prompt)"),
    "undo": (undo_command, "rewind the latest prompt (its files and the conversation); its text comes back to edit"),
    "redo": (redo_command, "undo the latest rewind (when no prompt was sent since)"),
    "mcp": (_mcp, "MCP servers: where each is configured, its status and tools (they start with the first message)"),
    "plugin": (plugin_command, "plugins: list what is loaded and what it arms; install NAME@MARKETPLACE|FOLDER|URL, "
               "enable, disable, marketplace add|list"),
    "plugins": (plugin_command, "the same as /plugin"),
    "cost": (_cost, "tokens and cost of this session: total, main agent, subagents, cache"),
    "compact": (_compact, "summarise the older turns now (light model): /compact [what to focus on]"),
    "copy": (_copy, "copy to the clipboard: /copy (the last answer) | /copy code (its last code block) | /copy all"),
    "export": (_export, "write the transcript as Markdown to a workspace file: /export [FILE] [--force]"),
    "notify": (_notify, "how to tell you an approval waits or a long turn ended: /notify [bell | osc | off]"),
    "output-style": (_output_style, "how the agent talks and works with you: /output-style [NAME] (lists them)"),
    "vim": (_vim, "vim keys in the prompt, on or off (saved in your config): /vim [on | off]"),
    "go": (_go, "carry out the plan made in plan mode: /go (edits accepted) | /go ask (asks before each change)"),
    "quit": (_quit, "leave agentcli (also Ctrl+Q)"),
}


def command_set(conversation: Conversation) -> CommandSet:
    """The person's and the project's command files, the skills they may invoke and the plugins' commands."""
    from agentcli.frontend import CommandSet

    return CommandSet.load(conversation.workspace, reserved=COMMANDS, skills=conversation.skills.skills.values(),
                           plugins=conversation.plugins.plugins)


def completions(custom: CommandSet) -> dict[str, str]:
    """What `/` completes: the built-in commands, then `custom`'s."""
    return {**{name: text for name, (_, text) in COMMANDS.items()}, **custom.completions()}


def is_command(text: str) -> bool:
    """`/help`, `/model light` — but not a path such as `/usr/lib is missing`."""
    word = text.split(maxsplit=1)[0] if text.strip() else ""
    return len(word) > 1 and word.startswith("/") and "/" not in word[1:] and word[1].isalpha()


async def run_command(host: CommandHost, line: str) -> None:
    """Run one `/command args` line; an unknown command gets a one-line error."""
    name, _, arg = line.strip()[1:].partition(" ")
    entry = COMMANDS.get(name.lower())
    if entry is not None:
        await entry[0](host, arg.strip())
        return
    custom = host.custom_commands.find(name)
    if isinstance(custom, list):
        host.say_error(f"/{name} is ambiguous: {', '.join('/' + c.qualified for c in custom)}")
    elif custom is None:
        host.say_error(f"Unknown command /{name}. Type /help for the list.")
    elif host.turn_running:
        host.say_error(f"/{name}: a turn is running; send it once the turn has ended (or press Esc to stop it)")
    else:
        host.start_command(line.strip(), custom, arg.strip())
