"""Cost of a request from the maintained `genai-prices` table (offline snapshot)."""

from __future__ import annotations

import warnings
from functools import lru_cache

from agentcli.llm.usage import Usage

_PRICE_PROVIDER = {"anthropic": "anthropic", "openai": "openai"}


@lru_cache(maxsize=256)
def _known(provider: str, model: str) -> bool:
    return cost_per_token_known(provider, model)


def cost_per_token_known(provider: str, model: str) -> bool:
    """Whether the table prices this model."""
    return _calc(provider, model, Usage(input_tokens=1)) is not None


def _calc(provider: str, model: str, usage: Usage, web_searches: int = 0) -> float | None:
    provider_id = _PRICE_PROVIDER.get(provider)
    if provider_id is None:
        return None  # a compatible server: its prices are unknown
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    price_usage = PriceUsage(
        # genai-prices counts cache traffic inside input_tokens.
        input_tokens=usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        **({"web_searches": web_searches} if web_searches else {}),  # priced per thousand searches
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = calc_price(price_usage, model_ref=model, provider_id=provider_id)
    except LookupError:
        return None
    return float(result.total_price)


def cost_usd(provider: str, model: str, usage: Usage, web_searches: int = 0) -> float | None:
    """US dollars for `usage` on `provider`/`model` (and `web_searches` server-side searches, which the table prices
    per thousand), or None when the price is unknown."""
    if not _known(provider, model):
        return None
    return _calc(provider, model, usage, web_searches)


@lru_cache(maxsize=256)
def context_window(provider: str, model: str) -> int | None:
    """The model's context window in tokens from the same table, None when the table does not know it."""
    provider_id = _PRICE_PROVIDER.get(provider)
    if provider_id is None:
        return None
    from genai_prices.data_snapshot import get_snapshot

    try:
        _, info = get_snapshot().find_provider_model(model, None, provider_id, None)
    except LookupError:
        return None
    window = info.context_window
    return window if isinstance(window, int) and window > 0 else None
