"""How figures read for people: token counts and costs, the same in the TUI and the cli listings."""

from __future__ import annotations

from typing import Protocol


def compact_tokens(count: int) -> str:
    """`950`, `12.3k`, `1.2M`."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def size_text(size: int) -> str:
    """A size on disk: `4 KiB`, `12.3 MiB`."""
    return f"{size / (1 << 20):.1f} MiB" if size >= 1 << 20 else f"{size / 1024:.0f} KiB"


def format_cost(cost: float | None, unknown: str = "$?") -> str:
    """`$0.0123`, `$2.50`, or `unknown` when no price is known."""
    if cost is None:
        return unknown
    return f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"


class TokenCounts(Protocol):
    """Anything with the ledger's token fields (`Usage`, a stored session's sums, a task record)."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cache_read_tokens(self) -> int: ...
    @property
    def cache_write_tokens(self) -> int: ...


def tokens_text(t: TokenCounts) -> str:
    """`1,234 in / 56 out · cache 900 read / 0 written`: input apart from cache tokens, as the ledger counts."""
    return (
        f"{t.input_tokens:,} in / {t.output_tokens:,} out"
        f" · cache {t.cache_read_tokens:,} read / {t.cache_write_tokens:,} written"
    )


def spend_text(t: TokenCounts, cost: float | None, requests: int) -> str:
    """`1,234 in / 56 out · cache 900 read / 0 written · $0.0123 · 3 requests` (cost unknown: `price unknown`)."""
    shown = format_cost(cost, unknown="price unknown") if requests else "$0"
    return f"{tokens_text(t)} · {shown} · {requests} request{'' if requests == 1 else 's'}"


def context_text(used: int, window: int) -> str:
    """How full a context is: `42% of 200k`."""
    share = 100 * used / window if window else 0
    return f"{share:.0f}% of {compact_tokens(window)}"


def compaction_text(mode: str, before: int, after: int, window: int) -> str:
    """One line about a compaction: what it did and how full the context is after it."""
    what = "old tool results pruned" if mode == "prune" else "older turns summarised"
    return f"context compacted ({what}): {compact_tokens(before)} → {compact_tokens(after)} tokens, " + context_text(
        after, window
    )
