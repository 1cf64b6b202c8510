"""A real model end to end: the `agentcli` executable against llama.cpp's `llama-server` serving SmolLM2-135M
(built and installed by `python bench/real_model.py setup`; .ci/run does it first, so CI always runs these).

A 135M model does not choose tools reliably, so the mechanics are made deterministic without faking them: greedy
sampling with a fixed seed on the server, one offered tool per run (`--tools`), a short system prompt, and a
prompt that spells out the exact call in the JSON that llama.cpp's grammar holds the reply to. What is asserted
is only the mechanics: the server's reply was parsed into a tool call, the tool ran, its result went back in the
next request (seen by a recording proxy between agentcli and the server), the session, tool call and task
records are in SQLite, and the run ended cleanly (an answer, or the turn limit). Never the model's wording.
The one choice left to the model is a tool call over a plain `{"response": ...}`; it has not failed to call yet.

It runs `agentcli -p` (Claude Code's headless flags) rather than `agentcli run` for `--tools` and
`--system-prompt`: the full fixed prompt, every tool with agentcli's role, is ~7,400 tokens, minutes of prompt
processing per request on two shared cores; one tool and a short role keep a request at ~850-2,100 tokens.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, ClientTimeout, web

from tests.e2e.helpers import db, run_cli

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "real_model.py"
_spec = importlib.util.spec_from_file_location("agentcli_bench_real_model", _SCRIPT)
assert _spec is not None and _spec.loader is not None
real_model = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = real_model
_spec.loader.exec_module(real_model)

# Looked up at import, under the real HOME (the autouse fixture gives each test a fresh one).
MODEL = real_model.find()
REQUIRED = os.environ.get("AGENTCLI_REAL_MODEL_REQUIRED") == "1"  # CI: a missing build fails, never skips
MAIN_MODEL, LIGHT_MODEL = "smollm2-main", "smollm2-light"  # one server; the names tell the requests apart

pytestmark = pytest.mark.timeout(600)


class RecordingProxy:
    """A loopback proxy in front of llama-server that keeps every chat request's JSON body, so a test sees what
    agentcli sent; responses stream through untouched."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.requests: list[dict[str, Any]] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="recording-proxy", daemon=True)

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.path.endswith("/chat/completions"):
            self.requests.append(json.loads(body))
        async with ClientSession(timeout=ClientTimeout(total=None)) as session, session.request(
                request.method, self.upstream + request.path_qs, data=body,
                headers={"Content-Type": request.headers.get("Content-Type", "application/json")}) as upstream:
            response = web.StreamResponse(status=upstream.status, headers={
                "Content-Type": upstream.headers.get("Content-Type", "application/json")})
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    async def _start(self) -> web.AppRunner:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.SockSite(runner, self._sock).start()
        return runner

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        self._runner = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-server's base URL: one server for the module's tests (in this xdist worker)."""
    if MODEL is None:
        message = (f"no llama-server build or model in {real_model.cache_dir()}: "
                   "run `.venv/bin/python bench/real_model.py setup` (needs cmake and a C++ compiler)")
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    with real_model.serve(MODEL, tmp_path_factory.mktemp("llama") / "llama-server.log") as base_url:
        yield base_url


@pytest.fixture
def proxy(llama_server: str) -> Iterator[RecordingProxy]:
    with RecordingProxy(llama_server) as recording:
        yield recording


def _env(base_url: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENTCLI_"))}
    env.update(XDG_DATA_HOME=str(home / "data"), XDG_STATE_HOME=str(home / "state"),
               XDG_CONFIG_HOME=str(home / "config"), AGENTCLI_LLM__MAX_RETRIES="0")
    for role, model in (("MAIN", MAIN_MODEL), ("LIGHT", LIGHT_MODEL)):
        env.update({f"AGENTCLI_MODELS__{role}__PROVIDER": "openai-compatible",
                    f"AGENTCLI_MODELS__{role}__BASE_URL": base_url + "/v1",
                    f"AGENTCLI_MODELS__{role}__MODEL": model,
                    f"AGENTCLI_MODELS__{role}__CONTEXT_WINDOW": "8192",
                    f"AGENTCLI_MODELS__{role}__MAX_OUTPUT_TOKENS": "200"})
    return env


def _call(name: str, arguments: dict[str, Any]) -> str:
    """The reply spelled out in the shape llama.cpp's Generic tool-call format asks of this model."""
    return json.dumps({"tool_call": {"name": name, "arguments": arguments}})


