"""Prices summed from each model's per-stretch rates are genai-prices' own, tiers and fixed parts included."""

from __future__ import annotations

import random

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from agentcli.llm import prices
from agentcli.llm.usage import Usage

MODELS = [("anthropic", "claude-haiku-4-5"), ("anthropic", "claude-sonnet-4-5"), ("anthropic", "claude-opus-4-1"),
          ("anthropic", "claude-3-5-haiku"), ("openai", "gpt-5"), ("openai", "gpt-4o"), ("openai", "o3")]


def _library(provider: str, model: str, usage: Usage, searches: int) -> float:
    total = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    price_usage = PriceUsage(input_tokens=total, output_tokens=usage.output_tokens,
                             cache_read_tokens=usage.cache_read_tokens, cache_write_tokens=usage.cache_write_tokens,
                             **({"web_searches": searches} if searches else {}))
    return float(calc_price(price_usage, model_ref=model, provider_id=provider).total_price)


@pytest.mark.parametrize(("provider", "model"), MODELS)
def test_summed_rates_are_the_library_price(provider: str, model: str) -> None:
    rng = random.Random(f"{provider}/{model}")
    for _ in range(80):
        scale = rng.choice([3, 900, 150_000, 199_999, 200_000, 200_001, 600_000])  # both sides of a 200k tier
        usage = Usage(input_tokens=rng.randint(0, scale), output_tokens=rng.randint(0, 9_000),
                      cache_read_tokens=rng.randint(0, scale) * rng.randint(0, 1),
                      cache_write_tokens=rng.randint(0, 5_000) * rng.randint(0, 1))
        searches = rng.choice([0, 0, 2])
        assert prices.cost_usd(provider, model, usage, searches) == _library(provider, model, usage, searches)


def test_a_tiered_price_changes_rates_past_its_tier() -> None:
    below = prices.cost_usd("anthropic", "claude-sonnet-4-5", Usage(input_tokens=200_000))
    above = prices.cost_usd("anthropic", "claude-sonnet-4-5", Usage(input_tokens=200_001))
    assert below is not None and above is not None
    assert above > 1.5 * below  # past the tier, every token pays the tier's rate
    assert above == _library("anthropic", "claude-sonnet-4-5", Usage(input_tokens=200_001), 0)


def test_unknown_models_and_servers_have_no_price() -> None:
    assert prices.cost_usd("anthropic", "no-such-model-xyz", Usage(input_tokens=10)) is None
    assert prices.cost_usd("openai-compatible", "gpt-5", Usage(input_tokens=10)) is None
