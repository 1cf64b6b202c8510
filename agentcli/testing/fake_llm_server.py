"""A scripted fake LLM server speaking the Anthropic Messages and OpenAI chat completions APIs.

It listens on a loopback address, in a background thread with its own event loop, so sync
tests, async tests and CLI subprocesses can all talk to it with the real SDKs::

    with FakeLLMServer(Script(steps=[Step(reply=Reply(text="hi"))])) as server:
        client = AsyncAnthropic(api_key="x", base_url=server.base_url)
        ...
    server.assert_done()

Requests are routed by content (first step in script order with uses left whose Match holds),
never by arrival order. A request no step matches is answered with HTTP 500 and listed by
`assert_done()`, as is every step not used up. A streamed response's `outcome` and
`finished_at` are recorded just after its last byte, so a client may finish first: call
`wait_for_finished(n)` before asserting on them. A step with a `hold` answers only once the test
calls `release(hold)`, so a test can keep a reply back until it has seen what it waits for.
The paths agentcli asks an OpenAI-compatible server's window on (`WINDOW_PATHS`) are not steps:
`/props` answers the script's `context_window` in llama.cpp's shape, the others 404
(`window_asks` lists them).
Import it from `agentcli.testing.fake_llm`, which also runs it for another process
(`python -m agentcli.testing.fake_llm --script FILE`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from aiohttp import web

from agentcli.testing.fake_llm_match import RequestView, StepTable, with_echo
from agentcli.testing.fake_llm_models import (
    ApiName,
    RecordedRequest,
    Script,
    Step,
)
from agentcli.testing.fake_llm_serve import ServePlan, serve

__all__ = ["FakeLLMServer", "is_loopback", "redact_headers"]

_ROUTES: dict[str, ApiName] = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
}
#: Where agentcli asks an OpenAI-compatible server for its window (`llm.server_window`): never script steps.
WINDOW_PATHS = frozenset({"/props", "/api/v0/models", "/v1/models", "/models", "/api/show", "/api/ps"})
_SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "cookie", "proxy-authorization")
_SECRET_WORDS = ("key", "token", "secret", "auth")


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def redact_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Request headers with API keys and other credentials replaced by `***`."""
    out: dict[str, str] = {}
    for name, value in headers:
        low = name.lower()
        secret = low in _SECRET_HEADERS or any(w in low for w in _SECRET_WORDS)
        out[low] = "***" if secret else value
    return out


