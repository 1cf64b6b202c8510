"""WebFetch through the real CLI: the page reaches the model framed as data; without an explicit allow the
loopback server is refused, and without --yes a one-shot run does not fetch at all."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli
from tests.local_http import serving_thread


class _Page(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b"<html><body><h2>Release notes</h2><p>Version <b>7.1</b> is out.</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def page() -> Iterator[str]:
    _Page.hits = []
    with serving_thread(_Page) as base:
        yield f"{base}/notes"


def _script(url: str, answer_when: str) -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="WebFetch", input={"url": url, "prompt": "latest version"})])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains=answer_when), reply=Reply(text="done")),
    ])


def _run(server: FakeLLMServer, tmp_path: Path, *args: str, **env: str) -> dict[str, object]:
    proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), *args, "what is new?"],
                   cli_env("anthropic", server, tmp_path, **env))
    assert proc.returncode == 0, proc.stderr
    return last_json(proc.stdout)


def test_an_allowed_page_reaches_the_model_as_framed_markdown(page: str, tmp_path: Path) -> None:
    with FakeLLMServer(_script(page, "## Release notes")) as server:
        _run(server, tmp_path, "--yes", AGENTCLI_WEB_FETCH__ALLOW_PRIVATE_HOSTS='["127.0.0.1"]')
    server.assert_done()
    result = server.requests[-1].body["messages"][-1]["content"][0]
    assert result["is_error"] is False
    assert f'<web_page url="{page}" status="200" content_type="text/html">' in str(result["content"])
    assert "Version **7.1** is out." in str(result["content"]) and _Page.hits == ["/notes"]


def test_loopback_is_refused_without_an_explicit_allow(page: str, tmp_path: Path) -> None:
    with FakeLLMServer(_script(page, "127.0.0.1 is a loopback address")) as server:
        _run(server, tmp_path, "--yes")
    server.assert_done()
    assert _Page.hits == []


def test_a_one_shot_run_without_yes_does_not_fetch(page: str, tmp_path: Path) -> None:
    with FakeLLMServer(_script(page, "Permission denied")) as server:
        _run(server, tmp_path, AGENTCLI_WEB_FETCH__ALLOW_PRIVATE_HOSTS='["127.0.0.1"]')
    server.assert_done()
    assert _Page.hits == []
