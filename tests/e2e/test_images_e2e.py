"""Images through the real CLI, the real SDKs and the scripted fake: a Read of a 4000×3000 PNG sends one image within
the providers' limits (Anthropic: in the tool result; OpenAI: after the tool message, as the user's), an `@image` in
a one-shot prompt and an image block of stream-json input reach the request, and a model that refuses images gets
one line and the session goes on without them."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from agentcli.llm.images import MAX_EDGE, MAX_PIXELS
from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

pytestmark = pytest.mark.e2e


def screenshot(path: Path, width: int = 4000, height: int = 3000) -> None:
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for x in range(0, width, 200):
        draw.rectangle((x, 0, x + 80, height // 2), fill=(x % 255, 30, 120))
    image.save(path, "PNG")


def images_in(body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """Every image a request carries, in either API's shape: (media type, bytes)."""
    found: list[tuple[str, bytes]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "image" and isinstance(node.get("source"), dict):
                found.append((node["source"]["media_type"], base64.b64decode(node["source"]["data"])))
            elif node.get("type") == "image_url":
                head, _, data = node["image_url"]["url"].partition(",")
                found.append((head.removeprefix("data:").removesuffix(";base64"), base64.b64decode(data)))
            else:
                for value in node.values():
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(body.get("messages"))
    return found


def within_limits(data: bytes) -> tuple[int, int]:
    size = Image.open(io.BytesIO(data)).size
    assert max(size) <= MAX_EDGE and size[0] * size[1] <= MAX_PIXELS
    return size


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_read_of_a_large_png_sends_one_image_within_the_limits(api: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    screenshot(ws / "shot.png")
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "shot.png"})])),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="A chart.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "what does shot.png show?"],
                       cli_env(api, server, tmp_path))
        assert proc.returncode == 0, proc.stderr
        server.assert_done()
    assert last_json(proc.stdout)["result"] == "A chart."
    first, second = (r.body for r in server.requests)
    assert images_in(first) == []
    [(media, data)] = images_in(second)
    assert media == "image/png" and within_limits(data) == (1238, 928)
    messages = second["messages"]
    if api == "anthropic":  # inside the tool result, after its text
        result = messages[-1]["content"][0]
        assert result["type"] == "tool_result" and result["content"][0]["text"].startswith("Image shot.png: 4000×3000")
    else:  # a tool message holds text: the image follows as the user's, naming the call
        tool, user = messages[-2], messages[-1]
        assert tool["role"] == "tool" and tool["content"].startswith("Image shot.png")
        assert user["role"] == "user" and "returned" in user["content"][0]["text"]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_an_image_mentioned_in_a_one_shot_prompt_reaches_the_request(api: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    screenshot(ws / "bug.png", 900, 600)
    script = Script(steps=[Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="The button is cut."))])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--cwd", str(ws), "what is wrong in @bug.png"], cli_env(api, server, tmp_path))
        assert proc.returncode == 0, proc.stderr
    assert "bug.png (image, sent as 900×600)" in proc.stderr
    [(media, data)] = images_in(server.requests[0].body)
    assert media == "image/png" and within_limits(data) == (900, 600)
    assert "what is wrong in @bug.png" in json.dumps(server.requests[0].body["messages"])


def test_an_image_block_of_stream_json_input_reaches_the_request(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    screenshot(ws / "x.png", 2400, 1200)
    data = base64.b64encode((ws / "x.png").read_bytes()).decode()
    line = {"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}]}}
    script = Script(steps=[Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Stripes."))])
    with FakeLLMServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--cwd", str(ws), "--input-format", "stream-json",
             "--output-format", "stream-json"], input=json.dumps(line) + "\n", capture_output=True, text=True,
            env=cli_env("anthropic", server, tmp_path), timeout=120)
        assert proc.returncode == 0, proc.stderr
    [(media, data_sent)] = images_in(server.requests[0].body)
    assert within_limits(data_sent) == (1516, 758)  # 2:1, held by the pixel count before the long edge
    assert media == "image/png"
    assert json.loads(proc.stdout.splitlines()[-1])["result"] == "Stripes."


def test_a_server_that_refuses_images_gets_one_line_and_the_session_goes_on_without_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    screenshot(ws / "a.png", 300, 200)
    screenshot(ws / "b.png", 300, 200)
    read = [ToolCall(name="Read", input={"file_path": "a.png"})]
    # llama.cpp's answer when it runs without its vision projector (HTTP 500, its error shape)
    refusal = Fault(kind="http", status=500, error_type="server_error",
                    message="image input is not supported - hint: if this is unexpected, you may need to provide "
                            "the mmproj")
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=read)),
        Step(match=Match(system_contains=MAIN, turn=1), fault=refusal),
        Step(match=Match(system_contains=MAIN, turn=1),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "b.png"})])),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="Two pictures I cannot see.")),
    ])
    with FakeLLMServer(script) as server:
        env = cli_env("openai", server, tmp_path, AGENTCLI_MODELS__MAIN__PROVIDER="openai-compatible")
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "look at both"], env)
        assert proc.returncode == 0, proc.stderr
        server.assert_done()
    assert proc.stderr.count("does not take images") == 1 and "mmproj" in proc.stderr
    assert last_json(proc.stdout)["result"] == "Two pictures I cannot see."
    later = [r.body for r in server.requests[2:]]
    assert all(images_in(body) == [] for body in later)  # neither the refused image nor the next one is sent
    assert "[image a.png, 300×200: no longer attached]" in json.dumps(later[0]["messages"], ensure_ascii=False)
