"""`session/load`: a stored session's messages replayed as the updates a live turn would have sent (the person's
prompts as user chunks, answers and reasoning as agent chunks, each tool call with its result)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from acp.helpers import update_agent_message_text, update_agent_thought_text, update_user_message_text
from acp.schema import ToolCallProgress, ToolCallStart

from agentcli.acp_agent import tool_info
from agentcli.acp_agent.updates import Update
from agentcli.llm import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock


def replay(messages: Sequence[Message], workspace: Path) -> Iterator[Update]:
    """The updates of a stored conversation, in order."""
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant":
            for block in message.content:
                if isinstance(block, TextBlock) and block.text:
                    yield update_agent_message_text(block.text)
                elif isinstance(block, ThinkingBlock) and block.thinking:
                    yield update_agent_thought_text(block.thinking)
                elif isinstance(block, ToolUseBlock):
                    names[block.id] = block.name
                    yield ToolCallStart(
                        session_update="tool_call", tool_call_id=block.id,
                        title=tool_info.title_of(block.name, block.input, _summary(block)),
                        kind=tool_info.kind_of(block.name), status="in_progress",
                        content=tool_info.input_diff(block.name, block.input, workspace) or None,
                        locations=tool_info.locations_of(block.name, block.input, workspace) or None,
                        raw_input=block.input,
                    )
            continue
        results = [b for b in message.content if isinstance(b, ToolResultBlock)]
        for result in results:
            name = names.get(result.tool_use_id, "")
            keep_diff = tool_info.kind_of(name) == "edit" and not result.is_error  # the diff shown at its start
            yield ToolCallProgress(
                session_update="tool_call_update", tool_call_id=result.tool_use_id,
                status="failed" if result.is_error else "completed",
                content=None if keep_diff else tool_info.output_content(name, result.content),
                raw_output={"output": result.content[: tool_info.MAX_OUTPUT_CHARS]},
            )
        texts = [b for b in message.content if isinstance(b, TextBlock)]
        if texts and not results:  # the person's prompt is the first text block; the rest are attachments
            yield update_user_message_text(texts[0].text)


def _summary(block: ToolUseBlock) -> str:
    """A short line about a stored call's arguments (its path, command or pattern)."""
    for key in ("file_path", "command", "pattern", "path", "url", "description"):
        value = block.input.get(key)
        if isinstance(value, str) and value:
            return value if len(value) <= 80 else value[:79] + "…"
    return ""
