"""`agentcli run`: one non-interactive job, printed as text, json or stream-json."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from agentcli.config import LoadedConfig
    from agentcli.llm.base import ModelResponse


@dataclass(frozen=True, slots=True)
class OneShotOptions:
    """What the person asked `agentcli run` for."""

    prompt: str
    model: str
    output_format: str  # text | json | stream-json
    approve_mutating: bool
    workspace: Path
    verbose: bool


def _emit(out: TextIO, obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    out.flush()


async def _run(loaded: LoadedConfig, options: OneShotOptions, out: TextIO, err: TextIO) -> int:
    from agentcli.llm.base import Message, ModelRequest, ProviderError, ResponseDone, StreamRetry, TextDelta
    from agentcli.llm.models import ModelSpecError, ProviderPool, resolve_model
    from agentcli.llm.prices import cost_usd
    from agentcli.prompts import render_system_prompt

    settings = loaded.settings
    try:
        model = resolve_model(options.model, settings)
    except (ProviderError, ModelSpecError) as exc:
        err.write(f"agentcli: {exc}\n")
        return 1
    pool = ProviderPool.from_settings(settings)
    request = ModelRequest(
        model=model.model,
        system=render_system_prompt(options.workspace),
        messages=[Message.user(options.prompt)],
        max_tokens=model.max_output_tokens,
    )
    fmt = options.output_format
    response: ModelResponse | None = None
    try:
        async for event in pool.get(model).stream(request):
            if isinstance(event, TextDelta):
                if fmt == "text":
                    out.write(event.text)
                    out.flush()
                elif fmt == "stream-json":
                    _emit(out, {"type": "text_delta", "text": event.text})
            elif isinstance(event, StreamRetry):
                if options.verbose or fmt == "text":
                    err.write(f"agentcli: {event.error}; retry {event.attempt} in {event.delay_seconds:.1f}s\n")
                if fmt == "stream-json":
                    _emit(out, {"type": "retry", "attempt": event.attempt, "error": str(event.error)})
            elif isinstance(event, ResponseDone):
                response = event.response
    except ProviderError as exc:
        if fmt == "text":
            out.write("\n")
        err.write(f"agentcli: {exc}\n")
        return 1
    finally:
        await pool.aclose()
    assert response is not None
    usage = response.usage
    cost = cost_usd(model.provider, response.model, usage)
    summary = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cost_usd": cost,
    }
    if fmt == "text":
        cost_text = f", ${cost:.4f}" if cost is not None else ""
        out.write(f"\n\n[{model.display} · {usage.input_tokens} in / {usage.output_tokens} out{cost_text}]\n")
    else:
        final = {
            "type": "result",
            "status": "completed",
            "result": response.text(),
            "model": model.display,
            "stop_reason": response.stop_reason,
            "usage": summary,
        }
        _emit(out, final)
    return 0


def run_oneshot(
    loaded: LoadedConfig, options: OneShotOptions, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the job to completion and return the process exit code."""
    try:
        return asyncio.run(_run(loaded, options, out or sys.stdout, err or sys.stderr))
    except KeyboardInterrupt:
        (err or sys.stderr).write("agentcli: interrupted\n")
        return 130
