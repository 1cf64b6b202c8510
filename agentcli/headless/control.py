"""The control protocol's plumbing, as the Claude Agent SDK speaks it over stdio (its `_internal/query.py`):

- the program sends `{"type": "control_request", "request_id", "request": {"subtype", ...}}`; agentcli answers
  `{"type": "control_response", "response": {"subtype": "success", "request_id", "response": {...}}}`, or
  `"subtype": "error"` with a one-line `error` (an unknown subtype, bad fields, a failed handler);
- agentcli asks the program the same way (`can_use_tool`, `hook_callback`, `mcp_message`) and waits for its
  `control_response`; a question it no longer needs (the turn was interrupted) it withdraws with
  `{"type": "control_cancel_request", "request_id"}`, as the program may withdraw one of its own.

What each request does is the driver's (`handlers`); this module only routes and answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

Line = dict[str, Any]
Handler = Callable[[Line], Awaitable[Line | None]]


class ControlError(Exception):
    """A control request that failed: the program answered with an error, or it went away."""


class RequestError(ValueError):
    """A control request agentcli cannot carry out (bad fields): its one-line message is the error answer."""


class ControlChannel:
    """Requests both ways over one writer (stdout lines) and the control lines read from standard input."""

    def __init__(self, write: Callable[[Line], None]) -> None:
        self.write = write
        self.handlers: dict[str, Handler] = {}
        self._asked: dict[str, asyncio.Future[Line]] = {}  # our requests, waiting for the program's answer
        self._serving: dict[str, asyncio.Task[None]] = {}  # the program's requests being handled
        self._count = 0
        self.closed = False

    # --- the program's requests -------------------------------------------------------------------

    def receive(self, line: Line) -> bool:
        """Route one input line; False when it is not a control line (a user message, say)."""
        kind = line.get("type")
        if kind == "control_request":
            self._serve(line)
        elif kind == "control_response":
            self._answered(line.get("response"))
        elif kind == "control_cancel_request":
            request_id = str(line.get("request_id") or "")
            task = self._serving.pop(request_id, None)
            if task is not None:
                task.cancel()
        else:
            return False
        return True

    def _serve(self, line: Line) -> None:
        request_id = str(line.get("request_id") or "")
        request = line.get("request")
        if not request_id or not isinstance(request, dict):
            log.warning("control_request without request_id or request: ignored")
            return
        task = asyncio.create_task(self._handle(request_id, request), name=f"control-{request.get('subtype')}")
        self._serving[request_id] = task
        task.add_done_callback(lambda _t: self._serving.pop(request_id, None))

    async def _handle(self, request_id: str, request: Line) -> None:
        subtype = str(request.get("subtype") or "")
        handler = self.handlers.get(subtype)
        try:
            if handler is None:
                raise RequestError(f"Unsupported control request subtype: {subtype}")
            answer = await handler(request)
        except asyncio.CancelledError:
            raise
        except (RequestError, ControlError) as exc:
            self._reply_error(request_id, str(exc))
            return
        except Exception as exc:  # a bug in a handler: the program gets an error answer, the session goes on
            log.exception("control request %s failed", subtype)
            self._reply_error(request_id, f"{subtype} failed: {type(exc).__name__}: {exc}")
            return
        self.write({"type": "control_response",
                    "response": {"subtype": "success", "request_id": request_id, "response": answer or {}}})

    def _reply_error(self, request_id: str, message: str) -> None:
        self.write({"type": "control_response",
                    "response": {"subtype": "error", "request_id": request_id, "error": message}})

    # --- agentcli's requests ----------------------------------------------------------------------

    async def request(self, body: Line) -> Line:
        """Ask the program (`can_use_tool`, `hook_callback`, `mcp_message`) and wait for its answer; cancelling the
        wait withdraws the question. `ControlError` when the program answers with an error or has gone."""
        if self.closed:
            raise ControlError(f"the program stopped reading ({body.get('subtype')} not asked)")
        self._count += 1
        request_id = f"req_{self._count}_{os.urandom(4).hex()}"
        future: asyncio.Future[Line] = asyncio.get_running_loop().create_future()
        self._asked[request_id] = future
        self.write({"type": "control_request", "request_id": request_id, "request": body})
        try:
            return await future
        except asyncio.CancelledError:
            if not future.done():
                self.write({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._asked.pop(request_id, None)

    def _answered(self, response: object) -> None:
        if not isinstance(response, dict):
            return
        future = self._asked.get(str(response.get("request_id") or ""))
        if future is None or future.done():
            return  # an answer to a question withdrawn meanwhile
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "the program answered with an error")))
        else:
            answer = response.get("response")
            future.set_result(answer if isinstance(answer, dict) else {})

    def close(self) -> None:
        """Standard input ended: no answer will come, so the questions still waiting fail."""
        self.closed = True
        for future in self._asked.values():
            if not future.done():
                future.set_exception(ControlError("the program closed its end of the control channel"))

    async def drain(self) -> None:
        """Let the requests being served finish (their answers written) before the process ends."""
        tasks = list(self._serving.values())
        if tasks:
            with contextlib.suppress(Exception):
                await asyncio.gather(*tasks, return_exceptions=True)
