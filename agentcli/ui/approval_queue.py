"""The app's answer to the engine's permission requests and AskUserQuestion calls: one dialog at a time.

Requests from parallel agents queue behind the open dialog, which names the agent that asks and says how many
wait behind it (the policy queues some itself; so does this). A model's questions (`ui/widgets/question`) take their
turn in the same queue, so a question and an approval never open over each other. A dialog still open when its
turn is stopped is closed (a question then counts as declined); on the way out every request still waiting is
denied and every question declined.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentcli.tools import QuestionReply
from agentcli.ui.widgets.approval import ApprovalScreen
from agentcli.ui.widgets.question import Answers, QuestionScreen

if TYPE_CHECKING:
    from textual.app import App

    from agentcli.tools import Approval, PermissionPolicy, PermissionRequest, QuestionRequest
    from agentcli.ui.notify import Notifier


class ApprovalQueue:
    """Asks the person about one request at a time, each in an `ApprovalScreen` pushed on `app`."""

    def __init__(self, app: App[Any], policy: PermissionPolicy, notifier: Notifier) -> None:
        self._app = app
        self._policy = policy
        self._notifier = notifier
        self._lock = asyncio.Lock()
        self._answers: set[asyncio.Future[Approval]] = set()
        self._replies: set[asyncio.Future[Answers | None]] = set()  # open question dialogs
        self._queued = 0  # requests waiting behind the open approval dialog

    @property
    def asking(self) -> bool:
        """Whether an approval dialog waits for the person's answer."""
        return bool(self._answers)

    @property
    def questioning(self) -> bool:
        """Whether a question dialog waits for the person's answers."""
        return bool(self._replies)

    async def approve(self, request: PermissionRequest) -> Approval:
        """The engine's Approver: one modal at a time, naming the agent that asks and how many wait behind it."""
        async with self._turn():
            return await self._ask(request)

    async def ask_questions(self, request: QuestionRequest) -> QuestionReply:
        """The conversation's `QuestionAsker`: the model's questions in a dialog of their own, in the same turn of
        dialogs as approvals; declined when the person presses Esc (or the app is gone)."""
        async with self._turn():
            answers = await self._open(QuestionScreen(request), self._replies)
            if answers is None:
                return QuestionReply.declined()
            return QuestionReply(answers)

    @contextlib.asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        """Hold the dialog lock, counted as waiting until it is held."""
        self._queued += 1
        self.show_waiting()
        try:
            await self._lock.acquire()
        finally:
            self._queued -= 1
        try:
            yield
        finally:
            self._lock.release()
            self.show_waiting()

    def show_waiting(self) -> None:
        """The open dialog says how many requests wait behind it (the policy queues them; so does the app)."""
        if isinstance(self._app.screen, ApprovalScreen):
            self._app.screen.set_waiting(self._queued + self._policy.waiting)

    def deny_all(self) -> None:
        """Deny every request still waiting for an answer, decline every open question (the app is closing)."""
        for answer in list(self._answers):
            if not answer.done():
                answer.set_result("deny")
        for reply in list(self._replies):
            if not reply.done():
                reply.set_result(None)

    async def _ask(self, request: PermissionRequest) -> Approval:
        """Open one approval dialog and wait for its answer (the lock is held)."""
        if not self._app.is_running:
            return "deny"
        answer: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()
        answered = False

        def done(result: Approval | None) -> None:
            nonlocal answered
            answered = True
            if not answer.done():
                answer.set_result(result or "deny")

        screen = ApprovalScreen(request, waiting=self._queued + self._policy.waiting)
        self._answers.add(answer)
        self._app.push_screen(screen, done)
        self._notifier.approval_waiting(request.agent, f"{request.tool}: {request.summary}")
        try:
            return await answer
        finally:
            self._answers.discard(answer)
            if not answered and self._app.screen is screen:  # the turn was stopped meanwhile: close the dialog
                screen.dismiss(None)

    async def _open(self, screen: QuestionScreen, pending: set[asyncio.Future[Answers | None]]) -> Answers | None:
        """Push a question dialog and wait for what it is dismissed with (None: declined, stopped, or no app)."""
        if not self._app.is_running:
            return None
        reply: asyncio.Future[Answers | None] = asyncio.get_running_loop().create_future()
        answered = False

        def done(result: Answers | None) -> None:
            nonlocal answered
            answered = True
            if not reply.done():
                reply.set_result(result)

        pending.add(reply)
        self._app.push_screen(screen, done)
        heads = ", ".join(q.header for q in screen.request.questions)
        self._notifier.question_waiting(screen.request.agent, heads)
        try:
            return await reply
        finally:
            pending.discard(reply)
            if not answered and self._app.screen is screen:  # the turn was stopped meanwhile: close the dialog
                screen.dismiss(None)
