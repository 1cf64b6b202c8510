"""Where WebSearch's queries go (`[web_search] backend`): Anthropic's server-side search (`llm.web_search`), or a
search API over plain HTTPS (SearXNG's JSON API at the configured `url`; Brave, Tavily and Exa with the key from
BRAVE_API_KEY, TAVILY_API_KEY, EXA_API_KEY). With none, `WebSearcher.unavailable` is the one line that says how to
configure one.

The endpoint is the person's own setting (an untrusted project may not set it), so it is not held to WebFetch's
public-address rule: a SearXNG on 127.0.0.1 is the usual case. Results are filtered by the allowed and blocked
domains here too (the APIs' own filters differ), and each answer is read up to `_MAX_BODY` bytes.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agentcli.llm import SearchHit, SearchReply

if TYPE_CHECKING:
    from agentcli.config import WebSearchSettings
    from agentcli.llm import ProviderPool, ResolvedModel

_MAX_BODY = 4_000_000
_KEYS = {"brave": "BRAVE_API_KEY", "tavily": "TAVILY_API_KEY", "exa": "EXA_API_KEY"}
_HOW = ("set [web_search] backend in ~/.config/agentcli/config.toml: searxng (with url), brave, tavily or exa "
        "(with BRAVE_API_KEY, TAVILY_API_KEY or EXA_API_KEY in the environment), or anthropic (an Anthropic model)")

Search = Callable[[str, Sequence[str], Sequence[str]], Awaitable[SearchReply]]  # (query, allowed, blocked)


class SearchError(Exception):
    """A backend failed; `str()` is one line for the model."""


@dataclass(frozen=True, slots=True)
class WebSearcher:
    """What one agent's WebSearch calls use: its backend (`search`, or the line saying why there is none), the
    configured domain lists, and how much a call may take."""

    backend: str
    search: Search | None = None
    unavailable: str = ""
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    max_output_chars: int = 20_000
    timeout_seconds: float = 60.0
    provider: str = ""  # who bills the search's own model request ("" for the HTTP APIs)


def not_configured(why: str = "") -> str:
    """The one line a WebSearch call reads when no backend can run."""
    return f"WebSearch has no search backend{': ' + why if why else ''}; {_HOW}."


def session_backend(settings: WebSearchSettings, provider: str) -> str:
    """The backend `settings` give an agent whose model is `provider`'s (`auto`: anthropic for Anthropic's)."""
    if settings.backend == "auto":
        return "anthropic" if provider == "anthropic" else "none"
    return settings.backend


def domain_ok(url: str, allowed: Sequence[str], blocked: Sequence[str]) -> bool:
    """Whether a result's host is one of `allowed` (or below one; any when empty) and none of `blocked`."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")

    def under(domain: str) -> bool:
        domain = domain.lower().strip().lstrip("*.").rstrip(".")
        return host == domain or host.endswith("." + domain)

    return (not allowed or any(under(d) for d in allowed)) and not any(under(d) for d in blocked)


def searcher_for(settings: WebSearchSettings, model: ResolvedModel, pool: ProviderPool,
                 resolve: Callable[[str], ResolvedModel], env: Mapping[str, str]) -> WebSearcher:
    """The searcher of an agent running `model`."""
    common: dict[str, Any] = {"allowed": tuple(settings.allowed_domains), "blocked": tuple(settings.blocked_domains),
                              "max_output_chars": settings.max_output_chars,
                              "timeout_seconds": settings.timeout_seconds}
    backend = session_backend(settings, model.provider)
    if backend == "none":
        why = "" if settings.backend == "none" else f"{model.provider} models have no server-side search"
        return WebSearcher(backend, unavailable=not_configured(why), **common)
    if backend == "anthropic":
        return WebSearcher(backend, _anthropic(settings, model, pool, resolve), provider="anthropic", **common)
    if backend == "searxng":
        if not settings.url:
            return WebSearcher(backend, unavailable=not_configured("searxng needs [web_search] url"), **common)
        return WebSearcher(backend, _http(backend, settings.url, "", settings.max_results), **common)
    key = env.get(_KEYS[backend], "")
    if not key:
        return WebSearcher(backend, unavailable=not_configured(f"{backend} needs {_KEYS[backend]}"), **common)
    from agentcli.redact import register_secret

    register_secret(key)
    return WebSearcher(backend, _http(backend, "", key, settings.max_results), **common)


def search_absent(settings: WebSearchSettings, model: ResolvedModel, pool: ProviderPool) -> str:
    """Why a session whose main agent runs `model` offers no WebSearch (its backend cannot run: none, no URL or
    key), or "" when it offers it."""
    import os

    searcher = searcher_for(settings, model, pool, lambda spec: model, os.environ)
    return "" if searcher.search is not None else searcher.unavailable


