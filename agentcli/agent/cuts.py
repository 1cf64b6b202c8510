"""Why a reply was cut, and the one line that says so: the output limit, the context window, or a server's own.

A reply that stops with `max_tokens` (OpenAI's `finish_reason: length`) is read against its usage: when the
request and the reply filled the window agentcli keeps, the window ran out (`full`: compaction follows); when an
OpenAI-compatible server stopped it far below the `max_tokens` it was sent, the server's own window (or limit)
ran out, which agentcli does not know (`short`); else it is the output limit, as it says.
"""

from __future__ import annotations

from typing import Literal

from agentcli.llm import ModelResponse, StopReason, ToolUseBlock

CutKind = Literal["", "reported", "full", "short"]

#: Told to the model when the turn goes on after a cut reply was compacted away.
CONTEXT_CUT_NOTICE = (
    "<system-notice>Your last reply was cut because the context window was full; older context has been compacted. "
    "Continue from where your reply stopped.</system-notice>"
)
FULL_SHARE = 0.95  # request and reply past this share of the window: the window ran out
AT_LIMIT_SHARE = 0.98  # a reply this close to max_tokens: the output limit, as the finish reason says


def cut_kind(response: ModelResponse, *, window: int, max_tokens: int, compatible: bool) -> tuple[CutKind, int]:
    """Why `response` was cut, with the tokens of its request and itself: "reported" (the provider said the window
    was full), "full", "short" (see the module docstring) or "" (not cut, or at the output limit). `window`: the
    window agentcli keeps (0: none watched); `compatible`: an OpenAI-compatible server answered."""
    usage = response.usage
    used = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens + usage.output_tokens
    if response.stop_reason == "model_context_window_exceeded":
        return "reported", used
    if response.stop_reason != "max_tokens" or not usage.output_tokens:
        return "", 0
    if usage.output_tokens >= AT_LIMIT_SHARE * max_tokens:
        return "", 0
    if window and used >= FULL_SHARE * window:
        return "full", used
    if compatible and usage.output_tokens < max_tokens // 2:
        return "short", used
    return "", 0


def cut_calls(calls: list[ToolUseBlock], stop_reason: StopReason) -> list[ToolUseBlock]:
    """`calls` of a reply cut mid-arguments, each whose input did not parse saying why, so the model can redo it."""
    if stop_reason not in ("max_tokens", "model_context_window_exceeded"):
        return calls
    cut = ("the call was cut at the output token limit" if stop_reason == "max_tokens"
           else "the call was cut: the context window was full")
    return [
        c.model_copy(update={"input_error": f"{cut} ({c.input_error})"}) if c.input_error is not None else c
        for c in calls
    ]


def window_words(window: int, source: str) -> str:
    """`the context window (8192 tokens, server: llama.cpp /props)`; without one, the model's."""
    return f"the context window ({window} tokens, {source})" if window else "the model's context window"


def full_line(window: str, used: int, compacted: bool) -> str:
    """The window ran out: what was done about it."""
    return f"the reply was cut: {window} is full ({used} tokens with the reply); " + (
        "older context was compacted and the turn goes on" if compacted
        else "nothing is left to compact: give the model a larger window or start a new session")


def short_line(output: int, max_tokens: int, used: int, window: str, model: str) -> str:
    """A server stopped the reply far below max_tokens: not agentcli's output limit, most likely its window."""
    return (f"the reply was cut by the server after {output} tokens, far below max_output_tokens = {max_tokens}: its "
            f"own limit ran out at {used} tokens with the request, most likely its context window (agentcli keeps "
            f"{window}); set context_window for {model}")


def unfit_line(window: str, fixed: int, threshold: float, *, lean: bool) -> str:
    """The one line saying `window` (its words) cannot hold the fixed prompt of `fixed` tokens: compaction keeps the
    context under `threshold` of the window and could never make room, so every request would be compacted."""
    need = -(-int(2 * fixed / threshold) // 1024) * 1024  # room for the conversation as well, in whole KiB
    prompt = "lean prompt" if lean else "prompt"
    line = (f"{window} cannot hold agentcli's fixed {prompt}: the system prompt and the tool definitions alone take "
            f"about {fixed} tokens, more than the {threshold:.0%} of the window compaction keeps a request under, so "
            f"every request would be compacted and still not fit. Give the model a window of at least {need} tokens")
    if not lean:
        line += " or let agentcli use its lean prompt ([context] lean_below_tokens above the window)"
    return line
