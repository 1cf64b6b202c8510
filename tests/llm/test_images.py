"""Images made fit for the providers (`llm/images`): scaled within the long edge and the pixel count, kept as they
are when they fit, a GIF as a PNG, a large one within the byte cap, a bomb and a non-image refused."""

from __future__ import annotations

import base64
import io
import random
import struct
import zlib

import pytest
from PIL import Image, ImageDraw

from agentcli.llm.images import (
    MAX_BYTES,
    MAX_EDGE,
    MAX_PIXELS,
    ImageError,
    fit,
    image_from_base64,
    image_tokens,
    prepare_image,
)


def picture(width: int, height: int, kind: str = "PNG", mode: str = "RGB") -> bytes:
    image = Image.new(mode, (width, height), "white")
    draw = ImageDraw.Draw(image)
    for i in range(0, width, max(1, width // 20)):
        draw.rectangle((i, 0, i + width // 40, height // 2), fill=(i % 255, 40, 90))
    out = io.BytesIO()
    image.save(out, kind)
    return out.getvalue()


def decoded(data: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_a_large_screenshot_is_scaled_within_the_edge_and_the_pixels() -> None:
    prepared = prepare_image(picture(4000, 3000), "shot.png")
    block = prepared.block
    assert block.width <= MAX_EDGE and block.height <= MAX_EDGE and block.width * block.height <= MAX_PIXELS
    assert abs(block.width / block.height - 4 / 3) < 0.01  # the aspect is kept
    image = decoded(block.data)
    assert image.size == (block.width, block.height) and block.media_type == "image/png"
    assert prepared.original == (4000, 3000) and "scaled to" in prepared.describe()
    assert image_tokens(block) <= MAX_PIXELS // 750 + 1


def test_an_image_that_fits_goes_as_it_is() -> None:
    data = picture(800, 600, "JPEG")
    prepared = prepare_image(data, "photo.jpg")
    assert base64.b64decode(prepared.block.data) == data and prepared.block.media_type == "image/jpeg"
    assert "as it is" in prepared.describe()


def test_a_gif_goes_as_a_png_of_its_first_frame() -> None:
    block = prepare_image(picture(300, 200, "GIF", mode="P")).block
    assert block.media_type == "image/png" and decoded(block.data).format == "PNG"


def test_noise_over_the_byte_cap_is_written_again_within_it() -> None:
    rng = random.Random(7)
    noise = Image.frombytes("RGB", (1500, 1100), rng.randbytes(1500 * 1100 * 3))
    out = io.BytesIO()
    noise.save(out, "PNG")
    assert out.tell() > MAX_BYTES
    block = prepare_image(out.getvalue()).block
    assert len(base64.b64decode(block.data)) <= MAX_BYTES and block.media_type == "image/jpeg"


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _png_header(width: int, height: int) -> bytes:
    """A PNG that claims `width`×`height` (its pixel data is a few bytes: decoding it would fail)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(b"\0" * 64))
            + _chunk(b"IEND", b""))


def test_a_bomb_is_refused_before_it_is_decoded_and_a_non_image_is_one_line() -> None:
    with pytest.raises(ImageError, match="megapixels"):
        prepare_image(_png_header(12000, 8000))  # between this limit and Pillow's own
    with pytest.raises(ImageError, match="megapixels"):
        prepare_image(_png_header(20000, 20000))  # past Pillow's own
    with pytest.raises(ImageError, match="not an image"):
        prepare_image(b"hello")
    with pytest.raises(ImageError, match="not valid base64"):
        image_from_base64("***")


def test_fit_never_enlarges() -> None:
    assert fit(100, 50) == (100, 50)
    assert fit(10000, 100) == (MAX_EDGE, 15)