def _agentcli(proxy: RecordingProxy, tmp_path: Path, tool: str, prompt: str, *extra: str) -> dict[str, Any]:
    """One headless run offering only `tool`; its JSON result line. A clean end: an answer or the turn limit."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "notes.txt").write_text("alpha beta gamma\n")
    system = "You are a tool-calling assistant. Reply with exactly the tool call the user spells out, then stop."
    proc = run_cli(["-p", prompt, "--output-format", "json", "--tools", tool, "--system-prompt", system,
                    "--max-turns", "2", "--setting-sources", "user", "--cwd", str(workspace), *extra],
                   _env(proxy.base_url, tmp_path / "home"), timeout=500)
    assert "Traceback" not in proc.stderr, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    clean = (proc.returncode, result["subtype"]) in ((0, "success"), (1, "error_max_turns"))
    assert clean, (proc.returncode, result, proc.stderr)
    return result


def _tool_calls(home: Path, session_id: str) -> list[dict[str, Any]]:
    with db(home) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute("SELECT * FROM tool_calls WHERE session_id = ? ORDER BY started_at", (session_id,))
        return [dict(row) for row in rows]


def _answered(requests: list[dict[str, Any]], call: dict[str, Any]) -> dict[str, Any]:
    """The tool message that carried `call`'s result in the request after the one that got the call."""
    for request in requests:
        for message in request["messages"]:
            if message["role"] == "tool" and message["tool_call_id"] == call["id"]:
                return dict(message)
    raise AssertionError(f"no request carried the result of {call['name']} {call['id']}")


def test_a_read_call_runs_and_its_result_goes_back(proxy: RecordingProxy, tmp_path: Path) -> None:
    prompt = "Reply with exactly: " + _call("Read", {"file_path": "notes.txt"})
    result = _agentcli(proxy, tmp_path, "Read", prompt)
    first = proxy.requests[0]
    assert first["model"] == MAIN_MODEL and [t["function"]["name"] for t in first["tools"]] == ["Read"]
    calls = _tool_calls(tmp_path / "home", result["session_id"])
    assert calls and calls[0]["name"] == "Read" and calls[0]["status"] in ("ok", "error"), calls
    sent = _answered(proxy.requests[1:], calls[0])
    assert calls[0]["output"] and calls[0]["output"] in sent["content"]
    with db(tmp_path / "home") as conn:
        status = conn.execute("SELECT status FROM sessions WHERE id = ?", (result["session_id"],)).fetchone()[0]
    assert status in ("completed", "max_turns")


def test_a_todowrite_call_runs_and_its_result_goes_back(proxy: RecordingProxy, tmp_path: Path) -> None:
    todos = [{"content": "Read notes.txt", "status": "in_progress"}]
    result = _agentcli(proxy, tmp_path, "TodoWrite", "Reply with exactly: " + _call("TodoWrite", {"todos": todos}))
    calls = _tool_calls(tmp_path / "home", result["session_id"])
    assert calls and calls[0]["name"] == "TodoWrite", calls
    # llama.cpp's grammar holds the arguments to the tool's schema, so the call is valid (issue 29 saw a `$ref`
    # into `$defs` left unconstrained by that grammar: the schemas must be self-contained).
    assert calls[0]["status"] == "ok", calls[0]
    sent = _answered(proxy.requests[1:], calls[0])
    assert calls[0]["output"] in sent["content"]


def test_a_task_starts_a_subagent_on_the_light_model(proxy: RecordingProxy, tmp_path: Path) -> None:
    reader = {"description": "Reads one file.", "tools": ["Read"], "model": "light", "maxTurns": 1,
              "prompt": "Reply with exactly: " + _call("Read", {"file_path": "notes.txt"})}
    # The arguments in the schema's order (the grammar holds the reply to it); "Read the notes" for a description
    # made it ramble on into ".txt. This is a command that ...", so no value here starts another one.
    task = {"description": "Check one file", "prompt": "Read notes.txt", "subagent_type": "reader"}
    result = _agentcli(proxy, tmp_path, "Task", "Reply with exactly: " + _call("Task", task),
                       "--agents", json.dumps({"reader": reader}))
    home = tmp_path / "home"
    call = _tool_calls(home, result["session_id"])[0]
    assert call["name"] == "Task" and call["status"] in ("ok", "error"), call
    with db(home) as conn:
        first = conn.execute("SELECT subagent_type, model_used, status, child_session_id FROM tasks WHERE "
                             "parent_tool_call_id = ?", (call["id"],)).fetchone()
        assert first is not None and first[:2] == ("reader", "light"), (first, call, result)
        child = conn.execute("SELECT parent_session_id, agent_type FROM sessions WHERE id = ?", (first[3],)).fetchone()
    assert child == (result["session_id"], "reader")
    assert first[2] in ("completed", "budget_exceeded")  # an answer, or the subagent's turn limit (maxTurns 1)
    # The subagent's request went to the light model, offered its type's tools (not the parent's), with its prompt.
    sub = next(r for r in proxy.requests if r["model"] == LIGHT_MODEL)
    offered = {t["function"]["name"] for t in sub["tools"]}
    assert "Read" in offered and "Task" not in offered, offered
    assert '"file_path": "notes.txt"' in sub["messages"][0]["content"]
    # Its result went back to the main agent in the main agent's next request.
    main_after = [r for r in proxy.requests if r["model"] == MAIN_MODEL][1:]
    assert _answered(main_after, call)["content"]
