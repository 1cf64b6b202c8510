"""Provider error classification: a request too long for the window is told apart from other 4xx errors."""

from __future__ import annotations

import pytest

from agentcli.llm.base import BadRequestError, ContextOverflowError, RateLimitError
from agentcli.llm.errors import classify


@pytest.mark.parametrize(
    ("status", "kind", "message"),
    [
        (400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum"),
        (400, "context_length_exceeded", "This model's maximum context length is 128000 tokens."),
        (400, None, "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens"),
        (400, None, "the request exceeds the available context size, try increasing it"),
        # llama.cpp's server, word for word (tools/server/server.cpp of the llama-cpp-python 0.3.16 sdist)
        (400, "invalid_request_error", "the request exceeds the available context size. try increasing the context "
                                       "size or enable context shift"),
        (500, "server_error", "input is larger than the max context size. skipping"),
        (400, "exceed_context_size_error", "request (9000 tokens) exceeds the available context size (8192 tokens)"),
        (413, "request_too_large", "input is too long for requested model"),
    ],
)
def test_context_overflow_is_its_own_error(status: int, kind: str | None, message: str) -> None:
    error = classify("anthropic", status, kind, message)
    assert isinstance(error, ContextOverflowError) and not error.retryable


@pytest.mark.parametrize(
    ("status", "kind", "message", "cls"),
    [
        (400, "invalid_request_error", "messages.0.content: field required", BadRequestError),
        (429, "rate_limit_error", "too many tokens per minute", RateLimitError),
    ],
)
def test_other_errors_are_not_overflow(status: int, kind: str, message: str, cls: type) -> None:
    error = classify("openai", status, kind, message)
    assert type(error) is cls
