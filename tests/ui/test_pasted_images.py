"""Images put into the TUI's prompt: a dropped file's path (outside the workspace too) becomes `[Image #N: name]`
and the prompt sent carries the image; Ctrl+V reads the clipboard's image with the platform's tool (here a
stand-in `wl-paste` on PATH: a real clipboard needs a display server), and says in one line when there is no
tool; a pasted path that is not an image stays text."""

from __future__ import annotations

import base64
import io
import os
import stat
from pathlib import Path

import pytest
from PIL import Image
from textual import events

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from tests.ui.conftest import MAIN, SIZE, MakeApp, idle, wait_for


def _png(path: Path, size: tuple[int, int] = (640, 480)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, "PNG")
    path.write_bytes(out.getvalue())
    return out.getvalue()


def _images(body: dict[str, object]) -> list[bytes]:
    found = []
    for message in body["messages"]:  # type: ignore[attr-defined]
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "image":
                found.append(base64.b64decode(block["source"]["data"]))
    return found


async def test_a_dropped_image_path_becomes_a_marker_and_the_prompt_carries_the_image(
        make_app: MakeApp, tmp_path: Path) -> None:
    desktop = tmp_path / "Desktop"
    desktop.mkdir()
    data = _png(desktop / "my shot.png")
    script = Script(steps=[Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="A red square."))])
    with FakeLLMServer(script) as server:
        app = make_app(server, mode="auto")
        async with app.run_test(size=SIZE) as pilot:
            app.post_message(events.Paste(str(desktop / "my shot.png").replace(" ", "\\ ")))  # as a terminal drops it
            await wait_for(pilot, lambda: "[Image #1: my shot.png]" in app.prompt.text)
            app.post_message(events.Paste(str(tmp_path / "notes.txt")))  # not an image: text as ever
            await wait_for(pilot, lambda: "notes.txt" in app.prompt.text)
            app.prompt.load_text("what is this? " + app.prompt.text.split("]")[0] + "]")
            await pilot.press("enter")
            await idle(pilot)
    [sent] = _images(server.requests[0].body)
    assert sent == data  # it fit: sent as it was


async def test_ctrl_v_takes_the_clipboards_image_and_says_when_no_tool_is_there(
        make_app: MakeApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    picture = tmp_path / "clip.png"
    _png(picture, (3000, 2000))
    wl_paste = tools / "wl-paste"
    wl_paste.write_text(f"#!/bin/sh\nexec cat '{picture}'\n")
    wl_paste.chmod(wl_paste.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    monkeypatch.delenv("DISPLAY", raising=False)
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+v")
            await wait_for(pilot, lambda: "[Image #1: clipboard]" in app.prompt.text)
            block = app.prompt.images.images["[Image #1: clipboard]"]
            assert (block.width, block.height) == (1313, 875)  # made fit, as a Read would
            wl_paste.unlink()
            await pilot.press("ctrl+v")
            await wait_for(pilot, lambda: any("none was found" in n.message for n in app._notifications))
            assert "[Image #2" not in app.prompt.text
