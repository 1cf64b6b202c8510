"""Resolve `main` / `light` / aliases / `provider:model` to a concrete model, and share SDK clients."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentcli.llm.base import PROVIDERS, MissingCredentialsError, Provider, ProviderName, RetryPolicy
from agentcli.llm.server_window import ServerWindow, discover
from agentcli.llm.tls import verify_for
from agentcli.redact import register_secret

if TYPE_CHECKING:
    from agentcli.config import ModelSettings, Settings

_KEY_ENV: dict[ProviderName, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "openai": ("OPENAI_API_KEY",),
    "openai-compatible": ("OPENAI_API_KEY",),
}
_URL_ENV: dict[ProviderName, str] = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "openai-compatible": "OPENAI_BASE_URL",
}
# Local OpenAI-compatible servers (Ollama, llama.cpp, vLLM) take any key; the SDK insists on one.
_NO_KEY_NEEDED = "not-needed"


class ModelSpecError(ValueError):
    """A model name that does not resolve."""


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """A concrete model: which provider, which id, where, with which key."""

    label: str  # what the person or agent file asked for: main, light, anthropic:claude-x
    provider: ProviderName
    model: str
    base_url: str | None
    api_key: str = field(repr=False)
    max_output_tokens: int
    thinking: str = ""  # "" (the model's default) | off | on | adaptive; Anthropic only
    thinking_budget_tokens: int = 0
    reasoning_effort: str = ""  # OpenAI and compatible servers only
    effort: str = ""  # a Task call's or agent file's effort (low | medium | high); see `with_effort`
    context_window: int = 0  # configured window in tokens; 0: the price/model table's (`llm.prices.context_window`)

    @property
    def display(self) -> str:
        """Short name for the UI: the label for main/light, else provider:model."""
        return self.label if self.label in ("main", "light") else f"{self.provider}:{self.model}"


# Anthropic thinking budgets per effort level (when the model has no adaptive thinking configured).
EFFORT_BUDGETS: dict[str, int] = {"low": 2048, "medium": 8192, "high": 24576}
_MIN_BUDGET = 1024  # the API's minimum thinking budget
_ANSWER_ROOM = 1024  # output tokens a budget always leaves for the answer


def with_effort(model: ResolvedModel, effort: str | None) -> ResolvedModel:
    """`model` set to think with `effort` (low | medium | high), like Claude Code's Agent tool.

    OpenAI and compatible servers: `reasoning_effort`. Anthropic: adaptive thinking with
    `output_config.effort` when the model is configured for adaptive thinking, else thinking on with a
    budget per level (`EFFORT_BUDGETS`), capped to leave room for the answer below max_output_tokens;
    a model whose max_output_tokens leaves no room for the API's minimum budget is left as it is.
    """
    if not effort:
        return model
    if model.provider != "anthropic":
        return dataclasses.replace(model, reasoning_effort=effort, effort=effort)
    if model.thinking == "adaptive":
        return dataclasses.replace(model, effort=effort)
    budget = min(EFFORT_BUDGETS[effort], model.max_output_tokens - _ANSWER_ROOM)
    if budget < _MIN_BUDGET:
        return model
    return dataclasses.replace(model, thinking="on", thinking_budget_tokens=budget, effort=effort)


def _env_value(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        if env.get(name):
            return env[name]
    return None


def _credentials(
    provider: ProviderName, configured_key: str | None, configured_url: str | None, env: Mapping[str, str], where: str
) -> tuple[str, str | None]:
    base_url = configured_url or env.get(_URL_ENV[provider]) or None
    key = configured_key or _env_value(env, _KEY_ENV[provider])
    register_secret(key)  # masked in every provider error text and log record from now on
    if provider == "openai-compatible" and not base_url:
        raise MissingCredentialsError(
            f"{where} uses provider openai-compatible but has no server: set {where}.base_url "
            f"(e.g. http://127.0.0.1:11434/v1 for Ollama) or OPENAI_BASE_URL",
            provider=provider,
        )
    if key:
        return key, base_url
    if provider == "openai-compatible":
        return _NO_KEY_NEEDED, base_url
    names = " or ".join(_KEY_ENV[provider])
    raise MissingCredentialsError(
        f"no API key for {where} ({provider}): set {names}, or {where}.api_key in "
        f"~/.config/agentcli/config.toml",
        provider=provider,
    )


def _from_settings(label: str, where: str, ms: ModelSettings, env: Mapping[str, str]) -> ResolvedModel:
    secret = ms.api_key.get_secret_value() if ms.api_key is not None else None
    key, url = _credentials(ms.provider, secret, ms.base_url, env, where)
    return ResolvedModel(
        label, ms.provider, ms.model, url, key, ms.max_output_tokens,
        thinking=ms.thinking, thinking_budget_tokens=ms.thinking_budget_tokens, reasoning_effort=ms.reasoning_effort,
        context_window=ms.context_window,
    )


def resolve_model(spec: str, settings: Settings, env: Mapping[str, str] | None = None) -> ResolvedModel:
    """Resolve `main`, `light`, an alias from `[models.aliases]`, or `provider:model`."""
    env = os.environ if env is None else env
    name = spec.strip()
    seen: set[str] = set()
    while name in settings.models.aliases and name not in seen:
        seen.add(name)
        name = settings.models.aliases[name]
    if name in ("main", "light"):
        return _from_settings(name, f"models.{name}", getattr(settings.models, name), env)
    provider, sep, model = name.partition(":")
    if not sep or not model or provider not in PROVIDERS:
        raise ModelSpecError(
            f"unknown model {spec!r}: use main, light, an alias ({', '.join(sorted(settings.models.aliases))}) "
            f"or provider:model with provider one of {', '.join(PROVIDERS)}"
        )
    prov: ProviderName = provider
    # Reuse the endpoint and key of a configured model of the same provider, if any.
    for slot in ("main", "light"):
        ms: ModelSettings = getattr(settings.models, slot)
        if ms.provider == prov:
            secret = ms.api_key.get_secret_value() if ms.api_key is not None else None
            key, url = _credentials(prov, secret, ms.base_url, env, f"models.{slot}")
            return ResolvedModel(name, prov, model, url, key, ms.max_output_tokens)
    key, url = _credentials(prov, None, None, env, f"model {name}")
    return ResolvedModel(name, prov, model, url, key, settings.models.main.max_output_tokens)


class ProviderPool:
    """One SDK client per (provider, base_url, key), shared by every agent of a run.

    SDKs are imported here, lazily, on the first request that needs them.
    """

    def __init__(self, policy: RetryPolicy, *, request_timeout: float = 600.0, connect_timeout: float = 10.0):
        self.policy = policy
        self.request_timeout = request_timeout
        self.connect_timeout = connect_timeout
        self._providers: dict[tuple[str, str | None, str], Provider] = {}
        self._clients: list[Any] = []
        self._windows: dict[tuple[str, str], asyncio.Future[ServerWindow | None]] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> ProviderPool:
        """A pool using the `[llm]` retry and timeout settings."""
        llm = settings.llm
        policy = RetryPolicy(
            max_retries=llm.max_retries,
            initial_delay=llm.retry_initial_delay_seconds,
            max_delay=llm.retry_max_delay_seconds,
        )
        return cls(policy, request_timeout=llm.request_timeout_seconds, connect_timeout=llm.connect_timeout_seconds)

    def get(self, model: ResolvedModel) -> Provider:
        """The provider adapter for a resolved model (created once per endpoint and key)."""
        key = (model.provider, model.base_url, model.api_key)
        provider = self._providers.get(key)
        if provider is None:
            provider = self._create(model)
            self._providers[key] = provider
        return provider

    def _create(self, model: ResolvedModel) -> Provider:
        if model.provider == "anthropic":
            import anthropic

            from agentcli.llm.anthropic import AnthropicProvider

            timeout = anthropic.Timeout(self.request_timeout, connect=self.connect_timeout)
            client = anthropic.AsyncAnthropic(
                api_key=model.api_key,
                base_url=model.base_url,
                max_retries=0,  # retries are ours: the SDK does not retry errors inside a 200 stream
                timeout=timeout,
                http_client=anthropic.DefaultAioHttpClient(timeout=timeout, verify=verify_for(model.base_url)),
            )
            self._clients.append(client)
            return AnthropicProvider(client, self.policy)
        import openai

        from agentcli.llm.openai import OpenAIProvider

        otimeout = openai.Timeout(self.request_timeout, connect=self.connect_timeout)
        oclient = openai.AsyncOpenAI(
            api_key=model.api_key,
            base_url=model.base_url,
            max_retries=0,
            timeout=otimeout,
            http_client=openai.DefaultAioHttpClient(timeout=otimeout, verify=verify_for(model.base_url)),
        )
        self._clients.append(oclient)
        return OpenAIProvider(
            oclient, self.policy, name=model.provider, compatible=model.provider == "openai-compatible"
        )

    async def server_window(self, model: ResolvedModel, *, timeout: float, default: int) -> ServerWindow | None:
        """The window the server at `model.base_url` runs `model` with (`llm.server_window`), asked once per base
        URL and model for this pool's life (every agent of the session shares the answer), None when it said
        nothing useful within `timeout` seconds."""
        if not model.base_url:
            return None
        key = (model.base_url, model.model)
        asked = self._windows.get(key)
        if asked is None:
            asked = self._windows[key] = asyncio.ensure_future(discover(
                model.base_url, model.model, model.api_key, timeout=timeout, default=default,
                verify=verify_for(model.base_url)))
        return await asyncio.shield(asked)  # one agent cancelled: the others still get the answer

    async def aclose(self) -> None:
        """Close every client's connection pool."""
        for asked in self._windows.values():
            asked.cancel()
        self._windows.clear()
        clients, self._clients = self._clients, []
        self._providers.clear()
        for client in clients:
            await client.close()
