"""Script models of the fake LLM server: what to expect and how to answer.

Every model forbids unknown fields, so a typo in a script file fails loudly at load time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

ApiName = Literal["anthropic", "openai"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Match(_Strict):
    """Predicates on a request; every one that is given must hold for the step to match."""

    api: ApiName | None = None
    model: str | None = None
    system_contains: str | None = None
    tools_include: list[str] | None = None
    tools_exclude: list[str] | None = None
    no_tools: bool | None = None
    turn: int | None = Field(default=None, ge=0)
    last_user_contains: str | None = None
    any_message_contains: str | None = None
    last_user_is_tool_result: bool | None = None
    """True: the request answers tool calls; False: the last user message is a plain prompt."""


class ToolCall(_Strict):
    """One tool call in a reply; `id` defaults to `toolu_fake_N` / `call_fake_N`."""

    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    arguments_json: str | None = None
    """Raw argument text to send instead of `json.dumps(input)` (e.g. malformed JSON)."""

    def arguments_text(self) -> str:
        """The argument JSON as it goes on the wire."""
        if self.arguments_json is not None:
            return self.arguments_json
        return json.dumps(self.input)


class Usage(_Strict):
    """Token counts in Anthropic terms; OpenAI's prompt_tokens = input + cache read + cache creation."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class Reply(_Strict):
    """The assistant message to send back: thinking (if any), text, then tool calls."""

    thinking: str = ""
    """Reasoning before the answer: an Anthropic thinking block, OpenAI-compatible `reasoning_content`."""
    thinking_signature: str = ""
    """Anthropic only: the thinking block's signature ("" = no signature_delta)."""
    text: str = ""
    chunk_size: int = Field(default=8, ge=1)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    args_chunk_size: int = Field(default=8, ge=1)
    usage: Usage | None = None
    stop_reason: str | None = None
    """None = auto: tool_use / tool_calls when there are tool calls, else end_turn / stop."""
    sloppy_tool_deltas: bool = False
    """OpenAI only: like some compatible servers, omit `type`, and `index` on argument deltas."""
    sloppy_omit_index: bool = True
    """With sloppy_tool_deltas: drop `index` from argument deltas (False keeps it)."""
    echo_last_user: int = Field(default=0, ge=0)
    """Append up to this many characters of the request's last user message (e.g. tool results)."""


FaultKind = Literal["http", "stream_error", "cut", "stall"]


class Fault(_Strict):
    """A failure to inject instead of (or in the middle of) the reply."""

    kind: FaultKind
    status: int = 500
    """HTTP status for kind=http."""
    error_type: str | None = None
    """Error type in the body; None = derived from the status (http) or overloaded (stream_error)."""
    message: str | None = None
    retry_after: float | None = 0
    """Seconds for the retry-after header (None = no header)."""
    retry_after_ms: int | None = None
    """retry-after-ms header; None = derived from retry_after (1 ms when retry_after is 0)."""
    should_retry: bool | None = None
    """Sets x-should-retry, which both SDKs obey; None = no header."""
    after_events: int = Field(default=2, ge=0)
    """SSE events (ping included) sent before a stream fault strikes."""
    abort: bool = False
    """cut: abort the transport instead of closing the body cleanly."""
    seconds: float = Field(default=1.0, ge=0)
    """stall: how long to go silent."""
    then: Literal["continue", "close"] = "continue"
    """stall: go on with the reply or close the body cleanly."""


class RawFrame(_Strict):
    """One SSE event of a raw replay: `event:` line (optional) and the `data:` payload."""

    data: str | dict[str, Any] | list[Any]
    """A string goes out byte for byte; a dict or list as compact JSON."""
    event: str | None = None

    def encode(self) -> bytes:
        """The frame on the wire: `event: X\\ndata: Y\\n\\n`."""
        payload = self.data if isinstance(self.data, str) else json.dumps(self.data, separators=(",", ":"))
        head = f"event: {self.event}\n" if self.event is not None else ""
        return f"{head}data: {payload}\n\n".encode()


class Raw(_Strict):
    """A raw replay: the response exactly as recorded, instead of one built from a Reply.

    Either `frames` (an SSE stream, one write per frame, paced by chunk_delay_ms; a bare string
    is a `data:` payload) or `body` (any body, e.g. a recorded error or a whole SSE transcript,
    sent byte for byte).
    """

    status: int = Field(default=200, ge=100, le=599)
    headers: dict[str, str] = Field(default_factory=dict)
    content_type: str | None = None
    """None: text/event-stream for frames, application/json for a body."""
    frames: list[Annotated[RawFrame | str | dict[str, Any], Field(union_mode="left_to_right")]] | None = None
    """Each a RawFrame, or a bare `data:` payload: a string byte for byte, a dict as compact JSON."""
    body: str | None = None

    @model_validator(mode="after")
    def _one_of(self) -> Raw:
        if (self.frames is None) == (self.body is None):
            raise ValueError("a raw reply needs exactly one of frames or body")
        return self

    def encoded_frames(self) -> list[bytes]:
        """Each frame as the bytes written."""
        return [f.encode() if isinstance(f, RawFrame) else RawFrame(data=f).encode() for f in self.frames or ()]


class Step(_Strict):
    """One scripted exchange: which requests it answers, and how."""

    match: Match = Field(default_factory=Match)
    reply: Reply = Field(default_factory=Reply)
    raw: Raw | None = None
    """Send this recorded response byte for byte instead of `reply` (a fault may still cut its frames)."""
    fault: Fault | None = None
    latency_ms: int | None = Field(default=None, ge=0)
    chunk_delay_ms: int | None = Field(default=None, ge=0)
    hold: str | None = None
    """Answer only once the test has called `FakeLLMServer.release(hold)` (then `latency_ms` applies): a reply that
    waits for the test's state instead of a guessed latency. In process only (a script file cannot release it)."""
    times: int | None = Field(default=1, ge=1)
    """How many requests this step answers; None = unlimited."""
    optional: bool = False
    """An optional step is not reported as unused by assert_done()."""
    name: str | None = None

    def label(self, index: int) -> str:
        """`step 3` or `step 3 (name)` for messages."""
        return f"step {index}" + (f" ({self.name})" if self.name else "")


class Script(_Strict):
    """An ordered list of steps; the first matching step with uses left answers a request."""

    steps: list[Step] = Field(default_factory=list)
    # The window the server says it runs with, as llama.cpp's `/props` says it (agentcli asks an OpenAI-compatible
    # server for it); None: the server does not say (404, as a server without that endpoint answers).
    context_window: int | None = Field(None, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _accept_bare_list(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"steps": data}
        return data

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Read a script from a JSON or YAML file (`{steps: [...]}` or a bare list of steps)."""
        p = Path(path)
        text = p.read_text(encoding="utf-8")
        data = json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
        return cls.model_validate(data if data is not None else {})


class RecordedRequest(BaseModel):
    """One request the server received, as logged."""

    model_config = ConfigDict(extra="forbid")

    seq: int
    api: Literal["anthropic", "openai", "unknown"]
    method: str
    path: str
    body: Any
    headers: dict[str, str]
    stream: bool
    step_index: int | None
    unexpected: list[str] | None = None
    """Why no step matched (None when a step answered)."""
    status: int | None = None
    outcome: str | None = None
    """How the response ended: complete, http_error, stream_error, cut, aborted, client_gone, ..."""
    received_at: float
    finished_at: float | None = None
