"""Claude Code's stream-json wire format, both ways: the lines `run --output-format stream-json` prints
(`system` / `assistant` / `user` / `stream_event` / `result`, shaped like Claude Code's SDK messages) and the
`user` lines `run --input-format stream-json` reads.

Only shapes live here (plain dicts from agentcli's events and messages); `output.StreamJsonPrinter` decides
when each line is written. Field names follow Claude Code's documented SDK message types; agentcli's extras
are extra keys on those lines (a Claude Code reader ignores keys it does not know) or `system` lines with
their own `subtype`.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from agentcli.events import BackgroundFinishedEvent, BackgroundStartedEvent
from agentcli.llm import (
    ImageBlock,
    ImageError,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    image_from_base64,
)
from agentcli.status import RunStatus, TaskStatus
from agentcli.tools import server_of

#: A run's status as the result line's `subtype` (Claude Code's names; the rest are execution errors).
RESULT_SUBTYPES: dict[str, str] = {
    "completed": "success",
    "max_turns": "error_max_turns",
    "budget_exceeded": "error_max_budget_usd",
}
ERROR_SUBTYPE = "error_during_execution"
#: `task_type` of a subagent's `task_started` line, as Claude Code sets it (the SDK waits for such tasks to end
#: before it closes standard input); the agent type is in `subagent_type`.
TASK_TYPE = "local_agent"
#: `task_type` of a background Bash command's task lines (`Bash(run_in_background=true)`), as Claude Code sets it.
BASH_TASK_TYPE = "local_bash"
#: A finished task's status as `task_notification`'s (Claude Code: completed, failed, stopped).
TASK_NOTIFICATION_STATUS: dict[TaskStatus, str] = {
    "completed": "completed",
    "failed": "failed",
    "timed_out": "failed",
    "budget_exceeded": "failed",
    "cancelled": "stopped",
    "queued": "stopped",
    "running": "stopped",
}


def new_uuid() -> str:
    """Each line's own `uuid`, as Claude Code gives one to every message."""
    return str(uuid.uuid4())


def usage_dict(usage: Usage) -> dict[str, int]:
    """Token counts in the Anthropic Messages API's names (cache tokens apart from `input_tokens`)."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    }


def result_subtype(status: RunStatus | str) -> str:
    """`success`, `error_max_turns`, `error_max_budget_usd` or `error_during_execution`."""
    return RESULT_SUBTYPES.get(status, ERROR_SUBTYPE)


def init_line(session_id: str, *, cwd: str, model: str, tools: list[str], agents: list[str] | None = None,
              permission_mode: str = "", version: str = "") -> dict[str, Any]:
    """The first line: `{"type": "system", "subtype": "init", ...}`."""
    line: dict[str, Any] = {
        "type": "system", "subtype": "init", "uuid": new_uuid(), "session_id": session_id,
        "cwd": cwd, "model": model, "tools": tools,
        # The servers whose tools the agent is offered: they started and listed them (one that failed is a notice).
        "mcp_servers": [{"name": name, "status": "connected"}
                        for name in sorted({server_of(tool) or "" for tool in tools} - {""})],
    }
    if agents is not None:
        line["agents"] = agents
    if permission_mode:
        line["permission_mode"] = permission_mode  # agentcli's mode name (ask, accept_edits, auto, readonly)
    if version:
        line["agentcli_version"] = version
    return line


def image_param(image: ImageBlock) -> dict[str, Any]:
    """An image as an Anthropic content block (base64 source)."""
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}}


def content_blocks(message: Message) -> list[dict[str, Any]]:
    """A message's blocks as Anthropic content blocks (text, thinking, tool_use, tool_result)."""
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolUseBlock):
            blocks.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
        elif isinstance(block, ToolResultBlock):
            content: str | list[dict[str, Any]] = block.content
            if block.images:  # Claude Code's shape for a Read of an image: text, then the images
                content = [{"type": "text", "text": block.content}, *map(image_param, block.images)]
            blocks.append({"type": "tool_result", "tool_use_id": block.tool_use_id, "content": content,
                           "is_error": block.is_error})
        elif isinstance(block, ImageBlock):
            blocks.append(image_param(block))
        elif isinstance(block, ThinkingBlock):
            blocks.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
        elif isinstance(block, RedactedThinkingBlock):
            blocks.append({"type": "redacted_thinking", "data": block.data})
    return blocks


