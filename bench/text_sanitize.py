"""Cost of `terminal_safe` on the text printer's hot path (one call per streamed delta).

Run: python bench/text_sanitize.py

Times clean deltas (the common case: one regex search, the text returned as is), deltas holding an
escape (search + one `str.translate`), and one large tool output, against a bare `str` copy baseline.
"""

from __future__ import annotations

import timeit

from agentcli.text import defang_tags, terminal_safe

CLEAN = "Here is the config loader: "
HOSTILE = "ok \x1b]0;pwned\x07 \x9b2J"
BIG = ("def load_config(path):\n    return toml.load(path)\n" * 4000) + "\x1b[2J"


NAMES = {"terminal_safe": terminal_safe, "defang_tags": defang_tags, "CLEAN": CLEAN, "HOSTILE": HOSTILE, "BIG": BIG}


def per_call_ns(stmt: str, number: int) -> float:
    return min(timeit.repeat(stmt, globals=NAMES, number=number, repeat=5)) / number * 1e9


def main() -> None:
    print(f"baseline str(delta):            {per_call_ns('str(CLEAN)', 200_000):8.0f} ns")
    print(f"terminal_safe(clean delta):     {per_call_ns('terminal_safe(CLEAN)', 200_000):8.0f} ns")
    print(f"terminal_safe(hostile delta):   {per_call_ns('terminal_safe(HOSTILE)', 200_000):8.0f} ns")
    print(f"terminal_safe({len(BIG) // 1000} kB output):    {per_call_ns('terminal_safe(BIG)', 50) / 1e6:8.2f} ms")
    print(f"defang_tags({len(BIG) // 1000} kB result):      {per_call_ns('defang_tags(BIG)', 50) / 1e6:8.2f} ms")


if __name__ == "__main__":
    main()
