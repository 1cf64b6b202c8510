"""Anthropic's server-side web search in a request of its own (what Claude Code's WebSearch tool does).

The agent's model is offered one client tool, `WebSearch`; a call to it becomes this separate request, with the
server tool `web_search_20250305` (the version Claude Code sends, which every current model takes) and one user
message naming the query. The main conversation never holds server-tool blocks, and its tool list and system
prompt stay byte-identical whatever the search settings (its prompt cache is untouched). The reply streams
`server_tool_use` (the query as `input_json_delta`), `web_search_tool_result` (the hits, or an error object), and
text blocks whose `citations_delta` carry `web_search_result_location`s; `usage.server_tool_use.web_search_requests`
counts the searches, priced per thousand (`llm.prices.cost_usd`). A `pause_turn` reply is sent back as it came
(its blocks verbatim) to let the server go on, at most `_MAX_CONTINUATIONS` times.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentcli.llm.base import BadRequestError, Provider, ProviderError, StreamInterruptedError
from agentcli.llm.usage import Usage
from agentcli.llm.wire_terms import ANTHROPIC_STOP_REASONS

if TYPE_CHECKING:
    from agentcli.llm.anthropic import AnthropicProvider

WEB_SEARCH_TOOL = "web_search_20250305"
_SYSTEM = ("You carry out web searches for a coding assistant. Search the web for what the user asks, then "
           "summarize what the results say that bears on it, citing them.")
_MAX_CONTINUATIONS = 3


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: its title, address and, when the index knows it, the page's age."""

    title: str
    url: str
    page_age: str = ""
    snippet: str = ""


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a passage of the answer comes from."""

    url: str
    title: str
    cited_text: str


@dataclass(frozen=True, slots=True)
class Passage:
    """A text block of the answer and the results it cites."""

    text: str
    citations: tuple[Citation, ...] = ()


@dataclass(slots=True)
class SearchReply:
    """What one search request (and its continuations) gave: the queries run, hits, errors, the cited answer."""

    model: str
    queries: list[str] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # web_search_tool_result_error codes
    passages: list[Passage] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    searches: int = 0  # usage.server_tool_use.web_search_requests
    requests: int = 0


def search_tool_param(max_uses: int, allowed: Sequence[str] = (), blocked: Sequence[str] = ()) -> dict[str, Any]:
    """The server tool as the API takes it; the API refuses allowed and blocked domains together, so an allow
    list wins (a blocked domain outside it is excluded anyway)."""
    tool: dict[str, Any] = {"type": WEB_SEARCH_TOOL, "name": "web_search", "max_uses": max_uses}
    if allowed:
        tool["allowed_domains"] = list(allowed)
    elif blocked:
        tool["blocked_domains"] = list(blocked)
    return tool


def search_params(model: str, query: str, tool: dict[str, Any], max_tokens: int,
                  history: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The keyword arguments of `messages.create` for one search (`history`: a paused turn to continue)."""
    ask = {"role": "user", "content": [{"type": "text", "text": f"Search the web for: {query}"}]}
    return {"model": model, "max_tokens": max_tokens, "system": _SYSTEM, "messages": [ask, *history],
            "tools": [tool]}


class _Fold:
    """Folds one reply's raw events into the reply, keeping its blocks as received (for a continuation)."""

    def __init__(self, reply: SearchReply) -> None:
        self.reply = reply
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, list[str]] = {}
        self.counts: dict[str, int] = {}
        self.stop = "other"
        self.finished = False

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.reply.model = message.get("model") or self.reply.model
            self._usage(message.get("usage") or {})
        elif kind == "content_block_start":
            self.blocks[event.get("index", -1)] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            self._delta(self.blocks.get(event.get("index", -1)), event.get("index", -1), event.get("delta") or {})
        elif kind == "message_delta":
            stop = (event.get("delta") or {}).get("stop_reason")
            self.stop = ANTHROPIC_STOP_REASONS.get(stop, "other") if stop else self.stop
            self._usage(event.get("usage") or {})
        elif kind == "message_stop":
            self.finished = True

    def _delta(self, block: dict[str, Any] | None, index: int, delta: dict[str, Any]) -> None:
        if block is None:
            return
        dtype = delta.get("type")
        if dtype == "text_delta":
            block["text"] = (block.get("text") or "") + (delta.get("text") or "")
        elif dtype == "citations_delta" and isinstance(delta.get("citation"), dict):
            block["citations"] = [*(block.get("citations") or []), delta["citation"]]
        elif dtype == "input_json_delta":
            self.json.setdefault(index, []).append(delta.get("partial_json") or "")

    def _usage(self, usage: dict[str, Any]) -> None:
        """The latest counts the server gave (message_delta's are cumulative); the searches it ran."""
        counts = self.counts
        for key, name in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                          ("cache_read_input_tokens", "cache_read_tokens"),
                          ("cache_creation_input_tokens", "cache_write_tokens")):
            if usage.get(key) is not None:
                counts[name] = usage[key]
        server = usage.get("server_tool_use") or {}
        if server.get("web_search_requests") is not None:
            counts["searches"] = server["web_search_requests"]

    def finish(self) -> list[dict[str, Any]]:
        """Add this reply to the search's and return its blocks as received (in order)."""
        reply, counts = self.reply, self.counts
        reply.usage = reply.usage + Usage(*(counts.get(k, 0) for k in (
            "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")))
        reply.searches += counts.get("searches", 0)
        reply.requests += 1
        blocks = [self.blocks[i] for i in sorted(self.blocks)]
        for index, block in sorted(self.blocks.items()):
            if index in self.json:
                try:
                    block["input"] = json.loads("".join(self.json[index]) or "{}")
                except ValueError:
                    block["input"] = {}
            _take(reply, block)
        return blocks


