"""Token counts: the one declaration of the billed token fields, which the providers report (`Usage`), the events
carry (`UsageEvent`, a block's counters) and the store keeps (task and session records, sums).

Tokens follow Anthropic's convention: `input_tokens` excludes cache reads and writes, which are their own fields.
Thinking is billed as output: `output_tokens` includes it (Anthropic counts it there; OpenAI's `completion_tokens`
too). `reasoning_tokens` is the part of it a provider reports as reasoning (OpenAI's
`completion_tokens_details.reasoning_tokens`); 0 when not reported. A cost is None while no request had a known
price.

The models that carry counts inherit them, so their fields stay flat (the JSON keys and the SQLite columns are
the field names). A model whose counts sit after fields of its own declares those in a base class before the
counts (pydantic orders fields base first), so its field order, and every JSON key order, stays as it was.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

COUNT_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


class TokenCounts(BaseModel):
    """The four billed token counts."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Everything billed: input, output and cache traffic."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens


class Usage(TokenCounts):
    """One request's token usage as a provider reports it (or a sum of them): the counts and their reasoning part.

    Built by keyword or, as a plain record, by position in `COUNT_FIELDS` order: `Usage(100, 20)`.
    """

    reasoning_tokens: int = 0

    def __init__(self, *counts: int, **fields: Any) -> None:
        super().__init__(**dict(zip(COUNT_FIELDS, counts, strict=False)), **fields)

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(getattr(self, name) + getattr(other, name) for name in COUNT_FIELDS))

    def counts(self) -> Usage:
        """The bare token counts of this model (a `Usage` itself, whatever else the model carries)."""
        return Usage(*(getattr(self, name) for name in COUNT_FIELDS))


class Cost(BaseModel):
    """What some requests cost in US dollars (None: no request had a known price)."""

    cost_usd: float | None = None


class CostedTokens(Cost, TokenCounts):
    """The four token counts and their cost: what a task, a session or a block spent."""


class CostedUsage(Cost, Usage):
    """A request's usage (or a sum's) with its cost: a `UsageEvent`, the store's sums."""
