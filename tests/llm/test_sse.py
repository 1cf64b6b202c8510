"""The SSE reader both adapters use: lines of bytes, bounded; events; `data: [DONE]` seen."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentcli.llm.sse import ServerEvent, server_events


async def _events(*lines: str) -> list[ServerEvent]:
    async def source() -> AsyncIterator[str]:
        for line in lines:
            yield line

    return [event async for event in server_events(source())]


async def test_events_end_at_blank_lines_and_join_their_data_lines() -> None:
    events = await _events('data: {"a": 1}', "", "data: one", "data:two", "", "data: [DONE]", "")
    assert events == [ServerEvent(None, '{"a": 1}'), ServerEvent(None, "one\ntwo"), ServerEvent(None, "[DONE]")]


async def test_comments_ids_and_retries_are_skipped_and_names_kept() -> None:
    events = await _events(": keep-alive", "", "id: 7", "retry: 10", "event: error", "data: {}", "")
    assert events == [ServerEvent("error", "{}")]


async def test_an_event_left_unterminated_at_the_end_is_dropped() -> None:
    # a cut stream: the last event never got its blank line, so it never happened
    assert await _events("data: one", "", "data: [DONE]") == [ServerEvent(None, "one")]


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_lines_split_bytes_at_any_chunk_boundary() -> None:
    from agentcli.llm.sse import byte_lines

    async def lines(parts: list[bytes]) -> list[str]:
        return [line async for line in byte_lines(_chunks(parts), 1 << 20, "test")]

    whole = b"event: a\r\ndata: \xc3\xa9\r\n\r\nevent: b\rdata: x\r\rdata: y\n\n"
    expected = ["event: a", "data: é", "", "event: b", "data: x", "", "data: y", ""]
    assert await lines([whole]) == expected
    for cut in range(1, len(whole)):  # a `\r\n`, or a character's two bytes, split between chunks
        assert await lines([whole[:cut], whole[cut:]]) == expected
    assert await lines([b"data: end"]) == ["data: end"]


async def test_a_stream_past_its_limit_is_cut_with_one_error() -> None:
    from agentcli.llm.base import ReplyTooLargeError
    from agentcli.llm.sse import byte_lines, stream_byte_limit

    assert stream_byte_limit(8192) == 64 * 1024 * 1024 and stream_byte_limit(1_000_000) == 512_000_000
    seen: list[str] = []
    with pytest.raises(ReplyTooLargeError, match="passed 1 MiB without finishing"):
        async for line in byte_lines(_chunks([b"data: x\n\n"] * 200_000), 1 << 20, "anthropic"):
            seen.append(line)
    assert len(seen) <= 2 * ((1 << 20) // 9 + 1) < 400_000  # cut at the limit, not read to the end
    with pytest.raises(ReplyTooLargeError):  # one line without end is no way around it
        async for _ in byte_lines(_chunks([b"x" * 4096] * 1000), 1 << 20, "openai"):
            pass
