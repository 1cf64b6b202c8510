"""Server-sent events from a stream of lines (the WHATWG event-stream rules the SDKs follow).

The OpenAI SDK's stream object hides whether a stream ended with `data: [DONE]` or was cut
cleanly; reading the SSE lines of the SDK's public streaming response ourselves shows it.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import NamedTuple


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
