"""Deprecated models: one line naming the setting to change, instead of the SDK's per-call warning.

The anthropic SDK warns (`DeprecationWarning`, several lines, on every request) when a model in
its own deprecation table is used. agentcli silences that text and says it once per process, in
words that name the setting the person can change.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Container
from typing import Protocol

from agentcli.llm.base import ModelNotFoundError, ProviderError


class ModelChoice(Protocol):
    """What these warnings need of a resolved model (`agentcli.llm.models.ResolvedModel` is one).

    A protocol, not an import: the provider modules use this module, and `models` imports them.
    """

    @property
    def label(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def thinking(self) -> str: ...


# The SDK's own warning texts (anthropic/resources/messages/messages.py): "The model 'X' is deprecated ...",
# and "Using Claude with X and 'thinking.type=enabled' is deprecated ...".
SDK_WARNING_PATTERN = r"The model '.*' is deprecated"
SDK_THINKING_PATTERN = r"Using Claude with .* and 'thinking.type=enabled' is deprecated"
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
    warnings.filterwarnings("ignore", message=SDK_THINKING_PATTERN, category=UserWarning)


def end_of_life(provider: str, model: str) -> str | None:
    """The end-of-life date the installed SDK gives a model (`2026-11-30` when it parses), or None."""
    if provider != "anthropic":
        return None
    table = _sdk_table("DEPRECATED_MODELS")  # none in the SDK: nothing is known to be deprecated
    raw = table.get(model) if isinstance(table, dict) else None
    if raw is None:
        return None
    return _iso_date(str(raw))


def _sdk_table(name: str) -> Container[str] | None:
    """A model table the SDK's messages resource checks every request against (its module re-exports it from
    a private one since 2.14, so it is read by name), or None for an SDK without it."""
    try:
        from anthropic.resources.messages import messages
    except ImportError:
        return None
    table = getattr(messages, name, None)
    return table if isinstance(table, Container) else None


def _iso_date(text: str) -> str:
    match = re.fullmatch(r"\s*([A-Za-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\s*", text)
    if match is None or match.group(1).lower() not in _MONTHS:
        return text.strip()
    month = _MONTHS[match.group(1).lower()]
    return f"{match.group(3)}-{month:02d}-{int(match.group(2)):02d}"


def deprecation_line(model: ModelChoice) -> str | None:
    """The warning for a deprecated model, naming the setting that chose it; None for a current model."""
    date = end_of_life(model.provider, model.model)
    if date is None:
        return None
    return f"{_named(model)} is deprecated by Anthropic (end of life {date}); {_change(model)}"


def retired_line(model: ModelChoice, detail: str) -> str:
    """The failure of a request for a model the provider does not serve (retired, misspelt, not on the account),
    naming the setting that chose it and, for Anthropic, a current model; `detail` is the provider's own words."""
    who = _PROVIDERS.get(model.provider, "the server")
    return f"{_named(model)} is retired or unknown to {who} ({detail}); {_change(model, _current(model))}"


_PROVIDERS = {"anthropic": "Anthropic", "openai": "OpenAI"}


def failure_line(model: ModelChoice, error: ProviderError) -> str:
    """The one line a failed request ends a run with: the provider's words, or for a model it does not serve,
    which setting chose it and what to choose instead."""
    if not isinstance(error, ModelNotFoundError):
        return str(error)
    status = f"HTTP {error.status}: " if error.status else ""
    return retired_line(model, f"{status}{error.message}")


def _named(model: ModelChoice) -> str:
    """`model X (models.main.model)` for a configured model, `model provider:X` for one asked for by name."""
    if model.label in ("main", "light"):
        return f"model {model.model} (models.{model.label}.model)"
    return f"model {model.provider}:{model.model}"


def _change(model: ModelChoice, current: str | None = None) -> str:
    """What the person changes: the setting, or the agent file's or Task call's model; with a current model."""
    instead = f" such as {current}" if current else ""
    if model.label in ("main", "light"):
        setting = f"models.{model.label}.model"
        return f"set {setting} to a current model{instead}"
    return f"ask for a current model{instead} instead (the agent file's or Task call's model, or --model)"


def _current(model: ModelChoice) -> str | None:
    """agentcli's own default for the model's role, when the provider is Anthropic and that default is another."""
    if model.provider != "anthropic":
        return None
    from agentcli.config import LightModelSettings, ModelSettings  # only when a request failed

    default = (LightModelSettings() if model.label == "light" else ModelSettings()).model
    return default if default != model.model else None


def thinking_line(model: ModelChoice) -> str | None:
    """The warning for `thinking = "on"` on a model the SDK wants adaptive thinking for; None otherwise."""
    if model.provider != "anthropic" or model.thinking != "on":
        return None
    table = _sdk_table("MODELS_TO_WARN_WITH_THINKING_ENABLED")
    if table is None or model.model not in table:
        return None
    setting = f"models.{model.label}.thinking" if model.label in ("main", "light") else "thinking"
    return f'model {model.model} wants adaptive thinking; set {setting} = "adaptive" instead of "on"'


def announce_once(model: ModelChoice) -> list[str]:
    """The warnings for this model (deprecated, thinking mode) the first time this process meets it."""
    lines = [line for line in (deprecation_line(model), thinking_line(model)) if line is not None]
    if not lines:
        return []
    key = (model.provider, model.model)
    with _lock:
        if key in _announced:
            return []
        _announced.add(key)
    return lines


def forget_announcements() -> None:
    """Start over (tests)."""
    with _lock:
        _announced.clear()
