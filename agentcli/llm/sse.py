"""Server-sent events from a stream of lines (the WHATWG event-stream rules the SDKs follow).

The OpenAI SDK's stream object hides whether a stream ended with `data: [DONE]` or was cut
cleanly; reading the SSE lines of the SDK's public streaming response ourselves shows it.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import NamedTuple

from agentcli.llm.base import ReplyTooLargeError

_MIB = 1024 * 1024


def stream_byte_limit(max_tokens: int) -> int:
    """The most bytes one reply's event stream may take: 64 MiB, or 512 bytes for every output token the
    request allows (an event carrying one token's delta takes 100-200 bytes). A server that streams without
    end is cut there instead of filling memory."""
    return max(64 * _MIB, 512 * max_tokens)


async def byte_lines(chunks: AsyncIterator[bytes], limit: int, provider: str) -> AsyncIterator[str]:
    """The lines of a byte stream (`\n`, `\r\n` or `\r` ends one), each decoded whole (cheaper than the HTTP
    layer's text decoding, which works out the encoding again for every chunk); `ReplyTooLargeError` once the
    stream passes `limit` bytes, a line without end included."""
    pending = b""
    total = 0
    async for chunk in chunks:
        total += len(chunk)
        if total > limit:
            raise ReplyTooLargeError(
                f"the reply passed {limit // _MIB} MiB without finishing; it was cut there", provider=provider
            )
        lines = (pending + chunk).splitlines(keepends=True)
        pending = b""
        if lines and (lines[-1].endswith(b"\r") or not lines[-1].endswith(b"\n")):
            pending = lines.pop()  # unfinished, or a `\r` whose `\n` may be in the next chunk
        for line in lines:
            yield line.rstrip(b"\r\n").decode("utf-8", errors="replace")
    if pending:
        yield pending.rstrip(b"\r\n").decode("utf-8", errors="replace")


class ServerEvent(NamedTuple):
    """One dispatched event: its `event:` name (None if unnamed) and its joined `data:` lines."""

    event: str | None
    data: str


async def server_events(lines: AsyncIterable[str]) -> AsyncIterator[ServerEvent]:
    """The events of an event stream, each dispatched at the blank line that ends it.

    Comments (`:`), `id:` and `retry:` are skipped; an event left unterminated at the end of the
    stream is dropped, as the spec (and the SDK's own decoder) does.
    """
    event: str | None = None
    data: list[str] = []
    async for line in lines:
        if not line:
            if event is not None or data:
                yield ServerEvent(event, "\n".join(data))
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
