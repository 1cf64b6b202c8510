"""AgentApp: the interactive TUI. Thin: layout, keys, turns as workers; `UIRouter` maps events to widgets.

The app paints and takes input at once: the provider SDK is imported by `Conversation.prepare()`
in a background worker, and a turn waits for it. While a turn runs, a new prompt is refused with a
note (Esc stops the turn); slash commands still work.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Header, TextArea
from textual.worker import Worker

from agentcli.text import terminal_safe
from agentcli.tools.permissions import Approval, PermissionRequest
from agentcli.ui.commands import run_command
from agentcli.ui.router import UIRouter, first_line
from agentcli.ui.widgets.activity import TurnActivity
from agentcli.ui.widgets.agent_screen import AgentScreen
from agentcli.ui.widgets.approval import Approvals, ApprovalScreen
from agentcli.ui.widgets.message_list import MessageList
from agentcli.ui.widgets.prompt_input import PromptInput
from agentcli.ui.widgets.status_bar import Status, StatusBar
from agentcli.ui.widgets.subagent_block import SPINNER_HZ, SubagentBlock

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentcli.config import LoadedConfig
    from agentcli.conversation import Conversation, Resumed

log = logging.getLogger(__name__)
FRAME_SECONDS = 1 / 20  # batched rendering: at most 20 flushes a second
WELCOME = "Type a task and press Enter. /help lists commands and keys; Esc stops a running turn."


def is_command(text: str) -> bool:
    """`/help`, `/model light` — but not a path such as `/usr/lib is missing`."""
    word = text.split(maxsplit=1)[0] if text.strip() else ""
    return len(word) > 1 and word.startswith("/") and "/" not in word[1:] and word[1].isalpha()


class AgentApp(App[int]):
    """The TUI over one `Conversation` (built by `run_tui`, or ready-made by the demo).

    The app answers the conversation's permission requests: it attaches itself to an `Approvals`
    approver, or installs `approve` when the conversation has none.
    """

    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "stop_turn", "Stop turn"),
        Binding("ctrl+c", "interrupt", "Stop turn", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        conversation: Conversation,
        *,
        title: str | None = None,
        resumed: Resumed | None = None,
        pick_session: bool = False,
    ) -> None:
        """`resumed`: the conversation resumed a stored session before the app started (its transcript is
        shown); `pick_session`: open the session picker first (`agentcli --resume` without an ID)."""
        super().__init__()
        self.conversation = conversation
        self._resumed = resumed
        self._pick_first = pick_session
        self.title = terminal_safe(title or f"agentcli — {conversation.workspace}")  # a folder name is untrusted
        self.messages = MessageList(id="messages")
        self.router = UIRouter(self.messages)
        self.prompt = PromptInput(id="prompt")
        self.status_bar = StatusBar()
        self.activity = TurnActivity()
        self._turn_started = 0.0
        self._sdk_ready = asyncio.Event()
        self._turn: Worker[None] | None = None
        self._bindings_for_turn = False
        self._approval_lock = asyncio.Lock()
        self._approvals: set[asyncio.Future[Approval]] = set()
        self._unsubscribe = conversation.bus.subscribe(self.router)
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
        yield self.prompt
        yield self.status_bar
        yield Footer()

    def on_mount(self) -> None:
        """Take input now; import the SDK in the background."""
        self.prompt.focus()
        self.router.add_note(WELCOME, "info")
        if self._resumed is not None:
            self._show_resumed(self._resumed)
        elif self._pick_first:
            self._command("/resume")
        self._frame()
        self.set_interval(FRAME_SECONDS, self._frame)
        self.set_interval(1 / SPINNER_HZ, self.router.tick)
        self._prepare()

    def on_unmount(self) -> None:
        """Stop listening; deny whatever still waits for an answer."""
        self._unsubscribe()
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
            # Everything imported so far (the SDK, Textual) lives as long as the process: keep it out of the
            # cyclic GC's full collections, which otherwise stall the screen for 100+ ms while agents stream.
            gc.freeze()
        except Exception as exc:
            self.say_error(f"error: {first_line(str(exc)) or type(exc).__name__}")
        finally:
            self._sdk_ready.set()

    # --- rendering --------------------------------------------------------------------------------

    def _frame(self) -> None:
        self.router.flush()
        if self.turn_running != self._bindings_for_turn:
            self._bindings_for_turn = self.turn_running
            self.refresh_bindings()
        running, queued = self.router.counts()
        busy = self.turn_running and self._sdk_ready.is_set() and not self._approvals
        self.activity.show(self.router.activity() if busy else None, time.monotonic() - self._turn_started)
        if not self._sdk_ready.is_set():
            state = "loading the model SDK…"
        elif self._approvals:
            state = "waiting for your approval"
        elif self.turn_running:
            state = "working… (Esc to stop)"
        else:
            state = "ready"
        spent = self.conversation.session.ledger.total  # the main agent's and every subagent's requests
        self.status_bar.show(Status(
            model=self.conversation.model.display, input_tokens=spent.usage.input_tokens,
            output_tokens=spent.usage.output_tokens, cost_usd=spent.cost_usd if spent.requests else 0.0,
            running=running, queued=queued, state=state, context=self.conversation.context_use(),
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
        """Empty the conversation view."""
        self.router.reset()

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

    # --- input ------------------------------------------------------------------------------------

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        """Enter: a slash command, or a prompt for the main agent."""
        text = message.text.strip()
        if is_command(text):
            self.prompt.accept()
            self._command(text)
            return
        if self.turn_running:
            self.say("A turn is still running: wait for it, or press Esc to stop it. Your prompt is kept.")
            return
        self.prompt.accept()
        self.messages.follow()
        self.router.add_note(text, "user")
        self._turn_started = time.monotonic()
        self._turn = self._run_turn(text)

    @work(group="command", exit_on_error=False)
    async def _command(self, line: str) -> None:
        try:
            await run_command(self, line)
        except Exception as exc:
            log.exception("command %s failed", line)
            self.say_error(f"{line.split()[0]}: {first_line(str(exc)) or type(exc).__name__}")

    @work(group="turn", exit_on_error=False)
    async def _run_turn(self, prompt: str) -> None:
        await self._sdk_ready.wait()
        try:
            outcome = await self.conversation.send(prompt)
        except asyncio.CancelledError:
            self.say("Turn stopped.")
            raise
        except Exception as exc:
            log.exception("turn failed")
            self.say_error(f"error: {first_line(str(exc)) or type(exc).__name__}")
            return
        if outcome.status == "cancelled":
            self.say("Turn stopped.")
        elif outcome.status == "budget_exceeded":  # what was spent against which limit
            self.say_error(f"Turn stopped: {outcome.error or outcome.status}")
        elif outcome.status not in ("completed", "failed"):
            self.say(f"Turn ended: {outcome.status}" + (f" ({outcome.error})" if outcome.error else ""))

    def action_stop_turn(self) -> None:
        """Esc: stop the running turn and every subagent under it."""
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
        """"Stop turn" is shown disabled while no turn runs."""
        if action == "stop_turn":
            return True if self.turn_running else None
        return True

    def on_subagent_block_cancel_requested(self, message: SubagentBlock.CancelRequested) -> None:
        """`x` on a block: cancel that subagent only."""
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
        """The engine's Approver: one modal at a time, naming the agent that asks."""
        async with self._approval_lock:
            if not self.is_running:
                return "deny"
            answer: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()
            answered = False

            def done(result: Approval | None) -> None:
                nonlocal answered
                answered = True
                if not answer.done():
                    answer.set_result(result or "deny")

            screen = ApprovalScreen(request)
            self._approvals.add(answer)
            self.push_screen(screen, done)
            try:
                return await answer
            finally:
                self._approvals.discard(answer)
                if not answered and self.screen is screen:  # the turn was stopped meanwhile: close the dialog
                    screen.dismiss(None)


