"""The main agent's turns and the person's `!commands`, each run as a worker of the app.

A turn waits for the model SDK (imported by `Conversation.prepare()` in the background), sends the prompt with its
`@path` attachments (`ui.mentions`) and the output of earlier `!commands` (`ui.person_command`), and says how it
ended. Prompts queued while it ran are sent when it completes; a stopped or failed turn puts them back into the
input instead.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any

from agentcli.frontend import (
    ATTACHMENT_MARK,
    command_message,
    model_spec,
    run_person_command,
    user_message,
    with_mentions,
)
from agentcli.ui.plan import PLAN_MODE_NOTE, PLAN_READY_NOTE
from agentcli.ui.router_state import first_line

if TYPE_CHECKING:
    from textual.app import App
    from textual.worker import Worker

    from agentcli.conversation import Conversation
    from agentcli.frontend import CustomCommand
    from agentcli.llm import ImageBlock, Message, ResolvedModel
    from agentcli.ui.notify import Notifier
    from agentcli.ui.router import UIRouter
    from agentcli.ui.widgets.message_list import MessageList
    from agentcli.ui.widgets.prompt_input import PromptInput

log = logging.getLogger(__name__)


class TurnRunner:
    """Starts, ends and stops the main agent's turns and the person's `!commands` on `app`'s workers."""

    def __init__(
        self,
        app: App[Any],
        conversation: Conversation,
        router: UIRouter,
        prompt: PromptInput,
        messages: MessageList,
        notifier: Notifier,
    ) -> None:
        self._app = app
        self._conversation = conversation
        self._router = router
        self._prompt = prompt
        self._messages = messages
        self._notifier = notifier
        self.sdk_ready = asyncio.Event()  # set once the SDK is imported (or its import failed)
        self.started = 0.0  # when the latest turn started (monotonic)
        self.plan_ready = False  # the last turn completed in plan (read-only) mode: /go carries its plan out
        self.pending_context: list[str] = []  # framed output of the person's !commands, for the next prompt
        self._turn: Worker[None] | None = None

    @property
    def running(self) -> bool:
        """Whether a turn is running (or waiting for the SDK to start)."""
        return self._turn is not None and not self._turn.is_finished

    @property
    def person_command_running(self) -> bool:
        """Whether a `!command` runs (Esc stops it)."""
        return any(worker.group == "shell" and not worker.is_finished for worker in self._app.workers)

    def start(self, text: str, command: CustomCommand | None = None, arguments: str = "") -> None:
        """Send `text` as the person's next prompt (shown as theirs); with `command`, its expansion is sent instead
        (`text` is the `/command arguments` line they typed)."""
        self.plan_ready = False
        self._messages.follow()
        self._router.add_note(text, "user")
        self.started = time.monotonic()
        self._turn = self._worker("turn", partial(self._run, text, command, arguments))

    def run_person_command(self, command: str) -> None:
        """Run `command` (a `!command` without its `!`) through the Bash tool; its output rides with the next prompt."""
        self._worker("shell", partial(self._person_command, command))

    def stop(self) -> None:
        """Stop the running turn and every subagent under it, and any `!command` still running."""
        self._app.workers.cancel_group(self._app, "shell")
        if self._conversation.cancel_turn():
            return
        if self._turn is not None and not self._turn.is_finished:
            self._turn.cancel()  # still waiting for the SDK import

    def _worker(self, group: str, work: Callable[[], Coroutine[Any, Any, None]]) -> Worker[None]:
        """Run `work` as one of the app's workers in `group` (a failure is reported here, never ends the app)."""
        return self._app.run_worker(work, name=group, group=group, exit_on_error=False)

    def _say(self, text: str) -> None:
        self._router.add_note(text, "info")

    def _say_error(self, text: str) -> None:
        self._router.add_note(text, "error")

    async def _user_message(self, prompt: str) -> str | Message:
        """The prompt with its `@path` attachments and the output of earlier `!commands` (📎 lines shown)."""
        ctx = self._conversation.runner.tool_context(self._conversation.session)
        extras: list[str | ImageBlock] = [*self.pending_context, *self._prompt.images.blocks_for(prompt)]
        self.pending_context = []
        if self._conversation.permissions.mode == "readonly":
            extras.append(PLAN_MODE_NOTE)
        message, lines = await with_mentions(prompt, ctx, extras)
        if lines:
            self._router.add_note("\n".join(lines), "attachment")
        return message

    def _turn_over(self, outcome: str, started: float) -> None:
        """Ring when a long turn ends; send the prompts queued meanwhile, or give them back when it did not complete."""
        said = {"cancelled": "was stopped", "budget_exceeded": "stopped at the budget"}.get(outcome, outcome)
        if said != "was stopped":  # the person stopped it: they are looking already
            self._notifier.turn_ended(time.monotonic() - started, said)
        queued = self._prompt.take_queued()
        if not queued:
            return
        text = "\n\n".join(queued)
        if outcome == "completed":
            self.start(text)
            return
        draft = self._prompt.text.strip()
        self._prompt.load_text(f"{text}\n\n{draft}" if draft else text)
        self._say(f"The turn {said}: your queued prompt is back in the input; Enter sends it.")

    async def _person_command(self, command: str) -> None:
        runner = self._conversation.runner
        ctx = runner.tool_context(self._conversation.session)
        try:
            with runner.cache.writing(f"the person's !{command}"):  # a command may write anywhere
                run = await run_person_command(command, ctx)
        except asyncio.CancelledError:
            self._say(f"! {command}: stopped.")
            raise
        self._router.add_note(run.note(), "error" if run.error else "shell")
        if run.error is None:
            self.pending_context.append(run.frame())

    async def _command_message(self, command: CustomCommand, arguments: str) -> Message | str:
        """A custom command's expansion, its `!`commands`` run (trusted workspace, approved) and `@paths` attached."""
        from agentcli.config import trust
        from agentcli.subagents import AgentFileError

        ctx = self._conversation.runner.tool_context(self._conversation.session)
        try:
            built = await command_message(command, arguments, ctx,
                                          trusted=trust.is_trusted(self._conversation.workspace))
        except AgentFileError as exc:
            raise RuntimeError(f"/{command.name}: {command.path}: {exc}") from None
        notes = [n for n in built.notes if n.startswith(ATTACHMENT_MARK)]
        if notes:
            self._router.add_note("\n".join(notes), "attachment")
        for note in built.notes:
            if not note.startswith(ATTACHMENT_MARK):
                self._say_error(f"/{command.name}: {note}")
        extras: list[str | ImageBlock] = [*self.pending_context]
        self.pending_context = []
        if self._conversation.permissions.mode == "readonly":
            extras.append(PLAN_MODE_NOTE)
        return user_message(built.prompt, extras + built.extras)

    def _command_model(self, command: CustomCommand | None) -> ResolvedModel | None:
        """Switch to a command's `model:` for its turn; the model to go back to, or None (unchanged)."""
        if command is None or not command.model:
            return None
        previous = self._conversation.model
        try:
            self._conversation.set_model(model_spec(command.model, self._conversation.settings))
        except Exception as exc:
            self._say_error(f"/{command.name}: model {command.model!r} not used "
                            f"({first_line(str(exc)) or type(exc).__name__}); using {previous.display}")
            return None
        return previous

    async def _run(self, prompt: str, command: CustomCommand | None = None, arguments: str = "") -> None:
        started = time.monotonic()
        previous: ResolvedModel | None = None
        try:
            if command is not None:
                message = await self._command_message(command, arguments)
            else:
                message = await self._user_message(prompt)
            await self.sdk_ready.wait()
            if command is not None and command.skill_folder is not None:  # the files its skill bundles
                self._conversation.allow_reads(command.skill_folder)
            previous = self._command_model(command)
            outcome = await self._conversation.send(message)
        except asyncio.CancelledError:
            self._say("Turn stopped.")
            self._turn_over("was stopped", started)
            raise
        except Exception as exc:
            log.exception("turn failed")
            self._say_error(f"error: {first_line(str(exc)) or type(exc).__name__}")
            self._turn_over("failed", started)
            return
        finally:
            if previous is not None:  # a command's own model served its turn only
                self._conversation.use_model(previous)
        if outcome.status == "cancelled":
            self._say("Turn stopped.")
        elif outcome.status == "budget_exceeded":  # what was spent against which limit
            self._say_error(f"Turn stopped: {outcome.error or outcome.status}")
        elif outcome.status not in ("completed", "failed"):
            self._say(f"Turn ended: {outcome.status}" + (f" ({outcome.error})" if outcome.error else ""))
        elif outcome.status == "completed" and self._conversation.permissions.mode == "readonly":
            self.plan_ready = True
            self._say(PLAN_READY_NOTE)
        self._turn_over(outcome.status, started)
