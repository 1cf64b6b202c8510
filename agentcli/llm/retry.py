"""Retry a streamed model turn with backoff on retryable provider errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing

from agentcli.llm.base import ProviderError, RetryPolicy, StreamEvent, StreamRetry


async def stream_with_retries(
    attempt: Callable[[], AsyncIterator[StreamEvent]],
    policy: RetryPolicy,
) -> AsyncIterator[StreamEvent]:
    """Run `attempt()` until it finishes; on a retryable error announce `StreamRetry`, wait, go again."""
    retries = 0
    while True:
        try:
            async with aclosing(attempt()) as events:  # type: ignore[type-var]
                async for event in events:
                    yield event
            return
        except ProviderError as error:
            if not error.retryable or retries >= policy.max_retries:
                raise
            retries += 1
            delay = policy.delay(retries, error)
            yield StreamRetry(attempt=retries, delay_seconds=delay, error=error)
            await asyncio.sleep(delay)