def run_tui(
    loaded: LoadedConfig,
    workspace: Path,
    model: str,
    *,
    verbose: bool = False,
    trust_reload: Callable[[], LoadedConfig] | None = None,
    resume: str | None = None,
    continue_latest: bool = False,
    keep_model: bool = False,
) -> int:
    """Open the conversation (`Conversation.open`: store, logging) like `agentcli run` does, run the TUI; the exit code.

    In an untrusted workspace whose project config sets what only trust applies, the trust prompt
    comes first; "trust" calls `trust_reload` (records trust, returns the full config). `continue_latest`
    or `resume` (an id) resume a stored session before the app starts (one that cannot be is one line
    and exit 1); `resume=""` opens the picker in the app. On the way out the session's id is printed
    (standard error), so it can be resumed.
    """
    if loaded.ignored and loaded.project_file is not None and trust_reload is not None:
        from agentcli.ui.widgets.trust import ask_trust

        choice = ask_trust(workspace, loaded.project_file, loaded.ignored_settings())
        if choice == "quit":
            return 0
        if choice == "trust":
            loaded = trust_reload()
    from agentcli.conversation import Conversation, OpenError

    try:
        conversation = Conversation.open(loaded.settings, workspace, model=model, approver=Approvals(), verbose=verbose)
    except OpenError as exc:
        print(f"agentcli: {exc}", file=sys.stderr)
        return 1

    async def main() -> int:
        resumed: Resumed | None = None
        if continue_latest or resume:
            from agentcli.conversation import ResumeError

            try:
                resumed = await conversation.resume(None if continue_latest else resume, keep_model=keep_model)
            except ResumeError as exc:
                print(f"agentcli: {terminal_safe(str(exc))}", file=sys.stderr)
                await conversation.aclose()
                return 1
        app = AgentApp(conversation, resumed=resumed, pick_session=resume == "")
        stopped = _stop_on_signals(app, conversation)
        try:
            await app.run_async()
        finally:
            await conversation.aclose()  # flushes and closes the store
        return stopped[0] if stopped else app.return_code or 0

    try:
        code = asyncio.run(main())
    finally:
        conversation.close()  # a no-op unless the loop ended before aclose() could run
    session = conversation.session
    if session.next_seq:  # it has a stored history: say how to come back to it
        print(f"agentcli: session {session.id} (agentcli --resume {session.id} continues it)", file=sys.stderr)
    if report := conversation.persistence_report("session"):
        print(report, file=sys.stderr)
        return code or 1
    return code


def _stop_on_signals(app: AgentApp, conversation: Conversation) -> list[int]:
    """SIGTERM / SIGHUP: stop the running turn and leave the app cleanly (terminal restored), exit 128+N.

    Returns a list that holds the exit code once a signal arrived.
    """
    import contextlib
    import signal

    stopped: list[int] = []

    def stop(sig: int) -> None:
        if stopped:
            return
        stopped.append(128 + sig)
        log.info("stopping on signal %d", sig)
        conversation.cancel_turn()
        app.exit(return_code=128 + sig)

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop, int(sig))
    return stopped
