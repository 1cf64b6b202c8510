"""Which reasoning goes back to DeepSeek as `reasoning_content`, and that nothing goes to anyone else."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.llm.base import Message, ModelRequest, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentcli.llm.openai import request_params

SIGNED = ThinkingBlock(thinking="signed by Anthropic", signature="EqQBCgIYAhIMsig")


def _history() -> list[Message]:
    return [
        Message.user("first prompt"),
        Message(role="assistant", content=[TextBlock(text="An earlier answer.")]),
        Message.user("second prompt"),
        Message(role="assistant", content=[ThinkingBlock(thinking="Earlier reasoning."), TextBlock(text="Done.")]),
        Message.user("third prompt"),
        Message(role="assistant", content=[SIGNED, ThinkingBlock(thinking="Read it first."),
                                           ToolUseBlock(id="call_1", name="Read", input={"file_path": "a"})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="call_1", content="alpha")]),
    ]


def _assistant_reasoning(model: str, *, compatible: bool = True) -> list[Any]:
    params = request_params(ModelRequest(model=model, system="s", messages=_history()), compatible=compatible)
    return [m.get("reasoning_content", "<absent>") for m in params["messages"] if m["role"] == "assistant"]


def test_deepseek_v4_gets_reasoning_content_on_every_assistant_message() -> None:
    assert _assistant_reasoning("deepseek-v4-pro") == ["", "Earlier reasoning.", "Read it first."]


@pytest.mark.parametrize("model", ["deepseek-reasoner", "deepseek-ai/DeepSeek-V3.2"])
def test_deepseek_gets_only_the_tool_loops_reasoning(model: str) -> None:
    assert _assistant_reasoning(model) == ["<absent>", "<absent>", "Read it first."]


@pytest.mark.parametrize("model", ["qwen3:8b", "gpt-oss-20b", "magistral-medium-latest"])
def test_other_servers_never_get_reasoning_back(model: str) -> None:
    assert _assistant_reasoning(model) == ["<absent>"] * 3


def test_openai_itself_never_gets_reasoning_content() -> None:
    assert _assistant_reasoning("deepseek-v4-pro", compatible=False) == ["<absent>"] * 3
