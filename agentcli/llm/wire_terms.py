"""What each API's stop reasons and usage mean in agentcli's terms.

SDK-free, so the adapters (`llm/anthropic.py`, `llm/openai.py`) and the in-process scripted provider
(`agentcli/testing/scripted.py`) read the wire the same way.
"""

from __future__ import annotations

from typing import Any

from agentcli.llm.base import StopReason
from agentcli.llm.usage import Usage

ANTHROPIC_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
    "model_context_window_exceeded": "model_context_window_exceeded",
}
OPENAI_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def field(obj: Any, name: str) -> Any:
    """A field of an SDK object or of a plain dict (vendor extras arrive as dicts)."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def openai_usage(usage: Any) -> Usage:
    """An OpenAI-style `usage` object (or dict) in the ledger's terms: input apart from cache reads and writes.

    Cached prompt tokens come as `prompt_tokens_details.cached_tokens` (DeepSeek: `prompt_cache_hit_tokens`),
    cache writes as `prompt_tokens_details.cache_write_tokens` (OpenRouter) or `cache_creation_input_tokens`
    (LiteLLM proxying Claude); all of them are inside `prompt_tokens`. Reasoning is part of `completion_tokens`.
    """
    details = field(usage, "prompt_tokens_details")
    cached = (field(details, "cached_tokens") or 0) if details is not None else 0
    written = (field(details, "cache_write_tokens") or 0) if details is not None else 0
    written = written or field(usage, "cache_creation_input_tokens") or 0
    if not cached:
        cached = field(usage, "prompt_cache_hit_tokens") or 0
    prompt = field(usage, "prompt_tokens") or 0
    out_details = field(usage, "completion_tokens_details")
    reasoning = (field(out_details, "reasoning_tokens") or 0) if out_details is not None else 0
    return Usage(
        input_tokens=max(prompt - cached - written, 0),
        output_tokens=field(usage, "completion_tokens") or 0,
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=reasoning,
    )
