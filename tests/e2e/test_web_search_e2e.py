"""WebSearch through the real CLI: with Anthropic a recorded server-side search answers the tool's own request and
stream-json shows Claude Code's `tool_use_result`; with an OpenAI-compatible model a SearXNG-shaped local backend;
with none the tool is not offered, and a call to it gets the one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli
from tests.llm.replay import RECORDINGS_DIR, recording_raw
from tests.local_http import serving_thread

RECORDING = json.loads((RECORDINGS_DIR / "anthropic_web_search_citations.json").read_text())


class _Searx(BaseHTTPRequestHandler):
    asked: ClassVar[list[dict[str, list[str]]]] = []

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        self.asked.append(parse_qs(parts.query))
        body = json.dumps({"query": "q", "results": [
            {"url": "https://docs.python.org/3/library/tomllib.html", "title": "tomllib — Parse TOML files",
             "content": "This module provides an interface for parsing TOML 1.0.0.", "engine": "brave"}]}).encode()
        self.send_response(200 if parts.path == "/search" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def searx() -> Iterator[str]:
    _Searx.asked = []
    with serving_thread(_Searx) as base:
        yield base


def _call(query: str) -> Reply:
    return Reply(tool_calls=[ToolCall(name="WebSearch", input={"query": query})])


def test_anthropic_search_in_stream_json(tmp_path: Path) -> None:
    steps = [Step(match=Match(system_contains="- WebSearch: ", turn=0), reply=_call("python 3.14")),
             Step(match=Match(tools_include=["web_search"]), raw=recording_raw(RECORDING)),
             Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="PEP 750"),
                  reply=Reply(text="Python 3.14 has t-strings."))]
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--output-format", "stream-json", "--yes", "--cwd", str(tmp_path), "what's new?"],
                       cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    (user,) = [line for line in lines if line["type"] == "user"]
    recorded: dict[str, Any] = user["tool_use_result"]
    assert recorded["query"] == "python 3.14"
    assert recorded["results"][0]["content"][1] == {"title": "PEP 750 – Template Strings",
                                                    "url": "https://peps.python.org/pep-0750/"}
    assert "Python 3.14 adds template strings (t-strings, PEP 750)." in recorded["results"]
    assert "[2] PEP 750" in json.dumps(user["message"]["content"])
    result = lines[-1]
    assert result["type"] == "result" and result["total_cost_usd"] >= 0.01  # the search is priced per thousand


def test_searxng_backend_for_an_openai_compatible_model(searx: str, tmp_path: Path) -> None:
    steps = [Step(match=Match(turn=0, system_contains="- WebSearch: "), reply=_call("tomllib")),
             Step(match=Match(turn=1, last_user_contains="[1] tomllib — Parse TOML files"), reply=Reply(text="ok"))]
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--output-format", "json", "--yes", "--cwd", str(tmp_path), "toml?"],
                       cli_env("openai", server, tmp_path, AGENTCLI_WEB_SEARCH__BACKEND="searxng",
                               AGENTCLI_WEB_SEARCH__URL=searx))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert last_json(proc.stdout)["result"] == "ok"
    assert _Searx.asked == [{"q": ["tomllib"], "format": ["json"]}]


def test_no_backend_not_offered_and_one_line(tmp_path: Path) -> None:
    steps = [Step(match=Match(turn=0, tools_exclude=["WebSearch"]), reply=_call("anything")),
             Step(match=Match(turn=1, last_user_contains="WebSearch has no search backend"), reply=Reply(text="ok"))]
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--output-format", "json", "--yes", "--cwd", str(tmp_path), "search"],
                       cli_env("openai", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    line = server.requests[-1].body["messages"][-1]["content"]
    assert "BRAVE_API_KEY" in line and "\n" not in line


def test_an_untrusted_project_cannot_point_searches_elsewhere(searx: str, tmp_path: Path) -> None:
    (tmp_path / ".agentcli").mkdir()
    (tmp_path / ".agentcli" / "config.toml").write_text(f'[web_search]\nbackend = "searxng"\nurl = "{searx}"\n')
    steps = [Step(match=Match(turn=0, tools_exclude=["WebSearch"]), reply=Reply(text="no search"))]
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(tmp_path), "search"],
                       cli_env("openai", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert _Searx.asked == []
