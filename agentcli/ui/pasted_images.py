"""Images the person puts into the prompt: a pasted or dropped image file's path, or Ctrl+V with an image on the
clipboard. Each becomes a marker in the prompt's text (`[Image #1: shot.png]`) and the image is kept here, made fit
for the model (`llm.images`); a prompt sent with a marker carries its image. The person's own act, so an image
file outside the workspace is taken too (an agent's Read of it would not be).

The clipboard is read with the platform's clipboard tool, the first found: `wl-paste` (Wayland), `xclip` (X11),
`pngpaste` (macOS); with none, or no image on it, one line says so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from agentcli.llm import IMAGE_SUFFIXES, ImageBlock, ImageError, prepare_image

CLIPBOARD_TIMEOUT = 3.0
MAX_CLIPBOARD_BYTES = 50 * 1024 * 1024
MAX_FILE_BYTES = 50 * 1024 * 1024
#: (tool, its command, the variable that must be set for it to reach a clipboard)
CLIPBOARD_TOOLS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("wl-paste", ("wl-paste", "--no-newline", "--type", "image/png"), "WAYLAND_DISPLAY"),
    ("xclip", ("xclip", "-selection", "clipboard", "-target", "image/png", "-out"), "DISPLAY"),
    ("pngpaste", ("pngpaste", "-"), None),
)
_MARKER = re.compile(r"\[Image #\d+(?:: [^\]\n]*)?\]")


class PasteError(Exception):
    """Why no image was taken (one line for the person)."""


def dropped_path(text: str, workspace: Path) -> Path | None:
    """The image file a pasted text names, when it is one path and nothing else (a dropped file: quoted,
    `file://`, or with escaped spaces); None otherwise."""
    raw = text.strip()
    if not raw or "\n" in raw or len(raw) > 4096:
        return None
    if len(raw) > 1 and raw[0] == raw[-1] and raw[0] in "'\"":
        raw = raw[1:-1]
    elif raw.startswith("file://"):
        raw = unquote(urlparse(raw).path)
    else:
        raw = re.sub(r"\\(.)", r"\1", raw)  # `my\ shot.png`
    if Path(raw).suffix.lower() not in IMAGE_SUFFIXES:
        return None
    path = Path(os.path.expanduser(raw))
    path = path if path.is_absolute() else workspace / path
    return path if path.is_file() else None


def clipboard_tool() -> tuple[str, tuple[str, ...]] | None:
    """The clipboard tool this machine has (and can reach a clipboard with), if any."""
    for name, command, needs in CLIPBOARD_TOOLS:
        if (needs is None or os.environ.get(needs)) and shutil.which(name):
            return name, command
    return None


def read_clipboard() -> bytes:
    """The image on the clipboard (PNG bytes); PasteError with one line when there is none or no tool."""
    found = clipboard_tool()
    if found is None:
        names = ", ".join(f"{name} ({'macOS' if needs is None else needs})" for name, _, needs in CLIPBOARD_TOOLS)
        raise PasteError(f"Ctrl+V pastes an image with a clipboard tool, and none was found: {names}")
    name, command = found
    try:
        done = subprocess.run(command, capture_output=True, timeout=CLIPBOARD_TIMEOUT, stdin=subprocess.DEVNULL,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PasteError(f"{name} did not give the clipboard ({type(exc).__name__})") from None
    if done.returncode != 0 or not done.stdout:
        raise PasteError("The clipboard holds no image")
    if len(done.stdout) > MAX_CLIPBOARD_BYTES:
        raise PasteError(f"The clipboard's image is over {MAX_CLIPBOARD_BYTES // (1024 * 1024)} MB")
    return done.stdout


@dataclass
class PastedImages:
    """The images put into this app's prompts, by marker."""

    images: dict[str, ImageBlock] = field(default_factory=dict)
    count: int = 0

    def add(self, data: bytes, name: str) -> str:
        """Keep the image in `data` (made fit); its marker. PasteError when it is not an image."""
        try:
            block = prepare_image(data, name).block
        except ImageError as exc:
            raise PasteError(f"{name} is not taken as an image: {exc}") from None
        self.count += 1
        marker = f"[Image #{self.count}: {name.replace(']', ')')}]"
        self.images[marker] = block
        return marker

    def add_file(self, path: Path) -> str:
        """Keep the image file at `path`; its marker."""
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise PasteError(f"{path.name} is over {MAX_FILE_BYTES // (1024 * 1024)} MB")
            data = path.read_bytes()
        except OSError as exc:
            raise PasteError(f"{path.name} cannot be read: {exc.strerror or exc}") from None
        return self.add(data, path.name)

    def blocks_for(self, prompt: str) -> list[str | ImageBlock]:
        """What a prompt carries of the images its markers name: a line naming each, then the image."""
        out: list[str | ImageBlock] = []
        for marker in dict.fromkeys(_MARKER.findall(prompt)):
            if (block := self.images.get(marker)) is not None:
                out += [f"(The person pasted {marker} into their message: it follows.)", block]
        return out
