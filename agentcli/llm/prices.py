"""Cost of a request from the maintained `genai-prices` table (offline snapshot).

A model's price is linear in the token counts between the thresholds of its tiered prices (a tier applies
to all tokens once the request's input passes its start), so the rates of each stretch are read once from
genai-prices (`ModelPrice.calc_price` of a few unit usages, checked against one more) and a request's price is
their sum; a price that does not check out, or one with web searches, is asked of genai-prices whole.
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from agentcli.llm.usage import Usage

if TYPE_CHECKING:
    from genai_prices.types import ModelPrice

_PRICE_PROVIDER = {"anthropic": "anthropic", "openai": "openai"}
Counts = tuple[int, int, int, int]  # uncached input, output, cache read, cache write tokens
Rates = tuple[Decimal, Decimal, Decimal, Decimal, Decimal]  # fixed part, then per token of each of Counts
_rates: dict[tuple[int, int], tuple[ModelPrice, Rates | None]] = {}  # (id of a ModelPrice, stretch) -> its rates
_starts: dict[int, tuple[ModelPrice, tuple[int, ...]]] = {}  # id of a ModelPrice -> its tiers' starts


@lru_cache(maxsize=256)
def _known(provider: str, model: str) -> bool:
    return cost_per_token_known(provider, model)


def cost_per_token_known(provider: str, model: str) -> bool:
    """Whether the table prices this model."""
    return _calc(provider, model, Usage(input_tokens=1)) is not None


def _price_usage(counts: Counts, web_searches: int = 0) -> Any:
    from genai_prices import Usage as PriceUsage

    uncached, output, read, write = counts
    return PriceUsage(
        # genai-prices counts cache traffic inside input_tokens.
        input_tokens=uncached + read + write,
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=write,
        **({"web_searches": web_searches} if web_searches else {}),  # priced per thousand searches
    )


def _whole(price: ModelPrice, counts: Counts, web_searches: int = 0) -> Decimal:
    """genai-prices' own price of `counts`."""
    return Decimal(price.calc_price(_price_usage(counts, web_searches))["total_price"])


def _tier_starts(price: ModelPrice) -> tuple[int, ...]:
    """The starts of the price's tiers (input tokens past which a tier's rate applies to every token)."""
    from genai_prices.types import TieredPrices

    known = _starts.get(id(price))
    if known is None or known[0] is not price:
        tiers = (value.tiers for value in vars(price).values() if isinstance(value, TieredPrices))
        known = _starts[id(price)] = (price, tuple(sorted({tier.start for each in tiers for tier in each})))
    return known[1]


def _stretch_rates(price: ModelPrice, starts: tuple[int, ...], stretch: int) -> Rates | None:
    """The fixed part and per-token rates of the price between two tier starts, None when the sum of them
    does not give genai-prices' own price of a check usage (the price is not linear there)."""
    base = (starts[stretch - 1] + 3) if stretch else 3  # input tokens inside the stretch, and base + 1 too
    if stretch < len(starts) and base + 1 > starts[stretch]:
        return None
    try:
        at = _whole(price, (base, 0, 0, 0))
        per_input = _whole(price, (base + 1, 0, 0, 0)) - at
        rates: Rates = (at - per_input * base, per_input, _whole(price, (base, 1, 0, 0)) - at,
                        _whole(price, (base - 1, 0, 1, 0)) - at + per_input,
                        _whole(price, (base - 1, 0, 0, 1)) - at + per_input)
        check: Counts = (base - 2, 7, 2, 1)  # input base + 1: the same stretch
        return rates if _summed(rates, check) == _whole(price, check) else None
    except (ValueError, ArithmeticError):  # a price genai-prices cannot take apart so: it prices each request
        return None


def _summed(rates: Rates, counts: Counts) -> Decimal:
    return rates[0] + sum((rate * count for rate, count in zip(rates[1:], counts, strict=True)), Decimal(0))


def _price_of(price: ModelPrice, counts: Counts) -> Decimal:
    """The price of `counts`: the sum of the rates of its stretch, else genai-prices' own."""
    starts = _tier_starts(price)
    total_input = counts[0] + counts[2] + counts[3]
    stretch = sum(total_input > start for start in starts)
    known = _rates.get((id(price), stretch))
    if known is None or known[0] is not price:
        known = _rates[(id(price), stretch)] = (price, _stretch_rates(price, starts, stretch))
    rates = known[1]
    return _summed(rates, counts) if rates is not None else _whole(price, counts)


def _calc(provider: str, model: str, usage: Usage, web_searches: int = 0) -> float | None:
    provider_id = _PRICE_PROVIDER.get(provider)
    if provider_id is None:
        return None  # a compatible server: its prices are unknown
    from genai_prices.data_snapshot import get_snapshot

    counts = (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, info = get_snapshot().find_provider_model(model, None, provider_id, None)
            price = info.get_prices(datetime.now(tz=UTC))
            total = _whole(price, counts, web_searches) if web_searches else _price_of(price, counts)
    except LookupError:
        return None
    return float(total)


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
