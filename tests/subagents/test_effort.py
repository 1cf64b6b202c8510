"""`effort` (low | medium | high): validated on a Task call, read from agent files, mapped per provider."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentcli.events import TextDeltaEvent, ThinkingDeltaEvent
from agentcli.llm.anthropic import request_params
from agentcli.llm.base import Message, ModelRequest
from agentcli.llm.models import EFFORT_BUDGETS, ResolvedModel, with_effort
from agentcli.oneshot.text_printer import TextPrinter
from agentcli.subagents.definitions.agent_files import parse_agent_file
from agentcli.subagents.task_tool import TaskArgs, invalid_parameters


def _model(provider: str = "anthropic", max_out: int = 32000, thinking: str = "") -> ResolvedModel:
    return ResolvedModel("light", provider, "m", None, "k", max_out, thinking=thinking)  # type: ignore[arg-type]


def test_task_args_accept_the_three_levels_and_refuse_others() -> None:
    base = {"description": "Look into it", "prompt": "p", "subagent_type": "explore"}
    for level in ("low", "medium", "high"):
        assert TaskArgs.model_validate({**base, "effort": level}).effort == level
    assert TaskArgs.model_validate(base).effort is None
    with pytest.raises(ValidationError) as caught:
        TaskArgs.model_validate({**base, "effort": "max"})
    assert invalid_parameters(caught.value) == "Invalid parameters: effort: Input should be 'low', 'medium' or 'high'"
    assert "effort" in TaskArgs.model_json_schema()["properties"]


@pytest.mark.parametrize(("level", "budget"), list(EFFORT_BUDGETS.items()))
def test_anthropic_effort_is_a_thinking_budget(level: str, budget: int) -> None:
    model = with_effort(_model(), level)
    assert (model.thinking, model.thinking_budget_tokens, model.effort) == ("on", budget, level)
    params = request_params(ModelRequest(model="m", system="", messages=[Message.user("hi")], max_tokens=32000,
                                         thinking=model.thinking, thinking_budget_tokens=model.thinking_budget_tokens,
                                         effort=model.effort))
    assert params["thinking"] == {"type": "enabled", "budget_tokens": budget} and "output_config" not in params


def test_anthropic_effort_overrides_thinking_off_but_keeps_adaptive_and_leaves_room_for_the_answer() -> None:
    assert with_effort(_model(thinking="off"), "low").thinking == "on"
    adaptive = with_effort(_model(thinking="adaptive"), "high")
    assert (adaptive.thinking, adaptive.effort) == ("adaptive", "high")
    assert with_effort(_model(max_out=4096), "high").thinking_budget_tokens == 4096 - 1024
    small = _model(max_out=1500)
    assert with_effort(small, "high") is small  # no room for the API's minimum budget: left as configured


@pytest.mark.parametrize("provider", ["openai", "openai-compatible"])
def test_openai_effort_is_reasoning_effort(provider: str) -> None:
    model = with_effort(_model(provider), "medium")
    assert (model.reasoning_effort, model.thinking) == ("medium", "")
    assert with_effort(model, None) is model


def test_agent_file_effort_is_read_and_a_bad_one_warns(tmp_path: Path) -> None:
    good = tmp_path / "a.md"
    good.write_text("---\nname: a\ndescription: d\neffort: High\n---\nbody\n")
    bad = tmp_path / "b.md"
    bad.write_text("---\nname: b\ndescription: d\neffort: [1]\n---\nbody\n")
    agent = parse_agent_file(good, scope="project", file_format="claude")
    assert agent.effort == "high" and agent.as_dict()["effort"] == "high" and not agent.warnings
    other = parse_agent_file(bad, scope="project", file_format="claude")
    assert other.effort is None and other.warnings


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_verbose_text_output_dims_thinking_on_a_terminal_and_keeps_stdout_for_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    out, err = io.StringIO(), _Terminal()
    printer = TextPrinter(out, err, verbose=True)
    printer(ThinkingDeltaEvent(session_id="s", text="first line\nsecond \x1b[31mline"))
    printer(TextDeltaEvent(session_id="s", text="Answer."))
    assert out.getvalue() == "Answer."
    # Dimmed, prefixed, continuation lines indented; the model's own escape is shown as a symbol, not obeyed.
    assert err.getvalue() == "\x1b[2mthinking: first line\n  second \u241b[31mline\x1b[22m\n"
    quiet_out, quiet_err = io.StringIO(), _Terminal()
    quiet = TextPrinter(quiet_out, quiet_err)
    quiet(ThinkingDeltaEvent(session_id="s", text="hidden"))
    quiet(TextDeltaEvent(session_id="s", text="Answer."))
    assert quiet_out.getvalue() == "Answer." and quiet_err.getvalue() == ""
