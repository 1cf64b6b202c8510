"""Deprecated and retired models: one agentcli line naming the setting, never the SDK's own DeprecationWarning.

The SDK's tables are swapped for fake ones (tests/llm/sdk_tables.py): which real models they list changes
with every SDK release. One test reads the real table, for its shape only.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import anthropic
import pytest

from agentcli.llm.base import Message, ModelNotFoundError, ModelRequest, ResponseDone, RetryPolicy
from agentcli.llm.deprecation import deprecation_line, end_of_life, failure_line, forget_announcements
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.testing.fake_llm_models import Fault
from tests.e2e.helpers import cli_env, db, last_json, run_cli
from tests.llm.sdk_tables import RETIRING, RETIRING_DATED, fake_tables_env, use_fake_tables

LINE = (
    f"agentcli: warning: model {RETIRING} (models.main.model) is deprecated by Anthropic "
    f"(end of life 2026-11-30); set models.main.model to a current model"
)


def _model(label: str, name: str, base_url: str = "http://127.0.0.1:9", provider: str = "anthropic") -> ResolvedModel:
    return ResolvedModel(label, provider, name, base_url, "sk-ant-test", 256)  # type: ignore[arg-type]


def test_the_real_sdk_table_maps_model_ids_to_dates_agentcli_reads() -> None:
    """Only the shape: whatever models the installed SDK lists, each one's date reads as YYYY-MM-DD."""
    from anthropic.resources.messages import messages

    table = messages.DEPRECATED_MODELS
    assert isinstance(table, dict)
    for model, date in table.items():
        assert isinstance(model, str) and isinstance(date, str)
        read = end_of_life("anthropic", model)
        assert read is not None and re.fullmatch(r"\d{4}-\d{2}-\d{2}", read), (model, date, read)
    assert isinstance(messages.MODELS_TO_WARN_WITH_THINKING_ENABLED, list | tuple | set | frozenset)


def test_the_line_names_the_setting_that_chose_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_tables(monkeypatch)
    assert end_of_life("anthropic", RETIRING) == "2026-11-30"
    assert end_of_life("anthropic", "claude-sonnet-5-5") is None
    assert end_of_life("openai", RETIRING) is None
    assert deprecation_line(_model("main", RETIRING)) == LINE.removeprefix("agentcli: warning: ")
    light = deprecation_line(_model("light", RETIRING_DATED))
    assert light is not None and "(models.light.model)" in light and "set models.light.model to" in light
    other = deprecation_line(_model(f"anthropic:{RETIRING}", RETIRING))
    assert other is not None and other.startswith(f"model anthropic:{RETIRING} is deprecated")
    assert deprecation_line(_model("main", "claude-sonnet-5-5")) is None


async def test_the_sdk_warning_never_surfaces_from_the_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_tables(monkeypatch)
    steps = [Step(reply=Reply(text="ok"), times=2)]
    async with FakeLLMServer(Script(steps=steps)) as server:
        # The SDK itself warns on every call with this model ...
        client = anthropic.AsyncAnthropic(api_key="sk-ant-test", base_url=server.base_url, max_retries=0)
        with warnings.catch_warnings(record=True) as raw:
            warnings.simplefilter("always")
            await client.messages.create(model=RETIRING, max_tokens=16,
                                         messages=[{"role": "user", "content": "hi"}])
        await client.close()
        assert any(issubclass(w.category, DeprecationWarning) and RETIRING in str(w.message) for w in raw)
        # ... the adapter's calls do not.
        pool = ProviderPool(RetryPolicy(max_retries=0))
        model = _model("main", RETIRING, server.base_url)
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            provider = pool.get(model)
            request = ModelRequest(model=RETIRING, system="s", messages=[Message.user("hi")], max_tokens=16)
            events = [event async for event in provider.stream(request)]
        await pool.aclose()
    assert isinstance(events[-1], ResponseDone)
    assert [str(w.message) for w in ours if "deprecated" in str(w.message)] == []


def test_a_run_on_a_deprecated_default_warns_once_with_the_setting(tmp_path: Path) -> None:
    forget_announcements()
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="LS", input={"path": "."})])),
        Step(match=Match(turn=1), reply=Reply(text="Listed.")),
    ])
    with FakeLLMServer(script) as server:
        # PYTHONWARNINGS=always would print every DeprecationWarning the SDK raises.
        env = cli_env("anthropic", server, tmp_path, AGENTCLI_MODELS__MAIN__MODEL=RETIRING, PYTHONWARNINGS="always",
                      **fake_tables_env(tmp_path / "site"))
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "list files"], env)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert last_json(proc.stdout)["result"] == "Listed."
    assert proc.stderr.count("deprecated") == 1, proc.stderr
    assert LINE in proc.stderr.splitlines()
    assert "DeprecationWarning" not in proc.stderr and "Please migrate" not in proc.stderr


def test_a_retired_model_is_one_line_naming_the_setting_and_a_current_model() -> None:
    gone = ModelNotFoundError("model: claude-gone-1", provider="anthropic", status=404)
    assert failure_line(_model("light", "claude-gone-1"), gone) == (
        "model claude-gone-1 (models.light.model) is retired or unknown to Anthropic (HTTP 404: model: claude-gone-1);"
        " set models.light.model to a current model such as claude-haiku-5-5")
    by_name = failure_line(_model("anthropic:claude-gone-1", "claude-gone-1"), gone)
    assert by_name.startswith("model anthropic:claude-gone-1 is retired or unknown to Anthropic")
    assert "ask for a current model such as claude-sonnet-5-5 instead (the agent file's or Task call's model" in by_name
    # agentcli's own default is never offered as the replacement of itself, nor an Anthropic model to a server
    assert "such as" not in failure_line(_model("main", "claude-sonnet-5-5"), gone)
    openai = ModelNotFoundError("The model `gpt-x` does not exist.", provider="openai", status=404)
    assert failure_line(_model("main", "gpt-x", provider="openai"), openai) == (
        "model gpt-x (models.main.model) is retired or unknown to OpenAI (HTTP 404: The model `gpt-x` does not exist.);"
        " set models.main.model to a current model")


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_run_on_a_retired_model_ends_with_that_line_and_keeps_the_session(api: str, tmp_path: Path) -> None:
    """The API's answer for a retired model, as recorded (tests/llm/recordings/*retired*, *model_not_found*)."""
    model = "claude-gone-1" if api == "anthropic" else "gone-1"
    openai_words = f"The model `{model}` does not exist or you do not have access to it."
    message = f"model: {model}" if api == "anthropic" else openai_words
    script = Script(steps=[Step(fault=Fault(kind="http", status=404, message=message))])
    with FakeLLMServer(script) as server:
        env = cli_env(api, server, tmp_path, AGENTCLI_MODELS__MAIN__MODEL=model)
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "hi"], env)
    assert proc.returncode == 1
    result = last_json(proc.stdout)
    who = "Anthropic" if api == "anthropic" else "OpenAI"
    line = f"(models.main.model) is retired or unknown to {who} (HTTP 404: {message}); set models.main.model to"
    assert result["is_error"] is True and line in result["error"]
    assert proc.stderr.count("retired or unknown") == 1 and "Traceback" not in proc.stderr, proc.stderr
    with db(tmp_path) as conn:
        query = "SELECT status, error FROM sessions WHERE id = ?"
        status, error = conn.execute(query, (result["session_id"],)).fetchone()
    assert status == "failed" and line in error
