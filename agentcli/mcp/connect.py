"""How agentcli reaches an MCP server through the official SDK: importing it, the transport a spec names,
and a call's result and errors as text. `manager` owns the servers' lifetimes; this holds no state."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

from agentcli.mcp.specs import ServerSpec, SpecError, expand
from agentcli.text import one_line, terminal_safe


class McpUnavailable(Exception):
    """The `mcp` SDK (a dependency of agentcli) cannot be imported: a broken install."""


#: Sends one JSON-RPC message to the driving program's server of that name; its answer (None: nothing back).
ProgramForward = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]


def load_sdk() -> Any:
    """The SDK and the transports agentcli uses (imported together: about a second on a cold start)."""
    try:
        import httpx2  # noqa: F401
        import mcp
        import mcp.client.stdio
        import mcp.client.streamable_http
    except ImportError as exc:
        raise McpUnavailable(f"the mcp SDK cannot be imported ({exc}); reinstall agentcli") from exc
    return mcp


async def open_target(spec: ServerSpec, stack: contextlib.AsyncExitStack, *, workspace: Path,
                      program: ProgramForward | None, errlog: Callable[[str], TextIO]) -> Any:
    """What `mcp.Client` connects to: stdio parameters' transport (stderr to `errlog(name)`), streamable HTTP with
    the headers, or the driving program's server over the control protocol (`program`)."""
    if spec.transport == "program":
        from agentcli.mcp.program_transport import program_transport

        if program is None:
            raise SpecError("an in-process SDK server needs the program that defines it (agentcli driven by "
                            "the Claude Agent SDK)")
        forward = program
        return program_transport(lambda message: forward(spec.name, message))
    if spec.transport == "http":
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {k: expand(v) for k, v in spec.headers}
        url = expand(spec.url)
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
        )
        return streamable_http_client(url, http_client=http)
    from mcp.client.stdio import StdioServerParameters, stdio_client

    cwd = Path(expand(spec.cwd)) if spec.cwd else workspace
    params = StdioServerParameters(
        command=expand(spec.command),
        args=[expand(a) for a in spec.args],
        env={k: expand(v) for k, v in spec.env} or None,
        cwd=str(cwd if cwd.is_absolute() else workspace / cwd),
    )
    return stdio_client(params, errlog=errlog(spec.name))


def describe(exc: BaseException) -> str:
    """One line for an exception, its group's first member when it is a group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return terminal_safe(one_line(f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text, 300))


def render_result(result: Any) -> str:
    """A `CallToolResult` as text: text parts as they are, other parts named, structured content as JSON."""
    import json

    parts: list[str] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(block.text))
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {getattr(block, 'mime_type', '')}: not shown]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(str(text) if text is not None else f"[resource {resource.uri}: binary, not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}]")
        else:
            parts.append(f"[{one_line(kind, 40)} content: not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    return "\n".join(parts) if parts else "(no output)"
