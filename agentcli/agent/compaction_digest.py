"""The opening user message a compaction leaves in place of the older turns (the summary, or a digest made
without a model, then the facts always kept), and the transcript of those turns the summariser reads."""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentcli.llm import ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentcli.text import defang_tags, one_line

_OPEN, _CLOSE = "<compacted_context>", "</compacted_context>"
_PATH_KEYS = ("file_path", "path", "notebook_path")
_PREVIOUS_MAX = 6000  # characters of an earlier digest carried into the next one
_TRANSCRIPT_RESULT_MAX = 2000  # characters of one tool result in the transcript the summariser reads


def opening_message(
    older: Sequence[Message], summary: str | None, *, todos: list[str], tasks: list[str],
    editing_tools: frozenset[str],
) -> str:
    """The user message that replaces `older`: the summary (or a digest), then the facts always kept."""
    parts = [
        "This conversation was compacted to fit the context window: the messages before this point were "
        "replaced by the summary below (the full history stays in the session record)."
    ]
    previous = _previous_digest(older)
    requests = _requests(older)
    if summary is not None:
        parts.append("## Summary\n" + defang_tags(summary))
    elif previous:  # an earlier digest, carried (its newest part) into this one
        parts.append("## Before that\n" + defang_tags(previous[-_PREVIOUS_MAX:]))
    if requests:
        parts.append("## The person's requests in that part (oldest first)\n" + "\n".join(requests))
    if summary is None and (last := _last_answer(older)):
        parts.append("## Latest answer before this point\n" + defang_tags(last))
    files = _merge_files(_files_from_digest(previous), _edited_files(older, editing_tools))
    if files:
        parts.append("## Files touched\n" + "\n".join(f"- {path}" for path in files))
    if todos:
        parts.append("## Open todos\n" + "\n".join(defang_tags(t) for t in todos))
    if tasks:
        parts.append(
            "## Delegated tasks (their ids stay valid for TaskOutput and Task(resume=...))\n"
            + "\n".join(defang_tags(t) for t in tasks)
        )
    return f"{_OPEN}\n" + "\n\n".join(parts) + f"\n{_CLOSE}"


def _edited_files(older: Sequence[Message], editing_tools: frozenset[str]) -> list[str]:
    """The paths the editing tools' calls among `older` named, in order, once each."""
    files: list[str] = []
    for message in older:
        for block in message.tool_uses():
            if block.name not in editing_tools:
                continue
            for key in _PATH_KEYS:
                value = block.input.get(key)
                if isinstance(value, str) and value.strip() and value not in files:
                    files.append(value.strip())
    return files


def is_digest(message: Message) -> bool:
    """Whether `message` is an earlier compaction's opening message."""
    return message.role == "user" and message.text().startswith(_OPEN)


def _previous_digest(older: Sequence[Message]) -> str:
    if older and is_digest(older[0]):
        return older[0].text().removeprefix(_OPEN).removesuffix(_CLOSE).strip()
    return ""


def _files_from_digest(digest: str) -> list[str]:
    _, found, rest = digest.partition("## Files touched\n")
    if not found:
        return []
    lines = rest.split("\n## ", 1)[0].splitlines()
    return [line[2:].strip() for line in lines if line.startswith("- ")]


def _merge_files(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def _requests(older: Sequence[Message]) -> list[str]:
    """The person's prompts among `older` (not tool results, not an earlier digest), shortened."""
    lines = []
    for message in older:
        if message.role != "user" or is_digest(message):
            continue
        text = " ".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()
        if text and not any(isinstance(b, ToolResultBlock) for b in message.content):
            lines.append("- " + defang_tags(one_line(text, 300)))
    return lines[-30:]


def _last_answer(older: Sequence[Message]) -> str:
    for message in reversed(older):
        if message.role == "assistant" and (text := message.text().strip()):
            return text if len(text) <= 2000 else text[:1999] + "…"
    return ""

def transcript(older: Sequence[Message], limit: int) -> str:
    """The older turns as plain text for the summariser (the newest part when too long)."""
    lines: list[str] = []
    for message in older:
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                lines.append(f"[{message.role}] {block.text}")
            elif isinstance(block, ToolUseBlock):
                args = json.dumps(block.input, ensure_ascii=False)
                lines.append(f"[tool call {block.name}] {args[:500]}")
            elif isinstance(block, ToolResultBlock):
                body, more = block.content[:_TRANSCRIPT_RESULT_MAX], len(block.content) - _TRANSCRIPT_RESULT_MAX
                if more > 0:
                    body += f" … [{more} chars more]"
                lines.append(f"[tool result{' (error)' if block.is_error else ''}] {body}")
                lines.extend(f"[tool result] {image.placeholder()}" for image in block.images)
            elif isinstance(block, ImageBlock):
                lines.append(f"[{message.role}] {block.placeholder()}")
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    head = limit // 5  # the start (what was asked) and the latest part (where the work stands)
    return f"{text[:head]}\n[… {len(text) - limit} characters omitted …]\n{text[-(limit - head):]}"
