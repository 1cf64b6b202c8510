"""Log to a file in the state dir; API keys are masked in every record."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from agentcli import paths

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class SecretFilter(logging.Filter):
    """Replaces each known secret in a record's final message with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s and len(s) >= 6]

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            masked = message
            for secret in self.secrets:
                masked = masked.replace(secret, "***")
            if masked != message:
                record.msg, record.args = masked, None
        return True


def setup_logging(level: str, *, verbose: bool, secrets: Iterable[str] = ()) -> Path:
    """Send agentcli's logs to `$XDG_STATE_HOME/agentcli/agentcli.log`; returns the file's path."""
    log_dir = paths.state_dir()
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / "agentcli.log"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
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
