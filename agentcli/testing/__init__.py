"""Test doubles that ship with agentcli: the fake LLM server speaking both providers' wire formats over HTTP
(`fake_llm`, its scripts and models) and the in-process scripted provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.testing.fake_llm import FakeLLMServer
    from agentcli.testing.fake_llm_models import Match, Reply, Script, Step, ToolCall

__all__ = [
    "FakeLLMServer",
    "Match",
    "Reply",
    "Script",
    "Step",
    "ToolCall",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.testing.fake_llm": ["FakeLLMServer"],
    "agentcli.testing.fake_llm_models": ["Match", "Reply", "Script", "Step", "ToolCall"],
})
