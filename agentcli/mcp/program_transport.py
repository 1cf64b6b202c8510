"""An MCP transport to a server that lives in the program driving agentcli (the Claude Agent SDK's in-process
servers, `create_sdk_mcp_server`): each JSON-RPC message the client sends is handed to `forward` (which asks the
program over the control protocol, `mcp_message`), and the program's JSON-RPC answer to a request comes back on
the read stream. Requests are forwarded concurrently: a long tool call never holds up a listing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from mcp import types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

#: Sends one JSON-RPC message to the program's server; its JSON-RPC answer (None for a notification).
Forward = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]


@contextlib.asynccontextmanager
async def program_transport(forward: Forward) -> AsyncIterator[TransportStreams]:
    """The read and write streams of one connection to a program's server."""
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](16)
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](16)

    async def deliver(payload: dict[str, Any]) -> None:
        request_id = payload.get("id")
        try:
            answer = await forward(payload)
        except Exception as exc:  # the program failed or went away: the request fails, the session goes on
            answer = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": str(exc) or repr(exc)}}
        if request_id is None or "method" not in payload or not answer:
            return  # a notification, or an answer to the server's own request: nothing comes back
        try:
            message = types.jsonrpc_message_adapter.validate_python(answer, by_name=False)
        except Exception as exc:
            await to_client.send(exc)
            return
        await to_client.send(SessionMessage(message))

    async def pump(group: anyio.abc.TaskGroup) -> None:
        async for session_message in from_client:
            payload = session_message.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
            group.start_soon(deliver, payload)

    async with anyio.create_task_group() as group, to_client, from_server, to_server, from_client:
        group.start_soon(pump, group)
        try:
            yield from_server, to_server
        finally:
            group.cancel_scope.cancel()
