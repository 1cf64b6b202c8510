"""Text that cannot be encoded (lone surrogates) never becomes a traceback at agentcli's boundaries.

Python strings can hold lone surrogates: bytes that were not UTF-8 in argv (surrogateescape), or a
JSON `"\\ud800"` escape in a model's reply. UTF-8 refuses to encode them, so printing, storing or
logging such text raises. The boundaries call these helpers: undecodable input becomes U+FFFD.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import sys
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

REPLACEMENT = "\ufffd"
ERROR_HANDLER = "agentcli.replace"
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (the same object when there is none)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def scrub_deep(value: Any) -> Any:
    """`scrub` applied to every string inside lists, tuples and dicts (keys included)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_deep(k): scrub_deep(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub_deep(v) for v in value)
    return value


def scrub_model(model: M) -> M:
    """`model` itself when it serializes to JSON, else a copy with every lone surrogate replaced."""
    try:
        model.model_dump_json()
    except ValueError:
        return type(model).model_validate(scrub_deep(model.model_dump()))
    return model


def from_argv(text: str) -> str:
    """A command-line argument as text: bytes that were not UTF-8 become U+FFFD."""
    return os.fsencode(text).decode("utf-8", errors="replace")


def from_bytes(data: bytes) -> str:
    """Input bytes (stdin) as text: invalid UTF-8 becomes U+FFFD."""
    return data.decode("utf-8", errors="replace")


def _replace(exc: UnicodeError) -> tuple[bytes, int]:
    # Bytes, not str: the UTF-8 encoder only takes an ASCII string back from an error handler.
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    is_utf8 = exc.encoding.replace("-", "").replace("_", "").lower() == "utf8"
    return (REPLACEMENT.encode() if is_utf8 else b"?") * (exc.end - exc.start), exc.end


codecs.register_error(ERROR_HANDLER, _replace)


def safe_streams() -> None:
    """Make stdout and stderr print U+FFFD (or `?`) for what their encoding cannot take, never raise."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a stream that cannot change stays as it is
                reconfigure(errors=ERROR_HANDLER)
