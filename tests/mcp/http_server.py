"""A small streamable-HTTP MCP server built with the SDK's own server API (`MCPServer`), for the HTTP tests.

    python -m tests.mcp.http_server PORT TOKEN

Requests without `Authorization: Bearer TOKEN` get 401, so a test sees that configured headers are sent.
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


@server.tool()
def shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


def main() -> None:
    port, token = int(sys.argv[1]), sys.argv[2]
    app = server.streamable_http_app()
    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
