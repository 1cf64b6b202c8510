"""Model resolution: main / light / aliases / provider:model, keys and endpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config.load import load_config
from agentcli.llm.base import MissingCredentialsError
from agentcli.llm.models import ModelSpecError, resolve_model


def _settings(tmp_path: Path, toml: str = "", env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    if toml:
        (tmp_path / ".agentcli").mkdir(exist_ok=True)
        (tmp_path / ".agentcli" / "config.toml").write_text(toml)
    return load_config(workspace=tmp_path, env=env or {}, trusted=True).settings


def test_main_light_and_aliases(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    env = {"ANTHROPIC_API_KEY": "sk-ant-1"}
    main = resolve_model("main", settings, env)
    assert (main.provider, main.model, main.api_key) == ("anthropic", "claude-sonnet-5-5", "sk-ant-1")
    assert resolve_model("light", settings, env).model == "claude-haiku-5-5"
    assert resolve_model("sonnet", settings, env).model == "claude-sonnet-5-5"
    assert resolve_model("haiku", settings, env).label == "light"


def test_provider_colon_model_reuses_configured_endpoint(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        '[models.light]\nprovider = "openai-compatible"\nmodel = "llama3"\nbase_url = "http://127.0.0.1:11434/v1"\n',
    )
    got = resolve_model("openai-compatible:qwen2", settings, {})
    assert (got.model, got.base_url, got.api_key) == ("qwen2", "http://127.0.0.1:11434/v1", "not-needed")
    assert got.display == "openai-compatible:qwen2"
    other = resolve_model("openai:gpt-5", settings, {"OPENAI_API_KEY": "sk-o", "OPENAI_BASE_URL": "http://h/v1"})
    assert (other.api_key, other.base_url) == ("sk-o", "http://h/v1")


def test_config_key_and_url_win_over_env(tmp_path: Path) -> None:
    settings = _settings(tmp_path, '[models.main]\napi_key = "sk-file"\nbase_url = "http://127.0.0.1:1"\n')
    got = resolve_model("main", settings, {"ANTHROPIC_API_KEY": "sk-env", "ANTHROPIC_BASE_URL": "http://x"})
    assert (got.api_key, got.base_url) == ("sk-file", "http://127.0.0.1:1")
    assert "sk-file" not in repr(got)


def test_missing_key_says_what_to_set(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    with pytest.raises(MissingCredentialsError) as info:
        resolve_model("main", settings, {})
    message = str(info.value)
    assert "ANTHROPIC_API_KEY" in message
    assert "models.main" in message
    assert "\n" not in message


def test_compatible_without_server_says_what_to_set(tmp_path: Path) -> None:
    settings = _settings(tmp_path, '[models.main]\nprovider = "openai-compatible"\nmodel = "llama3"\n')
    with pytest.raises(MissingCredentialsError, match=r"models\.main\.base_url"):
        resolve_model("main", settings, {})


def test_seed_variables_reach_the_models(tmp_path: Path) -> None:
    env = {"LLM_PROVIDER": "openai", "LLM_MODEL_ID": "gpt-5", "LLM_API_KEY": "sk-llm",
           "LIGHT_LLM_MODEL_ID": "claude-haiku-4-5", "LIGHT_LLM_API_KEY": "sk-light"}
    settings = _settings(tmp_path, env=env)
    main = resolve_model("main", settings, {})
    assert (main.provider, main.model, main.api_key) == ("openai", "gpt-5", "sk-llm")
    assert resolve_model("light", settings, {}).api_key == "sk-light"


def test_unknown_spec(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="unknown model 'nope:x'"):
        resolve_model("nope:x", _settings(tmp_path), {"ANTHROPIC_API_KEY": "k"})


def test_default_models_are_current_and_priced() -> None:
    """The shipped defaults are not in the installed SDK's deprecation table and genai-prices knows them."""
    from anthropic.resources.messages.messages import DEPRECATED_MODELS

    from agentcli.config.schema import LightModelSettings, ModelSettings
    from agentcli.llm.prices import cost_per_token_known

    for settings in (ModelSettings(), LightModelSettings()):
        assert settings.provider == "anthropic"
        assert settings.model not in DEPRECATED_MODELS, f"{settings.model} is deprecated by the installed SDK"
        assert cost_per_token_known("anthropic", settings.model), f"no price for {settings.model}"
