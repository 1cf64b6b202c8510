"""The app's answer to the engine's permission requests: one approval dialog at a time.

Requests from parallel agents queue behind the open dialog, which names the agent that asks and says how many
wait behind it (the policy queues some itself; so does this). A dialog still open when its turn is stopped is
closed; on the way out every request still waiting is denied.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agentcli.ui.widgets.approval import ApprovalScreen

if TYPE_CHECKING:
    from textual.app import App

    from agentcli.tools import Approval, PermissionPolicy, PermissionRequest
    from agentcli.ui.notify import Notifier


class ApprovalQueue:
    """Asks the person about one request at a time, each in an `ApprovalScreen` pushed on `app`."""

    def __init__(self, app: App[Any], policy: PermissionPolicy, notifier: Notifier) -> None:
        self._app = app
        self._policy = policy
        self._notifier = notifier
        self._lock = asyncio.Lock()
        self._answers: set[asyncio.Future[Approval]] = set()
        self._queued = 0  # requests waiting behind the open approval dialog

    @property
    def asking(self) -> bool:
        """Whether a dialog waits for the person's answer."""
        return bool(self._answers)

    async def approve(self, request: PermissionRequest) -> Approval:
        """The engine's Approver: one modal at a time, naming the agent that asks and how many wait behind it."""
        self._queued += 1
        self.show_waiting()
        try:
            await self._lock.acquire()
        finally:
            self._queued -= 1
        try:
            return await self._ask(request)
        finally:
            self._lock.release()
            self.show_waiting()

    def show_waiting(self) -> None:
        """The open dialog says how many requests wait behind it (the policy queues them; so does the app)."""
        if isinstance(self._app.screen, ApprovalScreen):
            self._app.screen.set_waiting(self._queued + self._policy.waiting)

    def deny_all(self) -> None:
        """Deny every request still waiting for an answer (the app is closing)."""
        for answer in list(self._answers):
            if not answer.done():
                answer.set_result("deny")

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
