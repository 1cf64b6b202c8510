"""Provider-neutral request, response, stream-event and error types, and the Provider protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from agentcli.llm.usage import Usage

ProviderName = Literal["anthropic", "openai", "openai-compatible"]
PROVIDERS: tuple[ProviderName, ...] = ("anthropic", "openai", "openai-compatible")
StopReason = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "refusal",
    "pause_turn",
    "model_context_window_exceeded",
    "other",
]


# --- conversation content (persisted, so pydantic) -------------------------------------------


class TextBlock(BaseModel):
    """Plain text from the user or the model."""

    model_config = ConfigDict(frozen=True)
    type: Literal["text"] = "text"
    text: str


class ToolUseBlock(BaseModel):
    """A tool call made by the model; `input_error` is set when its arguments were not valid JSON."""

    model_config = ConfigDict(frozen=True)
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    input_error: str | None = None


class ImageBlock(BaseModel):
    """An image the model sees: a PNG, JPEG, GIF or WebP as base64, already within the providers' limits
    (`llm/images.prepare_image`); `source` says where it came from (a path, `clipboard`) for placeholders."""

    model_config = ConfigDict(frozen=True)
    type: Literal["image"] = "image"
    media_type: str
    data: str
    source: str = ""
    width: int = 0
    height: int = 0

    def placeholder(self) -> str:
        """What stands for it where the image is no longer sent (after compaction, to a model without images)."""
        size = f", {self.width}×{self.height}" if self.width else ""
        return f"[image {self.source or 'attached'}{size}: no longer attached]"


class ToolResultBlock(BaseModel):
    """The result of a tool call, sent back to the model in a user message (`images`: what it shows, as Read of
    an image file does)."""

    model_config = ConfigDict(frozen=True)
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool = False
    images: list[ImageBlock] = Field(default_factory=list)


class ThinkingBlock(BaseModel):
    """The model's reasoning, kept apart from its answer and sent back unchanged (Anthropic needs the signature).

    `signature` is empty for reasoning from other providers (`reasoning_content`, Mistral thinking parts),
    which is kept in the history but never sent to Anthropic.
    """

    model_config = ConfigDict(frozen=True)
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(BaseModel):
    """Reasoning Anthropic's safety systems encrypted: opaque, sent back exactly as received."""

    model_config = ConfigDict(frozen=True)
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock | ImageBlock
AssistantBlock = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock


