"""A Task call's `output_schema` as an attacker would write it, through the real `agentcli run`.

The model (steered by an injected instruction) chooses the schema, so a schema must never make
agentcli fetch a URL, read a file, loop forever, or freeze on a regular expression; a schema that
cannot be used is `Invalid parameters: output_schema: ...` and no task is left `running`.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, db, last_json, run_cli

INVALID = "Invalid parameters: output_schema: "


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]]

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/schema+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def schema_host() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that would serve any schema; it must receive nothing."""
    hits: list[str] = []
    handler = type("Recorder", (_Recorder,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def _task(schema: dict[str, Any], description: str = "Return a JSON answer") -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": "answer in JSON",
                                        "subagent_type": "explore", "output_schema": schema})


def _refused_script(schema: dict[str, Any], expected: str) -> Script:
    return Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task(schema)])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains=INVALID + expected),
             reply=Reply(text="The schema was refused.")),
    ])


def _run(server: FakeLLMServer, home: Path, ws: Path, args: list[str] | None = None) -> dict[str, Any]:
    proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), *(args or []), "go"],
                   cli_env("anthropic", server, home))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return last_json(proc.stdout)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "control.txt").write_text("control\n")
    return path


def test_remote_ref_in_output_schema_is_refused_and_never_fetched(
    tmp_path: Path, ws: Path, schema_host: tuple[str, list[str]]
) -> None:
    host, hits = schema_host
    ref = f"{host}/schema.json#/definitions/x"
    with FakeLLMServer(_refused_script({"$ref": ref}, f"$ref '{ref}' is not a local reference")) as server:
        result = _run(server, tmp_path, ws)
    server.assert_done()
    assert result["tasks"] == []
    assert hits == []


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"$id": "{host}/base/", "properties": {"a": {"$ref": "other.json"}}}, "$ref 'other.json' is not a local"),
        ({"$dynamicRef": "{host}/meta#meta"}, "$dynamicRef '{host}/meta#meta' is not a local"),
        ({"properties": {"a": {"$id": "{host}/a.json", "$ref": "#/definitions/nope"}}},
         "$ref '#/definitions/nope' does not resolve"),
        ({"$schema": "{host}/my-dialect"}, "unknown $schema '{host}/my-dialect'"),
    ],
)
def test_id_relative_dynamic_and_dialect_refs_are_refused_and_never_fetched(
    tmp_path: Path, ws: Path, schema_host: tuple[str, list[str]], schema: dict[str, Any], expected: str
) -> None:
    host, hits = schema_host
    concrete = json.loads(json.dumps(schema).replace("{host}", host))
    with FakeLLMServer(_refused_script(concrete, expected.replace("{host}", host))) as server:
        result = _run(server, tmp_path, ws)
    server.assert_done()
    assert result["tasks"] == []
    assert hits == []


AUDITED_RUN = r"""
import os, sys, runpy
log_fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
watched = {os.path.realpath(p) for p in sys.argv[2].split(os.pathsep)}
def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if os.path.realpath(path) in watched:
            os.write(log_fd, (path + "\n").encode())
sys.addaudithook(hook)
sys.argv = ["agentcli", *sys.argv[3:]]
runpy.run_module("agentcli", run_name="__main__", alter_sys=True)
"""


def test_file_ref_in_output_schema_is_refused_and_the_file_never_opened(tmp_path: Path, ws: Path) -> None:
    secret = tmp_path / "secret-schema.json"
    secret.write_text('{"type": "string"}')
    control = ws / "control.txt"  # read by the model on purpose: shows the audit hook sees opens
    ref = secret.as_uri()
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task({"$ref": ref}), ToolCall(name="Read", input={"file_path": "control.txt"})])),
        Step(match=Match(system_contains=MAIN, turn=1, any_message_contains=INVALID + f"$ref '{ref}' is not a local"),
             reply=Reply(text="Refused.")),
    ])
    opened = tmp_path / "opened.log"
    with FakeLLMServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-c", AUDITED_RUN, str(opened), f"{secret}:{control}",
             "run", "--output-format", "json", "--cwd", str(ws), "go"],
            capture_output=True, text=True, env=cli_env("anthropic", server, tmp_path), timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
    server.assert_done()
    log = opened.read_text().splitlines()
    assert str(control) in log  # the hook works
    assert not [line for line in log if "secret-schema" in line]
    assert last_json(proc.stdout)["tasks"] == []


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string", "pattern": "(unclosed"}, "invalid regular expression '(unclosed'"),
        ({"$ref": "#/$defs/missing"}, "$ref '#/$defs/missing' does not resolve to a part of this schema"),
        ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"},
         "cannot be used: its references loop forever"),
    ],
)
def test_uncompilable_output_schema_is_a_parameter_error(
    tmp_path: Path, ws: Path, schema: dict[str, Any], expected: str
) -> None:
    with FakeLLMServer(_refused_script(schema, expected)) as server:
        result = _run(server, tmp_path, ws)
    server.assert_done()
    assert result["tasks"] == []


def test_catastrophic_schema_pattern_cannot_freeze_agentcli(tmp_path: Path, ws: Path) -> None:
    # `^(a|a)+$` backtracks 2**40 times on 40 a's and a '!': forever on Python's `re`.
    schema = {"type": "string", "pattern": "^(a|a)+$"}
    answer = '"' + "a" * 40 + '!"'
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task(schema, "Check the pattern")])),
        Step(match=Match(system_contains="# Task\nCheck the pattern", turn=0), reply=Reply(text=answer)),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="output_schema could not be checked"),
             reply=Reply(text="The check failed.")),
    ])
    with FakeLLMServer(script) as server:
        result = _run(server, tmp_path, ws)
    server.assert_done()
    (task,) = result["tasks"]
    assert task["status"] == "failed"
    assert task["error"] == (
        "output_schema could not be checked: the schema's pattern '^(a|a)+$' took too long on a value (over 0.5s)"
    )
    with db(tmp_path) as conn:
        (status,) = conn.execute("SELECT status FROM tasks WHERE task_id = ?", (task["task_id"],)).fetchone()
    assert status == "failed"  # the stored record never stays running


def test_nested_pattern_answer_is_checked_normally(tmp_path: Path, ws: Path) -> None:
    # `(a+)+$` on the regex engine answers at once; the answer does not match, one repair turn, then failed.
    schema = {"type": "string", "pattern": "(a+)+$"}
    bad = '"' + "a" * 40 + '!"'
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task(schema, "Check nested plus")])),
        Step(match=Match(system_contains="# Task\nCheck nested plus", turn=0), reply=Reply(text=bad)),
        Step(match=Match(system_contains="# Task\nCheck nested plus", turn=1, last_user_contains="does not match"),
             reply=Reply(text='"aaaa"')),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="ok")),
    ])
    with FakeLLMServer(script) as server:
        result = _run(server, tmp_path, ws)
    server.assert_done()
    (task,) = result["tasks"]
    assert task["status"] == "completed" and task["result"] == '"aaaa"'
