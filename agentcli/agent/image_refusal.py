"""A model or server that refuses images (a text-only model, llama.cpp without its vision projector, a vLLM model
that is not multimodal): the request that carried them failed with an error about images. The session then leaves
images out (each one replaced by a line naming it, as compaction does) and the request goes again; later requests
of the session send no image, so none is refused again and again. The stored history keeps the images."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentcli.agent.compaction import without_images
from agentcli.llm import ImageBlock, Message, ProviderError, ToolResultBlock

_ABOUT_IMAGES = re.compile(r"image|vision|multi-?modal|mmproj", re.IGNORECASE)


def has_images(messages: Sequence[Message]) -> bool:
    """Whether any message carries an image (a person's, or a tool result's)."""
    return any(isinstance(b, ImageBlock) or (isinstance(b, ToolResultBlock) and b.images)
               for m in messages for b in m.content)


def refuses_images(error: ProviderError, messages: Sequence[Message]) -> bool:
    """Whether `error` is the provider refusing the images `messages` carry (a 4xx or 5xx about images)."""
    return (error.status is None or error.status >= 400) and bool(_ABOUT_IMAGES.search(str(error))) \
        and has_images(messages)


def strip_images(messages: list[Message]) -> None:
    """Replace every image in `messages` (in place) by the line that names it."""
    for index, message in enumerate(messages):
        if any(isinstance(b, ImageBlock) or (isinstance(b, ToolResultBlock) and b.images) for b in message.content):
            messages[index] = Message(role=message.role, content=[
                without_images(b) if isinstance(b, ImageBlock | ToolResultBlock) else b for b in message.content])


def refusal_line(model: str, error: ProviderError) -> str:
    """The one line the person reads."""
    first = str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__
    return (f"{model} does not take images ({first}): this session's requests leave them out from now on, "
            "a line naming each in its place")
