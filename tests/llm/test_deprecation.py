"""A deprecated model: one agentcli line naming the setting, never the SDK's own DeprecationWarning."""

from __future__ import annotations

import warnings
from pathlib import Path

import anthropic

from agentcli.llm.base import Message, ModelRequest, ResponseDone, RetryPolicy
from agentcli.llm.deprecation import deprecation_line, end_of_life
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import cli_env, last_json, run_cli

OLD = "claude-sonnet-4-5"
LINE = (
    "agentcli: warning: model claude-sonnet-4-5 (models.main.model) is deprecated by Anthropic "
    "(end of life 2026-11-30); set models.main.model to a current model"
)


def _model(label: str, name: str, base_url: str = "http://127.0.0.1:9") -> ResolvedModel:
    return ResolvedModel(label, "anthropic", name, base_url, "sk-ant-test", 256)


def test_the_line_names_the_setting_that_chose_the_model() -> None:
    assert end_of_life("anthropic", OLD) == "2026-11-30"
    assert end_of_life("anthropic", "claude-sonnet-5-5") is None
    assert end_of_life("openai", OLD) is None
    assert deprecation_line(_model("main", OLD)) == LINE.removeprefix("agentcli: warning: ")
    light = deprecation_line(_model("light", "claude-sonnet-4-5-20250929"))
    assert light is not None and "(models.light.model)" in light and "set models.light.model to" in light
    other = deprecation_line(_model("anthropic:claude-sonnet-4-5", OLD))
    assert other is not None and other.startswith("model anthropic:claude-sonnet-4-5 is deprecated")
    assert deprecation_line(_model("main", "claude-sonnet-5-5")) is None


async def test_the_sdk_warning_never_surfaces_from_the_adapter() -> None:
    steps = [Step(reply=Reply(text="ok"), times=2)]
    async with FakeLLMServer(Script(steps=steps)) as server:
        # The SDK itself warns on every call with this model ...
        client = anthropic.AsyncAnthropic(api_key="sk-ant-test", base_url=server.base_url, max_retries=0)
        with warnings.catch_warnings(record=True) as raw:
            warnings.simplefilter("always")
            await client.messages.create(model=OLD, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
        await client.close()
        assert any(issubclass(w.category, DeprecationWarning) and OLD in str(w.message) for w in raw)
        # ... the adapter's calls do not.
        pool = ProviderPool(RetryPolicy(max_retries=0))
        model = _model("main", OLD, server.base_url)
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            provider = pool.get(model)
            request = ModelRequest(model=OLD, system="s", messages=[Message.user("hi")], max_tokens=16)
            events = [event async for event in provider.stream(request)]
        await pool.aclose()
    assert isinstance(events[-1], ResponseDone)
    assert [str(w.message) for w in ours if "deprecated" in str(w.message)] == []


def test_a_run_on_a_deprecated_default_warns_once_with_the_setting(tmp_path: Path) -> None:
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name="LS", input={"path": "."})])),
        Step(match=Match(turn=1), reply=Reply(text="Listed.")),
    ])
    with FakeLLMServer(script) as server:
        # PYTHONWARNINGS=always would print every DeprecationWarning the SDK raises.
        env = cli_env("anthropic", server, tmp_path, AGENTCLI_MODELS__MAIN__MODEL=OLD, PYTHONWARNINGS="always")
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "list files"], env)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert last_json(proc.stdout)["result"] == "Listed."
    assert proc.stderr.count("deprecated") == 1, proc.stderr
    assert LINE in proc.stderr.splitlines()
    assert "DeprecationWarning" not in proc.stderr and "Please migrate" not in proc.stderr
