"""Local HTTP servers for tests, on 127.0.0.1 and a free port: an aiohttp application in the test's event loop, or a
`http.server` handler in a thread (for a subprocess under test)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiohttp import web


@asynccontextmanager
async def serving_app(app: web.Application) -> AsyncIterator[str]:
    """Serve `app` while the block runs; its base URL (`http://127.0.0.1:PORT`)."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@contextmanager
def serving_thread(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` from a thread while the block runs; its base URL (`http://127.0.0.1:PORT`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
