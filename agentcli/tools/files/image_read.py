"""Read of an image file (PNG, JPEG, GIF, WebP): the model is shown the image, scaled to the providers' limits
(`llm/images`), with one line saying what it is and how it was sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentcli.llm import IMAGE_SUFFIXES, ImageError, prepare_image
from agentcli.tools.base import ToolError, ToolResult

MAX_FILE_BYTES = 50 * 1024 * 1024  # an image file larger than this is not opened


def is_image_path(path: Path) -> bool:
    """Whether Read shows this file as an image (by its suffix; the bytes must then be one)."""
    return path.suffix.lower() in IMAGE_SUFFIXES


async def read_image(path: Path, rel: str, size: int) -> ToolResult:
    """The image at `path` for the model; ToolError with one line when it is too large or not an image."""
    if size > MAX_FILE_BYTES:
        raise ToolError(f"{rel} is {size // (1024 * 1024)} MB: Read shows images up to "
                        f"{MAX_FILE_BYTES // (1024 * 1024)} MB")
    try:
        data = await asyncio.to_thread(path.read_bytes)
        prepared = await asyncio.to_thread(prepare_image, data, rel)
    except OSError as exc:
        raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from None
    except ImageError as exc:
        raise ToolError(f"{rel} cannot be shown as an image: {exc}") from None
    block = prepared.block
    return ToolResult(f"Image {rel}: {prepared.describe()}.", images=[block],
                      metadata={"path": rel, "image": {"width": block.width, "height": block.height,
                                                        "media_type": block.media_type,
                                                        "original": list(prepared.original)}})
