"""Map vendor SDK exceptions onto agentcli's small set of provider errors."""

from __future__ import annotations

import re
from typing import Any

from agentcli.llm.base import (
    AuthenticationError,
    BadRequestError,
    ContextOverflowError,
    ModelNotFoundError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from agentcli.text import one_line

_BY_TYPE: dict[str, type[ProviderError]] = {
    "overloaded_error": OverloadedError,
    "rate_limit_error": RateLimitError,
    "rate_limit_exceeded": RateLimitError,
    "insufficient_quota": RateLimitError,
    "api_error": ServerError,
    "server_error": ServerError,
    "authentication_error": AuthenticationError,
    "permission_error": AuthenticationError,
    "invalid_api_key": AuthenticationError,
    "invalid_request_error": BadRequestError,
    "not_found_error": BadRequestError,
    "request_too_large": BadRequestError,
}


_BY_STATUS: dict[int, type[ProviderError]] = {
    401: AuthenticationError,
    403: AuthenticationError,
    408: ServerError,  # request timeout: retried, as both SDKs do
    409: ServerError,  # conflict (lock timeout): retried, as both SDKs do
    429: RateLimitError,
    529: OverloadedError,
}


def _numeric_code(value: object) -> int | None:
    """An HTTP-like status from an error body's `code` (OpenRouter puts 400, 429, 502 there)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 100 <= value <= 599 else None
    if isinstance(value, str) and value.isdigit() and len(value) == 3:
        return int(value)
    return None


def _upstream(inner: dict[str, Any]) -> str | None:
    """The upstream provider's own words when a proxy (OpenRouter) wraps its error in `metadata.raw`."""
    metadata = inner.get("metadata")
    if not isinstance(metadata, dict):
        return None
    raw = metadata.get("raw")
    if isinstance(raw, str) and raw.strip().startswith("{"):
        import json

        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            _, nested = _error_fields(parsed)
            raw = nested or raw
    text = raw if isinstance(raw, str) and raw.strip() else None
    provider = metadata.get("provider_name")
    if text is None:
        return None
    return f"{provider}: {text}" if isinstance(provider, str) and provider else text


def _page_message(body: str) -> str | None:
    """What a proxy's own error page (HTML or text, not the API's JSON) says: its <title>, else its text."""
    title = re.search(r"<title[^>]*>(.*?)</title>", body, re.IGNORECASE | re.DOTALL)
    text = title.group(1) if title else re.sub(r"<[^>]+>", " ", body)
    import html  # only for a proxy's error page (start-up speed)

    text = " ".join(html.unescape(text).split())
    return text or None


def _error_fields(body: object) -> tuple[str | None, str | None]:
    """(type, message) from an Anthropic or OpenAI error body, wherever they sit."""
    if isinstance(body, str):
        return None, _page_message(body)
    if not isinstance(body, dict):
        return None, None
    inner: Any = body.get("error", body)
    if not isinstance(inner, dict):
        return None, str(inner) if inner else None
    code = inner.get("code")
    kind = inner.get("type") or (code if _numeric_code(code) is None else None)
    message = inner.get("message")
    upstream = _upstream(inner)
    if upstream and upstream not in str(message or ""):
        message = f"{message}: {upstream}" if message else upstream
    return (str(kind) if kind else None), (str(message) if message else None)


def _body_status(body: object) -> int | None:
    """The numeric `code` of an error body, for errors that arrive inside a 200 stream."""
    if not isinstance(body, dict):
        return None
    inner: Any = body.get("error", body)
    return _numeric_code(inner.get("code")) if isinstance(inner, dict) else None


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            continue
    return None


# How providers word a request that does not fit the window: Anthropic ("prompt is too long: N tokens > M
# maximum"), OpenAI (code context_length_exceeded, "maximum context length is N tokens"), and the
# compatible servers (vLLM, llama.cpp, Ollama, OpenRouter) in their own words.
_OVERFLOW = re.compile(
    r"prompt is too long|context[ _-](?:length|size)|maximum context|context window|"
    r"exceeds? the (?:model'?s? )?max(?:imum)? (?:number of )?tokens|input is too long",
    re.IGNORECASE,
)


# llama.cpp's server answers a prompt longer than a slot's window (context shift on, a model that cannot split
# its batch) with a server error: "input is larger than the max context size. skipping" (tools/server/server.cpp).
_SERVER_OVERFLOW = re.compile(r"larger than the max context size", re.IGNORECASE)


def _overflow(status: int | None, kind: str | None, message: str) -> bool:
    if kind in ("context_length_exceeded", "exceed_context_size_error"):
        return True
    if status == 500 and _SERVER_OVERFLOW.search(message):
        return True
    return status in (400, 413, 422, None) and _OVERFLOW.search(message) is not None


def classify(
    provider: str, status: int | None, kind: str | None, message: str, retry_after: float | None = None
) -> ProviderError:
    """Pick the provider error class: unambiguous statuses first, then the error type, then 4xx/5xx."""
    cls: type[ProviderError]
    if (status is None or 400 <= status <= 500) and status not in _BY_STATUS and _overflow(status, kind, message):
        cls = ContextOverflowError
    elif status in _BY_STATUS:
        cls = _BY_STATUS[status]
    elif kind and kind in _BY_TYPE:
        cls = _BY_TYPE[kind]
    elif status is not None and status >= 500:
        cls = ServerError
    elif status is not None and status >= 400:
        cls = BadRequestError
    else:
        cls = ServerError
    shown_status = status if status and status != 200 else None
    error = cls(message, provider=provider, status=shown_status, retry_after=retry_after)
    if kind == "insufficient_quota":  # a 429 for an empty balance: waiting never fixes it, so no retries
        error.retryable = False
    return error


def _model_missing(status: int | None, body: object, kind: str | None, message: str) -> bool:
    """The provider says the model does not exist for it: Anthropic's 404 `not_found_error` ("model: X"), OpenAI's
    `model_not_found` code, or a compatible server's 404 that names the model (vLLM, Ollama) or has no endpoint
    for it (OpenRouter)."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    code = inner.get("code") if isinstance(inner, dict) else None
    if code == "model_not_found" or (kind == "not_found_error" and message.startswith("model:")):
        return True
    return status == 404 and re.search(r"\bmodel\b|no endpoints found", message, re.IGNORECASE) is not None


def from_sdk_exception(provider: str, exc: BaseException, *, streamed: bool) -> ProviderError:
    """Translate an exception raised by either SDK (or its HTTP layer) during a request.

    `streamed` says whether any output had already arrived, which makes a broken
    connection a cut stream rather than an unreachable server.
    """
    status: int | None = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    kind, message = _error_fields(body)
    if status in (None, 200):  # an error inside a 200 stream: its numeric code says what it is
        status = _body_status(body) or status
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) if response is not None else None
    name = type(exc).__name__
    if status is not None or body is not None:
        text = one_line(message or getattr(exc, "message", None) or str(exc) or name, 300)
        if _model_missing(status, body, kind, text):
            return ModelNotFoundError(text, provider=provider, status=status)
        return classify(provider, status, kind, text, _retry_after(headers))
    if name == "APITimeoutError" or "Timeout" in name:
        return ProviderConnectionError("request timed out", provider=provider)
    if name == "APIConnectionError":
        cause = exc.__cause__ or exc.__context__
        if streamed and cause is not None:
            return StreamInterruptedError(
                f"the response stream broke off: {one_line(str(cause) or type(cause).__name__, 300)}",
                provider=provider,
            )
        detail = f": {one_line(str(cause), 300)}" if cause is not None and str(cause) else ""
        return ProviderConnectionError(f"cannot reach the server{detail}", provider=provider)
    text = one_line(str(exc) or name, 300)
    if streamed:
        return StreamInterruptedError(f"the response stream broke off: {text}", provider=provider)
    return ProviderConnectionError(f"request failed: {text}", provider=provider)