def assistant_line(message: Message, *, session_id: str, parent_tool_use_id: str | None, model: str,
                   usage: Usage | None) -> dict[str, Any]:
    """An assistant message: `{"type": "assistant", "message": {Anthropic message}, ...}`."""
    return {
        "type": "assistant",
        "message": {
            "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
            "content": content_blocks(message), "stop_reason": None, "stop_sequence": None,
            "usage": usage_dict(usage or Usage()),
        },
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
        "uuid": new_uuid(),
    }


def user_line(message: Message, *, session_id: str, parent_tool_use_id: str | None) -> dict[str, Any]:
    """A user message (tool results; a subagent's prompt): `{"type": "user", "message": {...}, ...}`."""
    return {
        "type": "user",
        "message": {"role": "user", "content": content_blocks(message)},
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
        "uuid": new_uuid(),
    }


def system_line(subtype: str, session_id: str, **fields: Any) -> dict[str, Any]:
    """A `{"type": "system", "subtype": ...}` line (task_started, task_notification, compact_boundary, ...)."""
    return {"type": "system", "subtype": subtype, "uuid": new_uuid(), "session_id": session_id, **fields}


def background_status(event: BackgroundFinishedEvent) -> str:
    """A background command's end as Claude Code's task status: `completed` (exit code 0), `failed` (another
    code, or none known) or `stopped` (TaskCancel, its agent's or the session's end)."""
    if event.status == "stopped":
        return "stopped"
    return "completed" if event.exit_code == 0 else "failed"


def background_summary(event: BackgroundFinishedEvent) -> str:
    """Claude Code's summary of a background command's end: `Background command "<description>" completed (exit
    code 0)`, `... failed with exit code 2`, `... was stopped`."""
    head = f'Background command "{event.description or event.command}"'
    status = background_status(event)
    if status == "stopped":
        return f"{head} was stopped"
    if status == "completed":
        return f"{head} completed (exit code 0)"
    return f"{head} failed" + (f" with exit code {event.exit_code}" if event.exit_code is not None else "")


def background_started_line(event: BackgroundStartedEvent, session_id: str) -> dict[str, Any]:
    """`task_started` of a background Bash command (Claude Code's `local_bash` task: `tool_use_id` is the Bash
    call's, `description` its description or else the command); agentcli adds `command`, `output_file` and the
    owning agent's name."""
    return system_line(
        "task_started", session_id, task_id=event.task_id, tool_use_id=event.tool_call_id or None,
        description=event.description or event.command, task_type=BASH_TASK_TYPE, is_backgrounded=True,
        command=event.command, output_file=event.output_file, agent=event.agent,
    )


def background_notification_line(event: BackgroundFinishedEvent, session_id: str) -> dict[str, Any]:
    """`task_notification` of a background Bash command that exited or was stopped (Claude Code's fields, no
    `usage`: a command spends no tokens); agentcli adds the exit code, the last lines of output and the seconds
    it ran."""
    return system_line(
        "task_notification", session_id, task_id=event.task_id, tool_use_id=event.tool_call_id or None,
        status=background_status(event), output_file=event.output_file, summary=background_summary(event),
        task_type=BASH_TASK_TYPE, exit_code=event.exit_code, last_lines=event.last_lines,
        elapsed_seconds=event.elapsed_seconds,
    )


def stream_event_line(event: dict[str, Any], *, session_id: str, parent_tool_use_id: str | None) -> dict[str, Any]:
    """A partial-message line (`--include-partial-messages`): an Anthropic streaming event, wrapped."""
    return {"type": "stream_event", "uuid": new_uuid(), "session_id": session_id, "event": event,
            "parent_tool_use_id": parent_tool_use_id}


def error_result(message: str, *, session_id: str = "", num_turns: int = 0) -> dict[str, Any]:
    """The result line of a run that failed before (or without) a model turn: bad config, no key, a bad
    input line. `result` holds the one-line message, as Claude Code's does for such errors."""
    usage = usage_dict(Usage())
    return {
        "type": "result", "subtype": ERROR_SUBTYPE, "is_error": True, "duration_ms": 0, "duration_api_ms": 0,
        "num_turns": num_turns, "result": message, "session_id": session_id, "total_cost_usd": 0.0,
        "usage": usage, "errors": [message], "uuid": new_uuid(),
        # agentcli's own keys of the result object (see RunSummary.as_dict)
        "status": "failed", "error": message,
    }


