"""Log to a file in the state dir; API keys are masked in every record.

A log that cannot be written (the state dir is a file, read-only, or the disk is full) is one
warning line on stderr; the run goes on without a log file.
"""

from __future__ import annotations

import logging
import os
import sys
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


def _warn(path: Path, exc: BaseException | None) -> None:
    reason = (exc.strerror if isinstance(exc, OSError) else None) or exc or "unknown error"
    try:
        sys.stderr.write(f"agentcli: warning: cannot write the log file {path}: {reason}; continuing without a log\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # pragma: no cover - no stderr either
        pass


class LogFileHandler(logging.FileHandler):
    """A FileHandler that never prints a traceback: the first failed write is one warning, then it stops."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", errors="backslashreplace")
        self.broken = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.broken:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        if not self.broken:
            self.broken = True
            _warn(Path(self.baseFilename), sys.exc_info()[1])


def setup_logging(level: str, *, verbose: bool, secrets: Iterable[str] = ()) -> Path | None:
    """Send agentcli's logs to `$XDG_STATE_HOME/agentcli/agentcli.log`; returns the file's path.

    None (after one warning line) when the file cannot be opened: nothing is logged then.
    """
    log_dir = paths.state_dir()
    path = log_dir / "agentcli.log"
    handler: logging.Handler
    opened: Path | None = path
    try:
        paths.ensure_private_dir(log_dir)
        _private_file(path)
        handler = LogFileHandler(path)
    except OSError as exc:
        _warn(path, exc)
        handler, opened = logging.NullHandler(), None
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
    return opened