class Message(BaseModel):
    """One conversation message in the provider-neutral form (a person's message may hold images)."""

    role: Literal["user", "assistant"]
    content: list[
        TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock | ImageBlock
    ] = Field(default_factory=list)

    @classmethod
    def user(cls, text: str) -> Message:
        """A user message holding one text block."""
        return cls(role="user", content=[TextBlock(text=text)])

    def text(self) -> str:
        """All text blocks joined."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls in this message, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]


# --- history validity --------------------------------------------------------------------------

# What an assistant turn that produced nothing is recorded as (both APIs reject an empty message).
EMPTY_TURN_TEXT: dict[str, str] = {
    "end_turn": "(empty response: the model returned no text)",
    "refusal": "(the model refused to answer)",
    "max_tokens": "(no text: the reply was cut at the token limit)",
    "model_context_window_exceeded": "(no text: the context window was full)",
}
_EMPTY_USER_TEXT = "(empty message)"


def _blank(text: str) -> bool:
    return not text or text.isspace()


def _substantial(block: object) -> bool:
    """A block that makes a message non-empty: text beyond whitespace, a tool call or a tool result."""
    if isinstance(block, TextBlock):
        return not _blank(block.text)
    return isinstance(block, ToolUseBlock | ToolResultBlock | ImageBlock)


def sendable(messages: Sequence[Message]) -> list[Message]:
    """The history as the APIs accept it: no empty or whitespace-only text block, no empty message.

    Messages stored by an older agentcli (or cut off mid-turn) may break these rules; they are
    repaired on the way out, never in the store. Thinking blocks stay where they are.
    """
    out: list[Message] = []
    for message in messages:
        blank = any(isinstance(b, TextBlock) and _blank(b.text) for b in message.content)
        if not blank and any(_substantial(b) for b in message.content):
            out.append(message)
            continue
        content = [b for b in message.content if not (isinstance(b, TextBlock) and _blank(b.text))]
        if not any(_substantial(b) for b in content):
            filler = EMPTY_TURN_TEXT["end_turn"] if message.role == "assistant" else _EMPTY_USER_TEXT
            content.append(TextBlock(text=filler))
        out.append(Message(role=message.role, content=content))
    return out


# --- requests and responses --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model."""

    name: str
    description: str
    input_schema: dict[str, Any]
    # A provider may end a cached prefix after this tool: the end of the head a read-only subagent's list
    # shares with every other agent's (the read-only tools and those every agent has: `tools.base.tool_specs`).
    cache_break: bool = False


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request to a model."""

    model: str
    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    max_tokens: int = 4096
    temperature: float | None = None
    thinking: str = ""  # "" (the model's default) | off | on | adaptive: Anthropic's `thinking`
    thinking_budget_tokens: int = 0
    reasoning_effort: str = ""  # OpenAI's `reasoning_effort` ("" = not sent)
    effort: str = ""  # Anthropic's `output_config.effort`, sent with adaptive thinking only ("" = not sent)
    # How many leading characters of `system` stay the same from day to day and commit to commit (the rest:
    # the date, the git status, a subagent's task); a provider may cache them apart. 0: no such split.
    system_stable: int = 0


CHARS_PER_TOKEN = 4  # the estimate where no count is known (no tokenizer is available offline)


def tokens_for_chars(chars: int) -> int:
    """Estimated tokens of `chars` characters of text, rounded up."""
    return -(-chars // CHARS_PER_TOKEN)


@dataclass(slots=True)
class ModelResponse:
    """A finished model turn."""

    content: list[AssistantBlock]
    stop_reason: StopReason
    usage: Usage
    model: str
    request_id: str | None = None

    def message(self) -> Message:
        """The turn as an assistant message for the history: never empty, no whitespace-only text.

        A turn that produced nothing (an empty reply, a refusal without text, a reply cut before any
        text) is recorded as a short note saying so, which keeps every later request valid.
        """
        content: list[TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock] = [
            b for b in self.content if not (isinstance(b, TextBlock) and _blank(b.text))
        ]
        if self.empty:  # thinking alone is not an answer: say what the turn was
            content.append(TextBlock(text=EMPTY_TURN_TEXT.get(self.stop_reason, EMPTY_TURN_TEXT["end_turn"])))
        return Message(role="assistant", content=content)

    @property
    def empty(self) -> bool:
        """True when the turn produced neither text (beyond whitespace) nor tool calls (thinking does not count)."""
        return not any(_substantial(b) for b in self.content)

    def thinking(self) -> str:
        """The turn's readable reasoning, kept apart from its text."""
        return "".join(b.thinking for b in self.content if isinstance(b, ThinkingBlock))

    def text(self) -> str:
        """All text of the turn."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        """Tool calls of the turn, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]


# --- stream events (hot path: plain dataclasses) -----------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of assistant text."""

    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's reasoning (never part of the answer)."""

    text: str
    kind: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """The model began a tool call."""

    index: int
    id: str
    name: str
    kind: Literal["tool_call_start"] = "tool_call_start"


@dataclass(frozen=True, slots=True)
class ToolCallArgsDelta:
    """A piece of a tool call's JSON arguments."""

    index: int
    partial_json: str
    kind: Literal["tool_call_args_delta"] = "tool_call_args_delta"


@dataclass(frozen=True, slots=True)
class StreamUsage:
    """Usage the provider reported before the turn ended (Anthropic's `message_start`: the input side).

    What a request that never finishes (stopped mid-stream) is counted by; the final usage is the response's.
    """

    usage: Usage
    kind: Literal["stream_usage"] = "stream_usage"


@dataclass(frozen=True, slots=True)
class StreamRetry:
    """The request failed and will be retried; output streamed so far by this attempt is void."""

    attempt: int
    delay_seconds: float
    error: ProviderError
    kind: Literal["stream_retry"] = "stream_retry"


