"""How figures read for people: token counts and costs, the same in the TUI and the cli listings."""

from __future__ import annotations


def compact_tokens(count: int) -> str:
    """`950`, `12.3k`, `1.2M`."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def format_cost(cost: float | None, unknown: str = "$?") -> str:
    """`$0.0123`, `$2.50`, or `unknown` when no price is known."""
    if cost is None:
        return unknown
    return f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"
