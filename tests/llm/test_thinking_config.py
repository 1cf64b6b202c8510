"""`[models.X] thinking` and `reasoning_effort`: from the config file to the request body, through the real SDKs."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.config.load import ConfigError, load_config
from agentcli.events import Event, NoticeEvent
from agentcli.llm.deprecation import forget_announcements, thinking_line
from agentcli.llm.models import ProviderPool, ResolvedModel, resolve_model
from agentcli.testing.fake_llm import FakeLLMServer, Reply, Script, Step
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from tests.llm.sdk_tables import ADAPTIVE_ONLY, use_fake_tables


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(Script(steps=[Step(reply=Reply(text="ok"), times=None)])) as srv:
        yield srv


def _resolved(tmp_path: Path, server: FakeLLMServer, toml: str, api: str = "anthropic") -> ResolvedModel:
    (tmp_path / ".agentcli").mkdir(exist_ok=True)
    (tmp_path / ".agentcli" / "config.toml").write_text(toml)
    if api == "anthropic":
        env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": server.base_url}
    else:
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url + "/v1"}
    return resolve_model("main", load_config(workspace=tmp_path, env=env, trusted=True).settings, env)


async def _body(model: ResolvedModel, pool: ProviderPool, server: FakeLLMServer, tmp_path: Path,
                events: list[Event] | None = None) -> dict[str, Any]:
    session = Session(system_prompt="s", model=model, workspace=tmp_path)
    ctx = ToolContext(workspace=tmp_path, agent="main", session_id=session.id,
                      permissions=PermissionPolicy("auto"), file_locks=FileLocks())
    sink = events.append if events is not None else (lambda e: None)
    await AgentLoop(session, pool.get(model), [], ctx, sink).run("hi")
    body: dict[str, Any] = server.requests[-1].body
    return body


@pytest.mark.parametrize(("mode", "expected"), [
    ("", None),
    ("off", {"type": "disabled"}),
    ("on", {"type": "enabled", "budget_tokens": 2048}),
    ("adaptive", {"type": "adaptive"}),
])
async def test_thinking_mode_reaches_the_anthropic_request(
    mode: str, expected: Any, server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    model = _resolved(tmp_path, server, f'[models.main]\nthinking = "{mode}"\nthinking_budget_tokens = 2048\n')
    body = await _body(model, pool, server, tmp_path)
    assert body.get("thinking") == expected


@pytest.mark.parametrize("effort", ["", "low", "high"])
async def test_reasoning_effort_reaches_the_openai_request(
    effort: str, server: FakeLLMServer, pool: ProviderPool, tmp_path: Path
) -> None:
    toml = f'[models.main]\nprovider = "openai"\nmodel = "gpt-5"\nreasoning_effort = "{effort}"\n'
    body = await _body(_resolved(tmp_path, server, toml, "openai"), pool, server, tmp_path)
    assert body.get("reasoning_effort") == (effort or None)
    assert "thinking" not in body


def test_a_budget_above_max_output_tokens_is_one_line(tmp_path: Path) -> None:
    (tmp_path / ".agentcli").mkdir()
    (tmp_path / ".agentcli" / "config.toml").write_text(
        '[models.light]\nthinking = "on"\nthinking_budget_tokens = 9000\n')
    with pytest.raises(ConfigError) as caught:
        load_config(workspace=tmp_path, env={}, trusted=True)  # untrusted, a raised budget would be ignored
    message = str(caught.value)
    assert "models.light.thinking_budget_tokens" in message and "max_output_tokens" in message
    assert "\n" not in message
    (tmp_path / ".agentcli" / "config.toml").write_text('[models.main]\nthinking = "maybe"\n')
    with pytest.raises(ConfigError, match=r"models\.main\.thinking"):
        load_config(workspace=tmp_path, env={})


async def test_thinking_on_where_the_sdk_wants_adaptive_is_one_notice(
    server: FakeLLMServer, pool: ProviderPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forget_announcements()
    use_fake_tables(monkeypatch)  # the SDK warns for the fake table's model, and agentcli reads the same table
    toml = f'[models.main]\nmodel = "{ADAPTIVE_ONLY}"\nthinking = "on"\n'
    model = _resolved(tmp_path, server, toml)
    assert thinking_line(model) == (
        f'model {ADAPTIVE_ONLY} wants adaptive thinking; set models.main.thinking = "adaptive" instead of "on"')
    events: list[Event] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await _body(model, pool, server, tmp_path, events)
    assert [e.message for e in events if isinstance(e, NoticeEvent)] == [thinking_line(model)]
    assert [str(w.message) for w in caught if "thinking" in str(w.message)] == []
