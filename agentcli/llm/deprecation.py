"""Deprecated models: one line naming the setting to change, instead of the SDK's per-call warning.

The anthropic SDK warns (`DeprecationWarning`, several lines, on every request) when a model in
its own deprecation table is used. agentcli silences that text and says it once per process, in
words that name the setting the person can change.
"""

from __future__ import annotations

import re
import threading
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.llm.models import ResolvedModel

# The SDK's own warning text (anthropic/resources/messages/messages.py): "The model 'X' is deprecated ...".
SDK_WARNING_PATTERN = r"The model '.*' is deprecated"
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
         "november", "december"),
        start=1,
    )
}
_announced: set[tuple[str, str]] = set()
_lock = threading.Lock()


def silence_sdk_warning() -> None:
    """Keep the SDK's own deprecation text from ever reaching the person (agentcli says it once instead)."""
    warnings.filterwarnings("ignore", message=SDK_WARNING_PATTERN, category=DeprecationWarning)


def end_of_life(provider: str, model: str) -> str | None:
    """The end-of-life date the installed SDK gives a model (`2026-11-30` when it parses), or None."""
    if provider != "anthropic":
        return None
    try:
        from anthropic.resources.messages.messages import DEPRECATED_MODELS
    except ImportError:  # an SDK without the table: nothing is known to be deprecated
        return None
    raw = DEPRECATED_MODELS.get(model)
    if raw is None:
        return None
    return _iso_date(str(raw))


def _iso_date(text: str) -> str:
    match = re.fullmatch(r"\s*([A-Za-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\s*", text)
    if match is None or match.group(1).lower() not in _MONTHS:
        return text.strip()
    month = _MONTHS[match.group(1).lower()]
    return f"{match.group(3)}-{month:02d}-{int(match.group(2)):02d}"


def deprecation_line(model: ResolvedModel) -> str | None:
    """The warning for a deprecated model, naming the setting that chose it; None for a current model."""
    date = end_of_life(model.provider, model.model)
    if date is None:
        return None
    if model.label in ("main", "light"):
        setting = f"models.{model.label}.model"
        return (
            f"model {model.model} ({setting}) is deprecated by Anthropic (end of life {date}); "
            f"set {setting} to a current model"
        )
    return (
        f"model {model.provider}:{model.model} is deprecated by Anthropic (end of life {date}); "
        f"ask for a current model instead (the agent file's or Task call's model, or --model)"
    )


def announce_once(model: ResolvedModel) -> str | None:
    """`deprecation_line(model)` the first time this process meets the model, else None."""
    line = deprecation_line(model)
    if line is None:
        return None
    key = (model.provider, model.model)
    with _lock:
        if key in _announced:
            return None
        _announced.add(key)
    return line


def forget_announcements() -> None:
    """Start over (tests)."""
    with _lock:
        _announced.clear()
