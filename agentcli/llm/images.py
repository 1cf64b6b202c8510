"""Images the model sees, made fit for every provider: decoded and scaled with Pillow, within a byte cap.

The limits are the strictest of the providers' documented ones, so one image serves Anthropic, OpenAI and the
OpenAI-compatible servers alike (and a session can change provider):
- Anthropic scales down anything with a long edge over 1568 px or over about 1.15 megapixels (~1,600 tokens) and
  refuses an image over 5 MB (base64) or 8000 px; OpenAI's "high" detail fits an image into 2048 px and then a
  768 px short side. So: long edge ≤ 1568 px and ≤ 1.15 MP, which neither provider shrinks again;
- at most `MAX_BYTES` of image data (well under the 5 MB, and it bounds what a session stores): past it the image
  is written again as JPEG, then made smaller, until it fits;
- a file of more than `MAX_SOURCE_PIXELS` is refused before it is decoded (a decompression bomb);
- PNG, JPEG and WebP within the limits go as they are (no loss); a GIF goes as a PNG of its first frame (OpenAI
  takes only still GIFs).
Pillow is imported on first use: start-up never pays for it.
"""

from __future__ import annotations

import base64
import io
import math
import warnings
from dataclasses import dataclass

from agentcli.llm.base import ImageBlock

MAX_EDGE = 1568
MAX_PIXELS = 1_150_000
MAX_BYTES = 2 * 1024 * 1024
MAX_SOURCE_PIXELS = 80_000_000  # under Pillow's own bomb warning (89 MP)
PIXELS_PER_TOKEN = 750  # Anthropic's estimate of an image's tokens: width × height / 750
IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                  ".webp": "image/webp"}
_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
_KEPT = {"PNG", "JPEG", "WEBP"}


class ImageError(ValueError):
    """The bytes are not an image agentcli can send (its one-line reason)."""


@dataclass(frozen=True)
class Prepared:
    """An image ready to send, and what was done to it."""

    block: ImageBlock
    original: tuple[int, int]
    size_bytes: int

    def describe(self) -> str:
        """`shot.png: 4000×3000 PNG, sent as 1236×927 image/png (412 KB)`."""
        w, h = self.original
        b = self.block
        sent = "as it is" if (b.width, b.height) == (w, h) else f"scaled to {b.width}×{b.height}"
        size = f"{self.size_bytes} bytes" if self.size_bytes < 1024 else f"{self.size_bytes // 1024} KB"
        return f"{w}×{h}, sent {sent} as {b.media_type} ({size}, about {image_tokens(b)} tokens)"


def image_tokens(block: ImageBlock) -> int:
    """The tokens an image costs, estimated as Anthropic documents it."""
    return max(1, math.ceil(block.width * block.height / PIXELS_PER_TOKEN)) if block.width else 1600


def fit(width: int, height: int) -> tuple[int, int]:
    """The largest size within `MAX_EDGE` and `MAX_PIXELS` with the same aspect (never larger than given)."""
    scale = min(1.0, MAX_EDGE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))


def prepare_image(data: bytes, source: str = "") -> Prepared:
    """The image in `data` within the limits above; ImageError when it is not one (or too large to decode)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # the size is checked below, against a lower limit
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
        kind = image.format or ""
        width, height = image.size
    except Image.DecompressionBombError:
        raise ImageError(f"the image is over {MAX_SOURCE_PIXELS // 1_000_000} megapixels") from None
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ImageError(f"not an image Pillow can read ({type(exc).__name__})") from None
    if kind not in _FORMATS:
        raise ImageError(f"{kind or 'unknown'} images are not sent (PNG, JPEG, GIF and WebP are)")
    if width * height > MAX_SOURCE_PIXELS:
        raise ImageError(f"{width}×{height} is over {MAX_SOURCE_PIXELS // 1_000_000} megapixels")
    target = fit(width, height)
    if kind in _KEPT and target == (width, height) and len(data) <= MAX_BYTES:
        block = ImageBlock(media_type=_FORMATS[kind], data=base64.b64encode(data).decode(), source=source,
                           width=width, height=height)
        return Prepared(block, (width, height), len(data))
    try:
        image.seek(0)
        image.load()
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ImageError(f"the image could not be decoded ({type(exc).__name__})") from None
    encoded, media_type, size = _encode(image, target)
    block = ImageBlock(media_type=media_type, data=base64.b64encode(encoded).decode(), source=source,
                       width=size[0], height=size[1])
    return Prepared(block, (width, height), len(encoded))


def _encode(image: object, target: tuple[int, int]) -> tuple[bytes, str, tuple[int, int]]:
    """PNG at `target`; over `MAX_BYTES`, JPEG at falling quality, then at smaller sizes."""
    from PIL import Image

    assert isinstance(image, Image.Image)
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if "A" in image.getbands() or "transparency" in image.info else "RGB")
    size = target
    while True:
        scaled = image if size == image.size else image.resize(size, Image.Resampling.LANCZOS)
        out = io.BytesIO()
        scaled.save(out, "PNG", optimize=False)
        if out.tell() <= MAX_BYTES:
            return out.getvalue(), "image/png", size
        flat = scaled.convert("RGB")
        for quality in (85, 70, 55):
            out = io.BytesIO()
            flat.save(out, "JPEG", quality=quality)
            if out.tell() <= MAX_BYTES:
                return out.getvalue(), "image/jpeg", size
        size = (max(1, size[0] * 3 // 4), max(1, size[1] * 3 // 4))


MAX_BASE64_CHARS = 40 * 1024 * 1024  # an image sent in by a program (SDK, editor): refused above this, undecoded


def image_from_base64(data: str, source: str = "") -> Prepared:
    """An image a program sent as base64 (a stream-json or ACP prompt), made fit as any other; ImageError when
    it is too large, not base64 or not an image."""
    if len(data) > MAX_BASE64_CHARS:
        raise ImageError(f"the image is over {MAX_BASE64_CHARS // (1024 * 1024)} MB of base64")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        raise ImageError("the image data is not valid base64") from None
    return prepare_image(raw, source)
