"""Log to a file in the state dir; API keys are masked in every record."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

from agentcli import paths, redact

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class SecretFilter(logging.Filter):
    """Replaces every registered secret (`agentcli.redact`) in a record's final message with `***`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        for secret in secrets:
            redact.register_secret(secret)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


class MaskingFormatter(logging.Formatter):
    """Masks registered secrets in the whole formatted record, tracebacks included."""

    def format(self, record: logging.LogRecord) -> str:
        return redact.mask(super().format(record))


def _private_file(path: Path) -> None:
    """Create `path` owner-only (0600), or tighten it when it exists looser."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def setup_logging(level: str, *, verbose: bool, secrets: Iterable[str] = ()) -> Path:
    """Send agentcli's logs to `$XDG_STATE_HOME/agentcli/agentcli.log`; returns the file's path."""
    log_dir = paths.ensure_private_dir(paths.state_dir())
    path = log_dir / "agentcli.log"
    _private_file(path)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(MaskingFormatter(LOG_FORMAT))
    handler.addFilter(SecretFilter(secrets))
    root = logging.getLogger("agentcli")
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else getattr(logging, level.upper(), logging.INFO))
    root.propagate = False
    # The SDKs log request details at debug level; keep them quiet even with --verbose.
    for name in ("anthropic", "openai", "httpx2", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return path
