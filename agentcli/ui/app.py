"""AgentApp: the interactive TUI. Thin: layout, keys, turns as workers; `UIRouter` maps events to widgets.

The app paints and takes input at once: the provider SDK is imported by `Conversation.prepare()`
in a background worker, and a turn waits for it. While a turn runs, a new prompt is queued (shown above
the prompt, Up takes it back to edit) and sent when the turn completes (`ui.turns`). Slash commands and
`!commands` run at once. Permission requests are asked one dialog at a time (`ui.approval_queue`).

Keys and focus follow `ui/keys.py` (which `/help` prints): text keys always reach the prompt (`on_event`
moves the focus back before Textual forwards the key), Esc returns to the prompt or stops the turn (twice in
the empty prompt while nothing runs: `/rewind`, `ui.rewind`), PgUp /
PgDn / Ctrl+Home / Ctrl+End scroll the conversation from anywhere, Shift+Tab cycles the permission mode,
Ctrl+Q asks once while a turn runs. The keys that move the focus (Tab, Esc away from the prompt) and the
scrolling and mode keys are priority bindings of the app: handled as the app takes them from the terminal,
before the keys queued behind them are routed, so those keys follow the new focus (a widget's own binding
would run later, from that widget's queue, and a fast typist's Enter would reach the old focus). They apply
on the main screen only (`check_action`): in a dialog the dialog's own keys work. A widget that wants one
of them for itself says so with `check_consume_key` (the prompt, for Tab to complete), and Textual then
leaves the key to it. The rules themselves are `ui.focus`.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from textual import events, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Header, TextArea

from agentcli.config import SaveError, save_user_setting
from agentcli.frontend import CustomCommand, is_person_command
from agentcli.text import terminal_safe
from agentcli.tools import Approval, PermissionRequest
from agentcli.ui.approval_queue import ApprovalQueue
from agentcli.ui.commands import command_set, completions, is_command, run_command
from agentcli.ui.completion import PathIndex
from agentcli.ui.focus import FocusRules
from agentcli.ui.notify import Notifier, with_terminal_writes
from agentcli.ui.pacing import GC_QUIET_SECONDS, CollectorPacer, InputFirst
from agentcli.ui.prompt_history import PromptHistory
from agentcli.ui.router import UIRouter
from agentcli.ui.router_state import first_line
from agentcli.ui.status_line import StatusLine, status_line_command
from agentcli.ui.theme import SavedTheme
from agentcli.ui.turns import TurnRunner
from agentcli.ui.widgets.activity import TurnActivity
from agentcli.ui.widgets.agent_screen import AgentScreen
from agentcli.ui.widgets.approval import Approvals
from agentcli.ui.widgets.message_list import MessageList, warm_up
from agentcli.ui.widgets.prompt_input import PromptInput
from agentcli.ui.widgets.status_bar import (
    APPROVAL,
    LOADING,
    QUESTION,
    QUIT_ARMED,
    READY,
    REWIND_ARMED,
    WORKING,
    Status,
    StatusBar,
)
from agentcli.ui.widgets.subagent_block import SPINNER_HZ, SubagentBlock

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.screen import Screen

    from agentcli.conversation import Conversation, Resumed
    from agentcli.ui.model import Entry

log = logging.getLogger(__name__)
T = TypeVar("T")
FRAME_SECONDS = 1 / 20  # batched rendering: at most 20 flushes a second
WELCOME = (
    "Type a task and press Enter (@path attaches a file, !command runs a shell command). "
    "/help lists commands and keys; Esc stops a running turn; Shift+Tab changes the permission mode."
)
QUIT_QUESTION = "Press Ctrl+Q again to quit: the running turn will be stopped."


class AgentApp(App[int]):
    """The TUI over one `Conversation` (built by `ui.launch.run_tui`, or ready-made by the demo).

    The app answers the conversation's permission requests: it attaches itself to an `Approvals`
    approver, or installs `approve` when the conversation has none; and its agents' questions (AskUserQuestion).
    """

    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "focus_prompt", "Back to prompt", priority=True),
        Binding("escape", "stop_turn", "Stop turn"),
        Binding("escape", "rewind_key", "Rewind", key_display="Esc Esc"),
        Binding("tab", "move_focus", "Focus", show=False, priority=True),
        Binding("ctrl+c", "interrupt", "Stop turn", show=False, priority=True),
        Binding("shift+tab", "cycle_mode", "Mode", priority=True),
        Binding("pageup", "scroll_messages('page_up')", "Scroll", key_display="PgUp/PgDn", priority=True),
        Binding("pagedown", "scroll_messages('page_down')", "Scroll down", show=False, priority=True),
        Binding("ctrl+home", "scroll_messages('home')", "Top", show=False, priority=True),
        Binding("ctrl+end", "scroll_messages('end')", "Bottom", show=False, priority=True),
        Binding("home", "home_end('home')", "Top", show=False, priority=True),
        Binding("end", "home_end('end')", "Bottom", show=False, priority=True),
        Binding("ctrl+q", "request_quit", "Quit", priority=True),
        Binding("ctrl+g", "command('/bg')", "Background", show=False),
        Binding("ctrl+b", "command('/bg move')", "To background", show=False),
    ]

    def __init__(
        self,
        conversation: Conversation,
        *,
        title: str | None = None,
        resumed: Resumed | None = None,
        pick_session: bool = False,
        welcome: str = WELCOME,
    ) -> None:
        """`resumed`: the conversation resumed a stored session before the app started (its transcript is
        shown); `pick_session`: open the session picker first (`agentcli --resume` without an ID); `welcome`:
        the first note (the demo says how to start it)."""
        super().__init__()
        self.conversation = conversation
        self._resumed = resumed
        self._pick_first = pick_session
        self._welcome = welcome
        self.title = terminal_safe(title or f"agentcli — {conversation.workspace}")  # a folder name is untrusted
        self.messages = MessageList(id="messages")
        self.router = UIRouter(self.messages)
        self.custom_commands = command_set(conversation)  # .claude/commands, skills, plugins
        ui = conversation.settings.ui
        self.notifier = Notifier(ui.notify, ui.notify_after_seconds)
        self.prompt = PromptInput(
            id="prompt",
            history=PromptHistory.for_workspace(conversation.workspace),
            commands=completions(self.custom_commands),
            paths=PathIndex(conversation.workspace, hidden=conversation.permissions.read_denied), vim=ui.vim_mode,
        )
        self.status_bar = StatusBar()
        self.status_line = StatusLine(status_line_command(conversation), conversation.workspace, conversation.hooks.env)
        self.activity = TurnActivity()
        self.turns = TurnRunner(self, conversation, self.router, self.prompt, self.messages, self.notifier)
        self._bindings_for_turn = False
        self.quit_armed = False  # Ctrl+Q was pressed once during a turn: the next one quits
        self.rewind_armed = False  # Esc was pressed once in the empty prompt, nothing running: the next opens /rewind
        self.saved_theme = SavedTheme(self, conversation.settings.ui.theme, self.save_setting, self.say_error)
        self.approvals = ApprovalQueue(self, conversation.permissions, self.notifier)
        self.focus_rules = FocusRules(self, self.prompt, self.messages)
        self._unsubscribe = conversation.bus.subscribe(self.router)
        self.input_first = InputFirst()
        self.collector = CollectorPacer()
        approver = conversation.permissions.approver
        if isinstance(approver, Approvals):
            approver.attach(self.approve)
        elif approver is None:
            conversation.permissions.approver = self.approve
        conversation.use_questions(self.approvals.ask_questions)  # AskUserQuestion of every agent asks here

    def compose(self) -> Any:
        """Title, conversation, prompt, status, keys."""
        yield Header(show_clock=False, icon="◆")
        yield self.messages
        yield self.activity
        yield self.prompt.queue_view
        yield self.prompt.completions
        yield self.prompt
        yield self.status_bar
        yield self.status_line
        yield Footer()

    def on_mount(self) -> None:
        """Take input now; import the SDK in the background."""
        self.saved_theme.apply()
        self.prompt.focus()
        self.notifier.bell = self.bell
        self.router.add_note(self._welcome, "info")
        if self._resumed is not None:
            self._show_resumed(self._resumed)
        elif self._pick_first:
            self._command("/resume")
        self._frame()
        self.set_interval(FRAME_SECONDS, self._frame)
        self.set_interval(1 / SPINNER_HZ, self.router.tick)
        self._prepare()

    def save_setting(self, key: tuple[str, ...], value: str | bool) -> None:
        """Keep a setting the person changed here in their own config file; a failure is one line on screen."""
        try:
            save_user_setting(key, value)
        except SaveError as exc:
            self.say_error(str(exc))

    def get_driver_class(self) -> type[Driver]:
        """The terminal driver, handing its writer to the notifier (OSC notifications)."""
        return with_terminal_writes(super().get_driver_class())

    def on_unmount(self) -> None:
        """Stop listening; deny whatever still waits for an answer; full collections back to CPython."""
        self._unsubscribe()
        self.collector.stop()
        approver = self.conversation.permissions.approver
        if isinstance(approver, Approvals):
            approver.attach(None)
        self.conversation.use_questions(None)
        self.approvals.deny_all()

    @work(group="prepare", exit_on_error=False)
    async def _prepare(self) -> None:
        try:
            await self.conversation.prepare()
            await asyncio.to_thread(warm_up)  # the first answer's Markdown, drawn ahead
            # Everything imported so far (the SDK, Textual) lives as long as the process: keep it out of the
            # cyclic GC's full collections, which otherwise stall the screen for 100+ ms while agents stream.
            gc.freeze()
            self.collector.start()  # and run the full collections at pauses in typing
        except Exception as exc:
            self.say_error(f"error: {first_line(str(exc)) or type(exc).__name__}")
        finally:
            self.turns.sdk_ready.set()

    # --- rendering --------------------------------------------------------------------------------

    def _frame(self) -> None:
        if not self.screen_stack:  # the app is closing
            return
        self.router.flush(text=self.input_first.flush_due(), mounts=self.input_first.mount_budget())
        self.collector.tick(quiet=self.input_first.quiet(GC_QUIET_SECONDS))
        self.approvals.show_waiting()
        if self.turn_running != self._bindings_for_turn:
            self._bindings_for_turn = self.turn_running
            self.refresh_bindings()
        if self.quit_armed and not self.turn_running:
            self.quit_armed = False  # the turn ended: Ctrl+Q quits at once again
        if self.rewind_armed and self.turn_running:
            self.rewind_armed = False
        self._show_status()

    def _flush_text(self) -> None:
        if self.screen_stack:
            self.router.flush(text=True, mounts=self.input_first.mount_budget())

    def _show_status(self) -> None:
        running, queued = self.router.counts()
        sdk_ready = self.turns.sdk_ready.is_set()
        busy = self.turn_running and sdk_ready and not (self.approvals.asking or self.approvals.questioning)
        self.activity.show(self.router.activity() if busy else None, time.monotonic() - self.turns.started)
        if not sdk_ready:
            state = LOADING
        elif self.quit_armed:
            state = QUIT_ARMED
        elif self.rewind_armed:
            state = REWIND_ARMED
        elif self.approvals.asking:
            state = APPROVAL
        elif self.approvals.questioning:
            state = QUESTION
        elif self.turn_running:
            state = WORKING
        else:
            state = READY
        spent = self.conversation.session.ledger.total  # the main agent's and every subagent's requests
        self.status_bar.show(Status(
            model=self.conversation.model.display, input_tokens=spent.usage.input_tokens,
            output_tokens=spent.usage.output_tokens, cost_usd=spent.cost_usd if spent.requests else 0.0,
            running=running, queued=queued, state=state, context=self.conversation.context_use(),
            window_source=self.conversation.window_source(),
            mode=self.conversation.permissions.mode, sandbox=self.conversation.sandbox.summary(),
            background=len(self.router.background), vim=self.prompt.vim_label,
        ))
        self.status_line.request(self.conversation)

    # --- CommandHost ------------------------------------------------------------------------------

    @property
    def turn_running(self) -> bool:
        """Whether a turn is running (or waiting for the SDK to start)."""
        return self.turns.running

    @property
    def plan_ready(self) -> bool:
        """Whether the last turn completed in plan (read-only) mode: /go carries its plan out."""
        return self.turns.plan_ready

    def say(self, text: str) -> None:
        """A notice in the conversation."""
        self.router.add_note(text, "info")

    def say_error(self, text: str) -> None:
        """A one-line error in the conversation."""
        self.router.add_note(text, "error")

    async def reset_view(self) -> None:
        """Empty the conversation view (a new or resumed session: earlier !command output is not carried over)."""
        self.router.reset()
        self.turns.pending_context.clear()

    @property
    def transcript(self) -> list[Entry]:
        """The main transcript's entries (for /copy and /export)."""
        return self.router.main.items

    async def show_history(self) -> None:
        """Show the current session's stored transcript (it was resumed)."""
        store = self.conversation.store
        if store is None:
            return
        from agentcli.ui.history import load_history

        history = await asyncio.to_thread(load_history, store, self.conversation.session.id)
        self.router.restore(history.items, history.blocks)

    async def pick_session(self, choices: list[tuple[str, str]]) -> str | None:
        """The session picker (from a command's worker); the chosen id, None when cancelled."""
        from agentcli.ui.widgets.session_picker import SessionPicker

        return await self.push_screen_wait(SessionPicker(choices))

    async def ask(self, screen: Screen[T]) -> T:
        """Show a modal screen (from a command's worker) and wait for its answer."""
        return await self.push_screen_wait(screen)

    async def redraw_history(self) -> None:
        """Draw the transcript again from the store (a rewind took some of it back); the `!command` output waiting
        for the next prompt stays."""
        self.router.reset()
        await self.show_history()

    def edit_prompt(self, text: str) -> None:
        """Put `text` in the prompt for the person to edit and send (a rewound prompt)."""
        self.prompt.load_text(text)
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()

    @work(group="command", exit_on_error=False)
    async def _show_resumed(self, resumed: Resumed) -> None:
        from agentcli.ui.commands import resumed_text

        try:
            await self.show_history()
        except Exception as exc:
            log.exception("history of %s not shown", resumed.record.id)
            self.say_error(f"the transcript could not be shown: {first_line(str(exc)) or type(exc).__name__}")
        self.say(resumed_text(resumed, self.conversation))

    def quit_app(self) -> None:
        """Leave the app."""
        self.exit(0)

    # --- keys and focus -----------------------------------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        """Before Textual forwards a key or a paste to the focused widget: a text key (or paste) that the focused
        widget would not take moves the focus to the prompt first, so it is typed there (in order: every key
        after it finds the prompt focused). Any key but Ctrl+Q takes back a first Ctrl+Q."""
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            if self.input_first.key():
                self.call_after_refresh(self._flush_text)
            if isinstance(event, events.Key) and event.key != "ctrl+q":
                self.quit_armed = False
            if isinstance(event, events.Key) and event.key != "escape":
                self.rewind_armed = False
            if self.focus_rules.prompt_takes(event):
                self.screen.set_focus(self.prompt, scroll_visible=False)
        await super().on_event(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc is "Back to prompt" away from the prompt, else "Stop turn" (shown disabled while no turn runs);
        the scrolling and mode keys work on the main screen only; Home / End only while the prompt is empty
        or no text entry has the focus (else they move along its line)."""
        return self.focus_rules.allows(action, lambda: self.turn_running or self.turns.person_command_running)

    def action_focus_prompt(self) -> None:
        """Esc away from the prompt: back to it."""
        self.screen.set_focus(self.prompt)

    def action_move_focus(self) -> None:
        """Tab: the next focusable widget (a block, a tool line, the conversation, the prompt)."""
        self.screen.focus_next()

    def action_cycle_mode(self) -> None:
        """Shift+Tab: the next permission mode (ask → accept edits → read-only), for every agent's next call."""
        policy = self.conversation.permissions
        policy.set_mode(policy.next_mode())
        self._show_status()

    def action_scroll_messages(self, where: str) -> None:
        """PgUp / PgDn / Ctrl+Home / Ctrl+End: scroll the conversation (the end follows new output again)."""
        self.focus_rules.scroll(where)

    def action_home_end(self, where: str) -> None:
        """Home / End while the prompt is empty (or not focused): top / bottom of the conversation."""
        self.action_scroll_messages(where)

    def action_request_quit(self) -> None:
        """Ctrl+Q: quit; while a turn runs, only the second press in a row (the turn is stopped on the way out)."""
        if self.turn_running and not self.conversation.settling and not self.quit_armed:
            self.quit_armed = True
            self.notify(QUIT_QUESTION, severity="warning")
            self._show_status()
            return
        self.conversation.cancel_turn()
        self.exit(0)

    def action_stop_turn(self) -> None:
        """Esc: stop the running turn and every subagent under it, and any `!command` still running."""
        self.turns.stop()

    def action_rewind_key(self) -> None:
        """Esc in the empty prompt while nothing runs: the first says a second opens `/rewind`; the second does
        (any other key between takes the first back)."""
        if self.rewind_armed:
            self.rewind_armed = False
            self._command("/rewind")
        else:
            self.rewind_armed = True
        self._show_status()

    def action_interrupt(self) -> None:
        """Ctrl+C: stop the running turn; otherwise copy the prompt's selection, or say how to quit."""
        if self.turn_running:
            self.action_stop_turn()
        elif isinstance(self.focused, TextArea) and self.focused.selected_text:
            self.focused.action_copy()
        else:
            self.notify("Press Ctrl+Q (or type /quit) to leave agentcli.")

    # --- input ------------------------------------------------------------------------------------

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        """Enter: a slash command, a `!command`, or a prompt for the main agent (queued while a turn runs)."""
        text = message.text.strip()
        if is_command(text):
            self.prompt.accept()
            self._command(text)
            return
        if is_person_command(text):
            self.prompt.accept()
            self.messages.follow()
            self.router.add_note(text, "user")
            self.turns.run_person_command(text[1:].strip())
            return
        if self.turn_running:
            self.prompt.enqueue(text)
            return
        self.prompt.accept()
        self.turns.start(text)

    def start_turn(self, text: str) -> None:
        """Send `text` as the person's next prompt (shown as theirs)."""
        self.turns.start(text)

    def reload_commands(self) -> None:
        """The command files, skills and plugins' commands read again (a plugin joined the session)."""
        self.custom_commands = command_set(self.conversation)
        self.prompt.commands = completions(self.custom_commands)

    def start_command(self, line: str, command: CustomCommand, arguments: str) -> None:
        """Send a custom command's expansion (`line` is what the person typed, shown as theirs)."""
        self.turns.start(line, command, arguments)

    @work(group="command", exit_on_error=False)
    async def _command(self, line: str) -> None:
        try:
            await run_command(self, line)
        except Exception as exc:
            log.exception("command %s failed", line)
            self.say_error(f"{line.split()[0]}: {first_line(str(exc)) or type(exc).__name__}")

    action_command = _command  # a key that runs a command (Ctrl+G: /bg, Ctrl+B: /bg move)

    def on_subagent_block_cancel_requested(self, message: SubagentBlock.CancelRequested) -> None:
        """Ctrl+X on a running block: cancel that subagent only."""
        self._cancel_task(message.task_id)

    def on_subagent_block_message_requested(self, message: SubagentBlock.MessageRequested) -> None:
        """Ctrl+T on a running block: `/msg ID ` in the prompt, for the person to finish and send."""
        self.prompt.text = f"/msg {message.task_id} "
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()

    def on_subagent_block_open_requested(self, message: SubagentBlock.OpenRequested) -> None:
        """Ctrl+E (or Right) on a block: that subagent's own transcript on its own screen, live (Esc: back)."""
        view = self.router.views.block_view(message.block)
        if view is not None:
            view.collapsed = True  # its entries move to the screen while it is open
        self.push_screen(AgentScreen(message.block, self.router.views))

    @work(group="cancel", exit_on_error=False)
    async def _cancel_task(self, task_id: str) -> None:
        if not await self.conversation.cancel_task(task_id):
            self.notify("That subagent has already finished.")

    async def approve(self, request: PermissionRequest) -> Approval:
        """The engine's Approver: one modal at a time (`ui.approval_queue`)."""
        return await self.approvals.approve(request)