class FakeLLMServer:
    """The scripted server; use as a (sync or async) context manager or call start()/stop()."""

    def __init__(
        self,
        script: Script | Iterable[Step] | None = None,
        *,
        latency_ms: int = 0,
        chunk_delay_ms: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        strict_on_exit: bool = False,
    ) -> None:
        if not is_loopback(host):
            raise ValueError(f"fake_llm: refusing to listen on {host!r}; use a loopback address like 127.0.0.1")
        steps = script.steps if isinstance(script, Script) else list(script or [])
        self.context_window = script.context_window if isinstance(script, Script) else None
        self.window_asks: list[str] = []  # `METHOD /path` of every request asking for the window (not steps)
        self.latency_ms = latency_ms
        self.chunk_delay_ms = chunk_delay_ms
        self.strict_on_exit = strict_on_exit
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._table = StepTable(list(steps))
        self._requests: list[RecordedRequest] = []
        self._in_flight = 0
        self._in_flight_max = 0
        self._id_counter = 0
        self._version = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._bound_port: int | None = None
        self._released: set[str] = set()  # holds the test has released (under the lock)
        self._holds: dict[str, asyncio.Event] = {}  # the server loop's events for them (touched there only)

    # ------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        """Bind and start serving in a background thread; returns once the port is open."""
        if self._thread is not None:
            raise RuntimeError("fake_llm: server already started")
        ready = threading.Event()
        errors: list[BaseException] = []
        loop = asyncio.new_event_loop()
        self._loop = loop

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._startup())
            except BaseException as exc:  # handed to the starting thread
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._shutdown())
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-llm-server", daemon=True)
        self._thread.start()
        ready.wait()
        if errors:
            self._thread.join()
            self._thread = None
            raise errors[0]
        return self

    def stop(self) -> None:
        """Stop serving: cancel in-flight responses, close the port and join the thread."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        if thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
        self._thread = None

    async def _startup(self) -> None:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.2)
        await runner.setup()
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host.strip("[]"), self._port))
        sock.setblocking(False)
        site = web.SockSite(runner, sock, backlog=1024)
        await site.start()
        self._bound_port = sock.getsockname()[1]
        self._runner = runner

    async def _shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        if self.strict_on_exit and exc_type is None:
            self.assert_done()

    async def __aenter__(self) -> Self:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)
        if self.strict_on_exit and exc_type is None:
            self.assert_done()

    # ------------------------------------------------------------ state

    @property
    def port(self) -> int:
        """The bound port (after start)."""
        if self._bound_port is None:
            raise RuntimeError("fake_llm: server not started")
        return self._bound_port

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT` (no trailing slash, no /v1)."""
        host = f"[{self._host.strip('[]')}]" if ":" in self._host else self._host
        return f"http://{host}:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def unexpected(self) -> list[RecordedRequest]:
        """Requests that no step matched."""
        with self._lock:
            return [r for r in self._requests if r.unexpected is not None]

    @property
    def in_flight(self) -> int:
        """Requests being served right now."""
        with self._lock:
            return self._in_flight

    @property
    def in_flight_max(self) -> int:
        """Peak number of requests served concurrently."""
        with self._lock:
            return self._in_flight_max

    @property
    def steps(self) -> list[tuple[Step, int]]:
        """Each step with how many times it was used."""
        with self._lock:
            return self._table.pairs()

    def add_steps(self, *steps: Step) -> None:
        """Append steps to the script (also while serving)."""
        with self._changed:
            self._table.add(steps)
            self._version += 1
            self._changed.notify_all()

    def release(self, hold: str) -> None:
        """Let every step with this `hold` answer: the requests it holds now, and those still to come."""
        with self._lock:
            self._released.add(hold)
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._hold_event, hold)

    def _hold_event(self, hold: str) -> asyncio.Event:
        """The server loop's event for `hold`, set once the test has released it (called on the loop only)."""
        event = self._holds.setdefault(hold, asyncio.Event())
        with self._lock:
            if hold in self._released:
                event.set()
        return event

    def wait_until(self, predicate: Callable[[FakeLLMServer], bool], timeout: float = 5.0) -> None:
        """Block until `predicate(self)` holds (re-checked whenever a request starts or ends)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                version = self._version
            if predicate(self):
                return
            with self._changed:
                while self._version == version:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError(f"fake_llm: condition not met within {timeout}s")
                    self._changed.wait(left)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `n` requests were received; returns them."""
        try:
            self.wait_until(lambda s: len(s.requests) >= n, timeout)
        except TimeoutError:
            raise TimeoutError(f"fake_llm: {len(self.requests)} of {n} requests within {timeout}s") from None
        return self.requests

    def wait_for_finished(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `n` requests were fully answered (or broken off)."""
        self.wait_until(lambda s: sum(r.finished_at is not None for r in s.requests) >= n, timeout)
        return self.requests

    async def wait_for_requests_async(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """`wait_for_requests` for async tests: does not block the caller's event loop."""
        return await asyncio.to_thread(self.wait_for_requests, n, timeout)

    async def wait_for_finished_async(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """`wait_for_finished` for async tests."""
        return await asyncio.to_thread(self.wait_for_finished, n, timeout)

    async def wait_until_async(self, predicate: Callable[[FakeLLMServer], bool], timeout: float = 5.0) -> None:
        """`wait_until` for async tests."""
        await asyncio.to_thread(self.wait_until, predicate, timeout)

    # ------------------------------------------------------------ strictness

    def problems(self) -> list[str]:
        """Every unexpected request and every step not used up, one line each."""
        with self._lock:
            out = [
                f"unexpected request #{r.seq} {r.method} {r.path} ({r.api}): {'; '.join(r.unexpected)}"
                for r in self._requests
                if r.unexpected is not None
            ]
            out.extend(self._table.unused())
        return out

    def assert_done(self) -> None:
        """Raise AssertionError listing unexpected requests and unused steps, if any."""
        found = self.problems()
        if found:
            raise AssertionError("fake_llm script not done:\n" + "\n".join(f"  - {p}" for p in found))

    def write_log(self, path: str | Path) -> None:
        """Write every recorded request as one JSON object per line."""
        lines = [r.model_dump_json() for r in self.requests]
        Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    # ------------------------------------------------------------ serving

    def _next_id(self) -> int:
        self._id_counter += 1
        return self._id_counter

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.path in WINDOW_PATHS:  # agentcli asking an OpenAI-compatible server for its window
            with self._lock:
                self.window_asks.append(f"{request.method} {request.path}")
            if request.path == "/props" and self.context_window is not None:
                return web.json_response({"default_generation_settings": {"n_ctx": self.context_window}})
            return web.Response(status=404, text="File Not Found")
        received = time.monotonic()
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            raw = await request.read()
            record, plan = self._admit(request, raw, received)
            status: int | None = None
            outcome = "cancelled"
            try:
                response, status, outcome = await serve(request, plan)
                return response
            finally:
                with self._changed:
                    record.status = status
                    record.outcome = outcome
                    record.finished_at = time.monotonic()
                    self._in_flight -= 1
                    self._version += 1
                    self._changed.notify_all()
        finally:
            if task is not None:
                self._tasks.discard(task)

    def _admit(self, request: web.Request, raw: bytes, received: float) -> tuple[RecordedRequest, ServePlan]:
        """Parse, route and record a request; decide how to answer it."""
        api = _ROUTES.get(request.path)
        body: Any = None
        view: RequestView | None = None
        problem = "bad request"
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        if api is None:
            problem = f"no such endpoint {request.method} {request.path}"
        elif request.method != "POST":
            problem = f"method {request.method} not allowed"
        elif not isinstance(body, dict):
            problem = "body is not a JSON object"
        else:
            view = RequestView.of(api, body)
        with self._changed:
            seq = len(self._requests)
            step_index, reasons = self._table.route(view) if view is not None else (None, [problem])
            step = self._table.steps[step_index] if step_index is not None else None
            if step is not None and view is not None:
                step = with_echo(step, view)
            tool_ids: tuple[str, ...] = ()
            if step is not None and view is not None:
                prefix = "toolu_fake_" if view.api == "anthropic" else "call_fake_"
                tool_ids = tuple(c.id or f"{prefix}{self._next_id()}" for c in step.reply.tool_calls)
            record = RecordedRequest(
                seq=seq,
                api=api or "unknown",
                method=request.method,
                path=request.path,
                body=body,
                headers=redact_headers(request.headers.items()),
                stream=view.stream if view is not None else False,
                step_index=step_index,
                unexpected=None if step is not None else reasons,
                received_at=received,
            )
            self._requests.append(record)
            self._in_flight += 1
            self._in_flight_max = max(self._in_flight_max, self._in_flight)
            self._version += 1
            self._changed.notify_all()
        latency = step.latency_ms if step is not None else None
        chunk_delay = step.chunk_delay_ms if step is not None else None
        plan = ServePlan(
            api=api or "anthropic",
            seq=seq,
            view=view,
            step=step,
            tool_ids=tool_ids,
            unexpected=record.unexpected,
            not_found=api is None,
            latency_ms=self.latency_ms if latency is None else latency,
            chunk_delay_ms=self.chunk_delay_ms if chunk_delay is None else chunk_delay,
            hold=self._hold_event(step.hold) if step is not None and step.hold is not None else None,
        )
        return record, plan