@dataclass(frozen=True, slots=True)
class ResponseDone:
    """The stream finished; carries the assembled response."""

    response: ModelResponse
    kind: Literal["response_done"] = "response_done"


StreamEvent = TextDelta | ThinkingDelta | ToolCallStart | ToolCallArgsDelta | StreamUsage | StreamRetry | ResponseDone


# --- errors ------------------------------------------------------------------------------------


class ProviderError(Exception):
    """A model request failed; `str()` is a one-line message for the person."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        from agentcli.redact import mask  # configured keys never reach a person, a log or the store

        message = mask(message)
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.retry_after = retry_after

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status else ""
        return f"{self.provider}: {self.message}{status}"


class MissingCredentialsError(ProviderError):
    """No API key or server configured for a model."""

    def __str__(self) -> str:
        return self.message


class AuthenticationError(ProviderError):
    """The key was refused (401/403)."""


class BadRequestError(ProviderError):
    """The request was refused as malformed or too large (400/404/413/422)."""


class ModelNotFoundError(BadRequestError):
    """The provider does not serve the model asked for: retired, misspelt, or not on this account or server."""


class ContextOverflowError(BadRequestError):
    """The request was refused because the conversation does not fit the model's context window."""


class RateLimitError(ProviderError):
    """429: too many requests."""

    retryable = True


class OverloadedError(ProviderError):
    """529 or an `overloaded_error`, also one inside a 200 stream."""

    retryable = True


class ServerError(ProviderError):
    """5xx from the provider."""

    retryable = True


class ProviderConnectionError(ProviderError):
    """The server could not be reached or did not answer in time."""

    retryable = True


class StreamInterruptedError(ProviderError):
    """The response stream ended before the model finished its turn."""


class ReplyTooLargeError(ProviderError):
    """A reply's event stream passed the size one reply may take (`llm.sse.stream_byte_limit`): it was cut."""


# --- protocol ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Backoff for retryable provider errors."""

    max_retries: int = 4
    initial_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.2

    def delay(self, attempt: int, error: ProviderError) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        import random

        if error.retry_after is not None:
            return max(0.0, min(error.retry_after, 60.0))
        base = min(self.max_delay, self.initial_delay * 2.0 ** (attempt - 1))
        return base * (1 + random.uniform(-self.jitter, self.jitter))


class Provider(Protocol):
    """A thin adapter over one vendor SDK client."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one model turn; the last event is `ResponseDone`; retries are announced by `StreamRetry`."""
        ...


@dataclass(slots=True)
class ToolCallAccumulator:
    """Assembles streamed tool calls; tolerant of sloppy OpenAI-compatible deltas."""

    ids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    args: list[list[str]] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)  # index -> why the server could not parse the call

    def start(self, call_id: str, name: str) -> int:
        """Register a new call and return its index."""
        self.ids.append(call_id)
        self.names.append(name)
        self.args.append([])
        return len(self.ids) - 1

    def add_args(self, index: int, fragment: str) -> None:
        """Append an arguments fragment to call `index`."""
        self.args[index].append(fragment)

    def blocks(self) -> list[ToolUseBlock]:
        """The finished calls, with arguments parsed."""
        import json

        out: list[ToolUseBlock] = []
        for index, (call_id, name, parts) in enumerate(zip(self.ids, self.names, self.args, strict=True)):
            if index in self.failed:
                out.append(ToolUseBlock(id=call_id, name=name, input={}, input_error=self.failed[index]))
                continue
            raw = "".join(parts).strip()
            if not raw:
                out.append(ToolUseBlock(id=call_id, name=name, input={}))
                continue
            try:
                parsed = json.loads(raw)
            except json.JSONDecodeError as exc:
                out.append(
                    ToolUseBlock(
                        id=call_id, name=name, input={}, input_error=f"arguments are not valid JSON: {exc}"
                    )
                )
                continue
            if isinstance(parsed, dict):
                out.append(ToolUseBlock(id=call_id, name=name, input=parsed))
            else:
                out.append(
                    ToolUseBlock(
                        id=call_id,
                        name=name,
                        input={},
                        input_error=f"arguments must be a JSON object, got {type(parsed).__name__}",
                    )
                )
        return out