def dumps(line: dict[str, Any]) -> str:
    """One line of JSON (no newline inside)."""
    return json.dumps(line, ensure_ascii=False)


# --- input -------------------------------------------------------------------------------------


class InputLineError(ValueError):
    """A line of `--input-format stream-json` input that is not a user message agentcli can send."""


#: How deep a line of input may nest arrays and objects (Claude Code's messages and control lines nest a few levels).
MAX_INPUT_DEPTH = 100
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')  # a string (skipped whole) or a bracket


@dataclass(frozen=True, slots=True)
class UserInput:
    """One user turn read from standard input."""

    line: int
    prompt: str | Message  # one text block: its text, as a command-line prompt; several: the message


def nested_deeper(text: str, limit: int) -> bool:
    """Whether the JSON text `text` nests arrays and objects deeper than `limit` (brackets inside strings do not
    count); linear, without parsing (Python's parser recurses once a level and would blow its stack first)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return True
        elif token in "]}":
            depth -= 1
    return False


def load_line(text: str, where: str) -> Any:
    """One line of input as JSON; `InputLineError` (one line naming `where`) when it is not JSON or nests deeper
    than `MAX_INPUT_DEPTH`."""
    if nested_deeper(text, MAX_INPUT_DEPTH):
        raise InputLineError(f"{where}: JSON nested deeper than {MAX_INPUT_DEPTH} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputLineError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:  # not reached below the limit; never a traceback all the same
        raise InputLineError(f"{where}: JSON nested too deep") from None


def parse_input_line(text: str, number: int) -> UserInput | None:
    """One stdin line as a user turn; None for a blank line; `InputLineError` (one line, naming the line)
    for anything else. Accepts Claude Code's `{"type": "user", "message": {"role": "user", "content":
    "text" | [{"type": "text", "text": ...}, {"type": "image", "source": {"type": "base64", ...}}, ...]}}`; other
    keys (session_id, parent_tool_use_id) are ignored."""
    if not text.strip():
        return None
    return user_input(load_line(text, f"standard input line {number}"), number)


def user_input(data: Any, number: int) -> UserInput:
    """A parsed stdin line (`load_line`) as a user turn; `InputLineError` when it is not a user message."""
    where = f"standard input line {number}"
    if not isinstance(data, dict):
        raise InputLineError(f"{where}: expected a JSON object, got {type(data).__name__}")
    if data.get("type") != "user":
        raise InputLineError(f"{where}: type {data.get('type')!r} is not supported (only \"user\" messages)")
    message = data.get("message")
    if not isinstance(message, dict):
        raise InputLineError(f"{where}: \"message\" must be an object with role and content")
    if message.get("role", "user") != "user":
        raise InputLineError(f"{where}: message role {message.get('role')!r} is not \"user\"")
    content = message.get("content")
    blocks: list[TextBlock | ImageBlock] = []
    if isinstance(content, str):
        blocks = [TextBlock(text=content)]
    elif isinstance(content, list):
        blocks = [_input_block(block, f"{where}: content block {i}") for i, block in enumerate(content)]
    else:
        raise InputLineError(f"{where}: \"content\" must be a string or a list of text and image blocks")
    if not "".join(b.text for b in blocks if isinstance(b, TextBlock)).strip() and not any(
            isinstance(b, ImageBlock) for b in blocks):
        raise InputLineError(f"{where}: the message is empty")
    blocks = [b for b in blocks if not isinstance(b, TextBlock) or b.text]
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return UserInput(number, blocks[0].text)
    return UserInput(number, Message(role="user", content=list(blocks)))


def _input_block(block: Any, where: str) -> TextBlock | ImageBlock:
    """One content block of an input message: text, or an image as base64 (the Claude Agent SDK's shape)."""
    kind = block.get("type") if isinstance(block, dict) else type(block).__name__
    if kind == "text" and isinstance(block.get("text"), str):
        return TextBlock(text=block["text"])
    if kind == "image":
        source = block.get("source")
        if not isinstance(source, dict) or source.get("type") != "base64" or not isinstance(source.get("data"), str):
            raise InputLineError(f"{where}: an image must have a base64 source (URLs are not fetched)")
        try:
            return image_from_base64(source["data"], "prompt").block
        except ImageError as exc:
            raise InputLineError(f"{where}: the image cannot be sent: {exc}") from None
    raise InputLineError(f"{where} ({kind!r}) is not supported (only text and image blocks)")