def _anthropic(settings: WebSearchSettings, model: ResolvedModel, pool: ProviderPool,
               resolve: Callable[[str], ResolvedModel]) -> Search:
    async def search(query: str, allowed: Sequence[str], blocked: Sequence[str]) -> SearchReply:
        from agentcli.llm import ProviderError, web_search

        try:
            runner = resolve(settings.model) if settings.model else model
        except (ValueError, ProviderError) as exc:
            raise SearchError(f"[web_search] model: {exc}") from None
        if runner.provider != "anthropic":
            raise SearchError(not_configured(f"the anthropic backend needs an Anthropic model, not {runner.display}"))
        try:
            return await web_search(pool.get(runner), runner.model, query, max_uses=settings.max_uses,
                                    allowed=allowed, blocked=blocked)
        except ProviderError as exc:
            raise SearchError(f"Web search failed: {exc}") from None

    return search


def _http(backend: str, url: str, key: str, max_results: int) -> Search:
    async def search(query: str, allowed: Sequence[str], blocked: Sequence[str]) -> SearchReply:
        method, address, headers, body, params = _request(backend, url, key, query, max_results, allowed, blocked)
        data = await _fetch_json(backend, method, address, headers, body, params)
        hits = [h for h in _hits(backend, data) if domain_ok(h.url, allowed, blocked)]
        return SearchReply(model="", queries=[query], hits=hits[:max_results])

    return search


def _request(backend: str, url: str, key: str, query: str, limit: int, allowed: Sequence[str],
             blocked: Sequence[str]) -> tuple[str, str, dict[str, str], dict[str, Any] | None, dict[str, str]]:
    """(method, address, headers, JSON body, query parameters) of one search."""
    if backend == "searxng":
        return "GET", url.rstrip("/") + "/search", {}, None, {"q": query, "format": "json"}
    if backend == "brave":
        return ("GET", "https://api.search.brave.com/res/v1/web/search",
                {"X-Subscription-Token": key}, None, {"q": query, "count": str(min(limit, 20))})
    if backend == "tavily":
        body: dict[str, Any] = {"query": query, "max_results": limit}
        body |= {"include_domains": list(allowed)} if allowed else {}
        body |= {"exclude_domains": list(blocked)} if blocked else {}
        return "POST", "https://api.tavily.com/search", {"Authorization": f"Bearer {key}"}, body, {}
    body = {"query": query, "numResults": limit, "contents": {"text": {"maxCharacters": 500}}}
    body |= {"includeDomains": list(allowed)} if allowed else {}
    body |= {"excludeDomains": list(blocked)} if blocked else {}
    return "POST", "https://api.exa.ai/search", {"x-api-key": key}, body, {}


def _hits(backend: str, data: Any) -> list[SearchHit]:
    """The results of one answer, in its order; entries without an http(s) address are skipped."""
    if backend == "brave":
        rows = (data.get("web") or {}).get("results") if isinstance(data, dict) else None
    else:
        rows = data.get("results") if isinstance(data, dict) else None
    hits: list[SearchHit] = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or not str(row.get("url") or "").startswith(("http://", "https://")):
            continue
        snippet = row.get("content") or row.get("description") or row.get("text") or ""
        age = row.get("publishedDate") or row.get("age") or row.get("published_date") or ""
        hits.append(SearchHit(str(row.get("title") or row["url"]), str(row["url"]), str(age or ""),
                              " ".join(str(snippet).split())[:500]))
    return hits


async def _fetch_json(backend: str, method: str, address: str, headers: dict[str, str], body: dict[str, Any] | None,
                      params: dict[str, str]) -> Any:
    import aiohttp

    from agentcli import __version__

    headers = {"Accept": "application/json", "User-Agent": f"agentcli/{__version__} (WebSearch)", **headers}
    try:
        async with aiohttp.ClientSession(trust_env=False, headers=headers) as http, http.request(
                method, address, params=params or None, json=body) as response:
            raw = await response.content.read(_MAX_BODY + 1)
            if response.status >= 400:
                raise SearchError(f"{backend} answered HTTP {response.status} {response.reason or ''}".rstrip())
    except aiohttp.ClientError as exc:
        raise SearchError(f"{backend} cannot be reached: {type(exc).__name__}: {exc}") from None
    if len(raw) > _MAX_BODY:
        raise SearchError(f"{backend}'s answer is larger than {_MAX_BODY} bytes")
    try:
        return json.loads(raw)
    except ValueError:
        hint = " (is format=json enabled in its settings.yml?)" if backend == "searxng" else ""
        raise SearchError(f"{backend}'s answer is not JSON{hint}") from None
