"""A process-wide registry of configured secrets (API keys) and `mask()` to hide them in text.

Keys are registered where models are resolved (`agentcli.llm.models`), and masked where text
leaves agentcli: provider error messages (`ProviderError`) and log records (`logs.SecretFilter`).
Values shorter than 8 characters are not registered (too likely to occur by chance, e.g. the
`not-needed` placeholder of local servers is exactly such a non-secret). Standard library only.
"""

from __future__ import annotations

import threading

MASK = "***"
MIN_SECRET_LENGTH = 8
_PLACEHOLDERS = frozenset({"not-needed"})

_lock = threading.Lock()
_secrets: tuple[str, ...] = ()  # longest first, so a key containing another is masked whole


def register_secret(value: str | None) -> None:
    """Remember a secret to mask from now on (ignored when empty, short or a known placeholder)."""
    global _secrets
    if not value or len(value) < MIN_SECRET_LENGTH or value in _PLACEHOLDERS:
        return
    with _lock:
        if value not in _secrets:
            _secrets = tuple(sorted({*_secrets, value}, key=len, reverse=True))


def secrets() -> tuple[str, ...]:
    """Every registered secret."""
    return _secrets


def mask(text: str) -> str:
    """`text` with every registered secret replaced by `***`."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def clear() -> None:
    """Forget every secret (tests)."""
    global _secrets
    with _lock:
        _secrets = ()
