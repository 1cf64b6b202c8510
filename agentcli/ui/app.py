"""AgentApp: the interactive TUI. Thin: layout, keys, turns as workers; `UIRouter` maps events to widgets.

The app paints and takes input at once: the provider SDK is imported by `Conversation.prepare()`
in a background worker, and a turn waits for it. While a turn runs, a new prompt is queued (shown above
the prompt, Up takes it back to edit) and sent when the turn completes; a stopped or failed turn puts
it back into the input instead. Slash commands and `!commands` run at once. A prompt's `@path` mentions
are attached (`ui.mentions`) and the output of earlier `!commands` rides along (`ui.person_command`).

Keys and focus follow `ui/keys.py` (which `/help` prints): text keys always reach the prompt (`on_event`
moves the focus back before Textual forwards the key), Esc returns to the prompt or stops the turn, PgUp /
PgDn / Ctrl+Home / Ctrl+End scroll the conversation from anywhere, Shift+Tab cycles the permission mode,
Ctrl+Q asks once while a turn runs. The keys that move the focus (Tab, Esc away from the prompt) and the
scrolling and mode keys are priority bindings of the app: handled as the app takes them from the terminal,
before the keys queued behind them are routed, so those keys follow the new focus (a widget's own binding
would run later, from that widget's queue, and a fast typist's Enter would reach the old focus). They apply
on the main screen only (`check_action`): in a dialog the dialog's own keys work. A widget that wants one
of them for itself says so with `check_consume_key` (the prompt, for Tab to complete), and Textual then
leaves the key to it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.theme import Theme
from textual.widgets import Footer, Header, TextArea
from textual.worker import Worker

from agentcli.config_write import SaveError, save_user_setting
from agentcli.text import terminal_safe
from agentcli.tools.permissions import Approval, PermissionRequest
from agentcli.ui.commands import COMMANDS, run_command
from agentcli.ui.completion import PathIndex
from agentcli.ui.mentions import ATTACHMENT_MARK, MAX_MENTIONS, attach_mentions, user_message
from agentcli.ui.notify import Notifier, with_terminal_writes
from agentcli.ui.pacing import GC_QUIET_SECONDS, CollectorPacer, InputFirst
from agentcli.ui.person_command import is_person_command, run_person_command
from agentcli.ui.plan import PLAN_MODE_NOTE, PLAN_READY_NOTE
from agentcli.ui.prompt_history import PromptHistory
from agentcli.ui.router import UIRouter, first_line
from agentcli.ui.widgets.activity import TurnActivity
from agentcli.ui.widgets.agent_screen import AgentScreen
from agentcli.ui.widgets.approval import Approvals, ApprovalScreen
from agentcli.ui.widgets.message_list import MessageList, warm_up
from agentcli.ui.widgets.prompt_input import PromptInput
from agentcli.ui.widgets.status_bar import APPROVAL, LOADING, QUIT_ARMED, READY, WORKING, Status, StatusBar
from agentcli.ui.widgets.subagent_block import SPINNER_HZ, SubagentBlock

if TYPE_CHECKING:

    from textual.driver import Driver

    from agentcli.conversation import Conversation, Resumed
    from agentcli.llm.base import Message
    from agentcli.ui.model import Entry

log = logging.getLogger(__name__)
FRAME_SECONDS = 1 / 20  # batched rendering: at most 20 flushes a second
WELCOME = (
    "Type a task and press Enter (@path attaches a file, !command runs a shell command). "
    "/help lists commands and keys; Esc stops a running turn; Shift+Tab changes the permission mode."
)
QUIT_QUESTION = "Press Ctrl+Q again to quit: the running turn will be stopped."
MAIN_SCREEN_ACTIONS = frozenset({"scroll_messages", "home_end", "cycle_mode", "move_focus"})


def is_command(text: str) -> bool:
    """`/help`, `/model light` — but not a path such as `/usr/lib is missing`."""
    word = text.split(maxsplit=1)[0] if text.strip() else ""
    return len(word) > 1 and word.startswith("/") and "/" not in word[1:] and word[1].isalpha()


class AgentApp(App[int]):
    """The TUI over one `Conversation` (built by `ui.launch.run_tui`, or ready-made by the demo).

    The app answers the conversation's permission requests: it attaches itself to an `Approvals`
    approver, or installs `approve` when the conversation has none.
    """

    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "focus_prompt", "Back to prompt", priority=True),
        Binding("escape", "stop_turn", "Stop turn"),
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
        ui = conversation.settings.ui
        self.notifier = Notifier(ui.notify, ui.notify_after_seconds)
        self.prompt = PromptInput(
            id="prompt",
            history=PromptHistory.for_workspace(conversation.workspace),
            commands={name: text for name, (_, text) in COMMANDS.items()},
            paths=PathIndex(conversation.workspace, hidden=conversation.permissions.read_denied),
        )
        self._pending_context: list[str] = []  # framed output of the person's !commands, for the next prompt
        self.status_bar = StatusBar()
        self.activity = TurnActivity()
        self._turn_started = 0.0
        self._sdk_ready = asyncio.Event()
        self._turn: Worker[None] | None = None
        self._bindings_for_turn = False
        self.quit_armed = False  # Ctrl+Q was pressed once during a turn: the next one quits
        self._saved_theme = ""
        self.plan_ready = False  # the last turn completed in plan (read-only) mode: /go carries its plan out
        self._approval_lock = asyncio.Lock()
        self._approvals: set[asyncio.Future[Approval]] = set()
        self._approvals_queued = 0  # requests waiting behind the open approval dialog
        self._unsubscribe = conversation.bus.subscribe(self.router)
        self.input_first = InputFirst()
        self.collector = CollectorPacer()
        approver = conversation.permissions.approver
        if isinstance(approver, Approvals):
            approver.attach(self.approve)
        elif approver is None:
            conversation.permissions.approver = self.approve

    def compose(self) -> Any:
        """Title, conversation, prompt, status, keys."""
        yield Header(show_clock=False, icon="◆")
        yield self.messages
        yield self.activity
        yield self.prompt.queue_view
        yield self.prompt.completions
        yield self.prompt
        yield self.status_bar
        yield Footer()

    def on_mount(self) -> None:
        """Take input now; import the SDK in the background."""
        self._apply_saved_theme()
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

    def _apply_saved_theme(self) -> None:
        """The theme of `[ui] theme`, then save every theme the person picks (Ctrl+P → Change theme)."""
        theme = self.conversation.settings.ui.theme
        if theme and theme in self.available_themes:
            self.theme = theme
        elif theme:
            self.router.add_note(f"[ui] theme {terminal_safe(theme)!r} is not one of this version's themes "
                                 "(Ctrl+P → Change theme lists them): the default is used", "error")
        self._saved_theme = self.theme
        self.theme_changed_signal.subscribe(self, self._save_theme)

    def _save_theme(self, theme: Theme) -> None:
        if theme.name != self._saved_theme:
            self._saved_theme = theme.name
            self.save_setting(("ui", "theme"), theme.name)

    def save_setting(self, key: tuple[str, ...], value: str) -> None:
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
        for answer in list(self._approvals):
            if not answer.done():
                answer.set_result("deny")

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
            self._sdk_ready.set()

    # --- rendering --------------------------------------------------------------------------------

    def _frame(self) -> None:
        if not self.screen_stack:  # the app is closing
            return
        self.router.flush(text=self.input_first.flush_due(), mounts=self.input_first.mount_budget())
        self.collector.tick(quiet=self.input_first.quiet(GC_QUIET_SECONDS))
        self._show_queue()
        if self.turn_running != self._bindings_for_turn:
            self._bindings_for_turn = self.turn_running
            self.refresh_bindings()
        if self.quit_armed and not self.turn_running:
            self.quit_armed = False  # the turn ended: Ctrl+Q quits at once again
        self._show_status()

    def _flush_text(self) -> None:
        if self.screen_stack:
            self.router.flush(text=True, mounts=self.input_first.mount_budget())

    def _show_status(self) -> None:
        running, queued = self.router.counts()
        busy = self.turn_running and self._sdk_ready.is_set() and not self._approvals
        self.activity.show(self.router.activity() if busy else None, time.monotonic() - self._turn_started)
        if not self._sdk_ready.is_set():
            state = LOADING
        elif self.quit_armed:
            state = QUIT_ARMED
        elif self._approvals:
            state = APPROVAL
        elif self.turn_running:
            state = WORKING
        else:
            state = READY
        spent = self.conversation.session.ledger.total  # the main agent's and every subagent's requests
        self.status_bar.show(Status(
            model=self.conversation.model.display, input_tokens=spent.usage.input_tokens,
            output_tokens=spent.usage.output_tokens, cost_usd=spent.cost_usd if spent.requests else 0.0,
            running=running, queued=queued, state=state, context=self.conversation.context_use(),
            mode=self.conversation.permissions.mode,
        ))

    # --- CommandHost ------------------------------------------------------------------------------

    @property
    def turn_running(self) -> bool:
        """Whether a turn is running (or waiting for the SDK to start)."""
        return self._turn is not None and not self._turn.is_finished

    def say(self, text: str) -> None:
        """A notice in the conversation."""
        self.router.add_note(text, "info")

    def say_error(self, text: str) -> None:
        """A one-line error in the conversation."""
        self.router.add_note(text, "error")

    async def reset_view(self) -> None:
        """Empty the conversation view (a new or resumed session: earlier !command output is not carried over)."""
        self.router.reset()
        self._pending_context.clear()

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

    @property
    def on_main_screen(self) -> bool:
        """Whether the conversation's screen is the active one (no dialog or picker over it)."""
        return self.prompt.is_attached and self.prompt.screen is self.screen

    def _text_entry_focused(self) -> bool:
        """Whether the focused widget is one that takes typed text (the prompt, or another Input / TextArea)."""
        focused = self.focused
        return focused is not None and focused.check_consume_key("a", "a")

    def _prompt_takes(self, event: events.Key | events.Paste) -> bool:
        """Whether this key or paste belongs in the prompt although the focus is elsewhere on the main screen."""
        focused = self.focused
        if focused is self.prompt or not self.on_main_screen:
            return False
        if isinstance(event, events.Paste):  # a widget that takes typed text takes pasted text too
            return not self._text_entry_focused()
        if not event.is_printable:
            return False
        return focused is None or not focused.check_consume_key(event.key, event.character)

    async def on_event(self, event: events.Event) -> None:
        """Before Textual forwards a key or a paste to the focused widget: a text key (or paste) that the focused
        widget would not take moves the focus to the prompt first, so it is typed there (in order: every key
        after it finds the prompt focused). Any key but Ctrl+Q takes back a first Ctrl+Q."""
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            if self.input_first.key():
                self.call_after_refresh(self._flush_text)
            if isinstance(event, events.Key) and event.key != "ctrl+q":
                self.quit_armed = False
            if self._prompt_takes(event):
                self.screen.set_focus(self.prompt, scroll_visible=False)
        await super().on_event(event)

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
        view = self.messages
        if where == "page_up":
            view.scroll_page_up(animate=False)
        elif where == "page_down":
            view.scroll_page_down(animate=False)
            if view.scroll_y >= view.max_scroll_y:  # at the end: follow new output again (Textual's page-down
                view.follow()  # releases the anchor even when it cannot move, so a second press at the end unfollowed)
        elif where == "home":
            view.scroll_home(animate=False)
        else:
            view.follow()

    def action_home_end(self, where: str) -> None:
        """Home / End while the prompt is empty (or not focused): top / bottom of the conversation."""
        self.action_scroll_messages(where)

    def action_request_quit(self) -> None:
        """Ctrl+Q: quit; while a turn runs, only the second press in a row (the turn is stopped on the way out)."""
        if self.turn_running and not self.quit_armed:
            self.quit_armed = True
            self.notify(QUIT_QUESTION, severity="warning")
            self._show_status()
            return
        self.conversation.cancel_turn()
        self.exit(0)

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
            self._person_command(text[1:].strip())
            return
        if self.turn_running:
            self.prompt.enqueue(text)
            return
        self.prompt.accept()
        self._start_turn(text)

    def start_turn(self, text: str) -> None:
        """Send `text` as the person's next prompt (shown as theirs)."""
        self._start_turn(text)

    def _start_turn(self, text: str) -> None:
        self.plan_ready = False
        self.messages.follow()
        self.router.add_note(text, "user")
        self._turn_started = time.monotonic()
        self._turn = self._run_turn(text)

    async def _user_message(self, prompt: str) -> str | Message:
        """The prompt with its `@path` attachments and the output of earlier `!commands` (📎 lines shown)."""
        ctx = self.conversation.runner.tool_context(self.conversation.session)
        attachments, left_out = await attach_mentions(prompt, ctx)
        lines = [attachment.line for attachment in attachments]
        if left_out:
            lines.append(f"{ATTACHMENT_MARK} {left_out} more not attached: at most {MAX_MENTIONS} per prompt")
        if lines:
            self.router.add_note("\n".join(lines), "attachment")
        extras, self._pending_context = self._pending_context, []
        if self.conversation.permissions.mode == "readonly":
            extras.append(PLAN_MODE_NOTE)
        return user_message(prompt, extras + [a.frame() for a in attachments if a.error is None])

    def _turn_over(self, outcome: str, started: float) -> None:
        """Ring when a long turn ends; send the prompts queued meanwhile, or give them back when it did not complete."""
        said = {"cancelled": "was stopped", "budget_exceeded": "stopped at the budget"}.get(outcome, outcome)
        if said != "was stopped":  # the person stopped it: they are looking already
            self.notifier.turn_ended(time.monotonic() - started, said)
        queued = self.prompt.take_queued()
        if not queued:
            return
        text = "\n\n".join(queued)
        if outcome == "completed":
            self._start_turn(text)
            return
        draft = self.prompt.text.strip()
        self.prompt.load_text(f"{text}\n\n{draft}" if draft else text)
        self.say(f"The turn {said}: your queued prompt is back in the input; Enter sends it.")

    @property
    def person_command_running(self) -> bool:
        """Whether a `!command` runs (Esc stops it)."""
        return any(worker.group == "shell" and not worker.is_finished for worker in self.workers)

    @work(group="shell", exit_on_error=False)
    async def _person_command(self, command: str) -> None:
        ctx = self.conversation.runner.tool_context(self.conversation.session)
        try:
            run = await run_person_command(command, ctx)
        except asyncio.CancelledError:
            self.say(f"! {command}: stopped.")
            raise
        self.router.add_note(run.note(), "error" if run.error else "shell")
        if run.error is None:
            self._pending_context.append(run.frame())

    @work(group="command", exit_on_error=False)
    async def _command(self, line: str) -> None:
        try:
            await run_command(self, line)
        except Exception as exc:
            log.exception("command %s failed", line)
            self.say_error(f"{line.split()[0]}: {first_line(str(exc)) or type(exc).__name__}")

    @work(group="turn", exit_on_error=False)
    async def _run_turn(self, prompt: str) -> None:
        started = time.monotonic()
        try:
            message = await self._user_message(prompt)
            await self._sdk_ready.wait()
            outcome = await self.conversation.send(message)
        except asyncio.CancelledError:
            self.say("Turn stopped.")
            self._turn_over("was stopped", started)
            raise
        except Exception as exc:
            log.exception("turn failed")
            self.say_error(f"error: {first_line(str(exc)) or type(exc).__name__}")
            self._turn_over("failed", started)
            return
        if outcome.status == "cancelled":
            self.say("Turn stopped.")
        elif outcome.status == "budget_exceeded":  # what was spent against which limit
            self.say_error(f"Turn stopped: {outcome.error or outcome.status}")
        elif outcome.status not in ("completed", "failed"):
            self.say(f"Turn ended: {outcome.status}" + (f" ({outcome.error})" if outcome.error else ""))
        elif outcome.status == "completed" and self.conversation.permissions.mode == "readonly":
            self.plan_ready = True
            self.say(PLAN_READY_NOTE)
        self._turn_over(outcome.status, started)

    def action_stop_turn(self) -> None:
        """Esc: stop the running turn and every subagent under it, and any `!command` still running."""
        self.workers.cancel_group(self, "shell")
        if self.conversation.cancel_turn():
            return
        if self._turn is not None and not self._turn.is_finished:
            self._turn.cancel()  # still waiting for the SDK import

    def action_interrupt(self) -> None:
        """Ctrl+C: stop the running turn; otherwise copy the prompt's selection, or say how to quit."""
        if self.turn_running:
            self.action_stop_turn()
        elif isinstance(self.focused, TextArea) and self.focused.selected_text:
            self.focused.action_copy()
        else:
            self.notify("Press Ctrl+Q (or type /quit) to leave agentcli.")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc is "Back to prompt" away from the prompt, else "Stop turn" (shown disabled while no turn runs);
        the scrolling and mode keys work on the main screen only; Home / End only while the prompt is empty
        or no text entry has the focus (else they move along its line)."""
        prompt_focused = self.focused is self.prompt
        if action == "focus_prompt":
            return self.on_main_screen and not prompt_focused
        if action == "stop_turn":
            if self.on_main_screen and not prompt_focused:
                return False
            return True if self.turn_running or self.person_command_running else None
        if action in MAIN_SCREEN_ACTIONS and not self.on_main_screen:
            return False
        if action == "home_end":  # in a text (the prompt's, or a search box's) they move along its line
            return not self._text_entry_focused() or (prompt_focused and not self.prompt.text)
        return True

    def on_subagent_block_cancel_requested(self, message: SubagentBlock.CancelRequested) -> None:
        """Ctrl+X on a running block: cancel that subagent only."""
        self._cancel_task(message.task_id)

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

    # --- approvals --------------------------------------------------------------------------------

    async def approve(self, request: PermissionRequest) -> Approval:
        """The engine's Approver: one modal at a time, naming the agent that asks and how many wait behind it."""
        self._approvals_queued += 1
        self._show_queue()
        try:
            await self._approval_lock.acquire()
        finally:
            self._approvals_queued -= 1
        try:
            return await self._ask(request)
        finally:
            self._approval_lock.release()
            self._show_queue()

    def _show_queue(self) -> None:
        """The open dialog says how many requests wait behind it (the policy queues them; so does the app)."""
        if isinstance(self.screen, ApprovalScreen):
            self.screen.set_waiting(self._approvals_queued + self.conversation.permissions.waiting)

    async def _ask(self, request: PermissionRequest) -> Approval:
        """Open one approval dialog and wait for its answer (the lock is held)."""
        if not self.is_running:
            return "deny"
        answer: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()
        answered = False

        def done(result: Approval | None) -> None:
            nonlocal answered
            answered = True
            if not answer.done():
                answer.set_result(result or "deny")

        screen = ApprovalScreen(request, waiting=self._approvals_queued + self.conversation.permissions.waiting)
        self._approvals.add(answer)
        self.push_screen(screen, done)
        self.notifier.approval_waiting(request.agent, f"{request.tool}: {request.summary}")
        try:
            return await answer
        finally:
            self._approvals.discard(answer)
            if not answered and self.screen is screen:  # the turn was stopped meanwhile: close the dialog
                screen.dismiss(None)