def _take(reply: SearchReply, block: dict[str, Any]) -> None:
    """One finished block into the reply: a query, hits or an error, or a cited passage."""
    btype = block.get("type")
    if btype == "server_tool_use" and isinstance(block.get("input"), dict):
        query = block["input"].get("query")
        if isinstance(query, str) and query:
            reply.queries.append(query)
    elif btype == "web_search_tool_result":
        content = block.get("content")
        if isinstance(content, list):
            reply.hits += [SearchHit(str(h.get("title") or h.get("url")), str(h["url"]), str(h.get("page_age") or ""))
                           for h in content if isinstance(h, dict) and h.get("url")]
        elif isinstance(content, dict):
            reply.errors.append(str(content.get("error_code") or "error"))
    elif btype == "text" and (text := block.get("text") or "").strip():
        cites = tuple(Citation(str(c.get("url") or ""), str(c.get("title") or ""), str(c.get("cited_text") or ""))
                      for c in block.get("citations") or [] if isinstance(c, dict))
        reply.passages.append(Passage(text, cites))


async def web_search(provider: Provider, model: str, query: str, *, max_uses: int,
                     allowed: Sequence[str] = (), blocked: Sequence[str] = (), max_tokens: int = 4096) -> SearchReply:
    """Run one search with the server tool; retryable failures are retried as the provider's policy says (from
    the start: nothing was shown). Raises `ProviderError` with one line."""
    from agentcli.llm.anthropic import AnthropicProvider

    if not isinstance(provider, AnthropicProvider):
        raise BadRequestError(f"web search needs an Anthropic model, not {model}", provider=provider.name)
    tool = search_tool_param(max_uses, allowed, blocked)
    retries = 0
    while True:
        try:
            return await _search(provider, model, query, tool, max_tokens)
        except ProviderError as error:
            if not error.retryable or retries >= provider.policy.max_retries:
                raise
            retries += 1
            await asyncio.sleep(provider.policy.delay(retries, error))


async def _search(provider: AnthropicProvider, model: str, query: str, tool: dict[str, Any],
                  max_tokens: int) -> SearchReply:
    import anthropic
    import httpx2

    from agentcli.llm.anthropic import message_events
    from agentcli.llm.errors import from_sdk_exception
    from agentcli.llm.sse import stream_byte_limit

    reply = SearchReply(model=model)
    history: list[dict[str, Any]] = []
    paused: list[dict[str, Any]] = []  # the turn so far, when the server paused it
    for _ in range(_MAX_CONTINUATIONS + 1):
        fold = _Fold(reply)
        params = search_params(model, query, tool, max_tokens, history)
        try:
            async with provider.client.messages.with_streaming_response.create(**params, stream=True) as response:
                async for raw in message_events(response, stream_byte_limit(max_tokens)):
                    fold.feed(raw)
        except ProviderError:
            raise
        except (anthropic.AnthropicError, httpx2.HTTPError, httpx2.StreamError) as exc:
            raise from_sdk_exception(provider.name, exc, streamed=False) from exc
        if not fold.finished:
            raise StreamInterruptedError("the search reply ended before the model finished", provider=provider.name)
        blocks = fold.finish()
        if fold.stop != "pause_turn" or not blocks:
            return reply
        paused += blocks
        history = [{"role": "assistant", "content": paused}]  # sent back verbatim: the server goes on
    return reply
