"""Background commands through the real CLI and the scripted fake: a server started with
`Bash(run_in_background=true)` serves a later Bash call, TaskOutput shows its log line for that request, TaskCancel
stops it and the port is free; a command that exits early is told at the next turn; a subagent's background command
ends with its task unless it hands it to its parent; nothing is left after the run."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _bash(command: str, **extra: object) -> ToolCall:
    return ToolCall(name="Bash", input={"command": command, **extra})


def _main(*calls: ToolCall, end: str = "Done.") -> list[Step]:
    steps = [Step(match=Match(system_contains=MAIN, turn=n), reply=Reply(tool_calls=[call]))
             for n, call in enumerate(calls)]
    return [*steps, Step(match=Match(system_contains=MAIN, turn=len(calls)), reply=Reply(text=end))]


def _run(tmp_path: Path, ws: Path, steps: list[Step]) -> tuple[dict[str, object], FakeLLMServer]:
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "go"],
                       cli_env("anthropic", server, tmp_path))
        assert proc.returncode == 0, proc.stderr
        server.assert_done()
    return last_json(proc.stdout), server


def _results(server: FakeLLMServer) -> dict[str, str]:
    """The main agent's tool results as its last request sent them, by tool name and order (`Bash#1`, …)."""
    body = next(r.body for r in reversed(server.requests) if MAIN in json.dumps(r.body.get("system")))
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    found: dict[str, str] = {}
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_use":
                counts[block["name"]] = counts.get(block["name"], 0) + 1
                names[block["id"]] = f"{block['name']}#{counts[block['name']]}"
            elif block.get("type") == "tool_result":
                content = block.get("content")
                text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content or [])
                found[names.get(block["tool_use_id"], block["tool_use_id"])] = text
    return found


def _alive(needle: str) -> list[str]:
    """Command lines of running processes that contain `needle` (zombies do not count)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if needle in cmdline and state not in ("Z", "X"):
            found.append(cmdline)
    return found


def test_a_background_server_serves_a_later_call_and_is_stopped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hello.txt").write_text("hello from the workspace\n")
    port = _free_port()
    fetch = ("python3 -c \"import time, urllib.request\n"
             "for _ in range(100):\n"
             "    try:\n"
             f"        print(urllib.request.urlopen('http://127.0.0.1:{port}/hello.txt', timeout=5).read().decode())\n"
             "        break\n"
             "    except OSError:\n"
             "        time.sleep(0.1)\n\"")
    steps = _main(_bash(f"python3 -u -m http.server {port} --bind 127.0.0.1", run_in_background=True),
                  _bash(fetch),
                  ToolCall(name="TaskOutput", input={"task_id": "bash_1", "filter": "GET"}),
                  ToolCall(name="TaskCancel", input={"task_id": "bash_1"}))
    _, server = _run(tmp_path, ws, steps)
    out = _results(server)
    assert "Started background command bash_1" in out["Bash#1"]
    assert "hello from the workspace" in out["Bash#2"]
    assert "running for" in out["TaskOutput#1"] and '"GET /hello.txt HTTP/1.1" 200' in out["TaskOutput#1"]
    assert "Serving HTTP" not in out["TaskOutput#1"]  # filtered out
    assert "Stopped background command bash_1" in out["TaskCancel#1"]
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the request's connection may be in TIME_WAIT
        sock.bind(("127.0.0.1", port))  # no listener any more
        sock.listen()
    assert _alive(f"http.server {port}") == []


def test_a_command_that_exits_early_is_told_at_the_next_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    steps = _main(_bash("echo warming up; echo broken config >&2; exit 3", run_in_background=True),
                  _bash("sleep 1"))
    _, server = _run(tmp_path, ws, steps)
    told = json.dumps([r.body for r in server.requests[2:]])
    assert "Background command bash_1" in told and "exited with code 3" in told and "broken config" in told


def test_a_subagents_background_command_ends_with_its_task_and_nothing_outlives_the_run(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    task = ToolCall(name="Task", input={"description": "Start a sleeper", "prompt": "start it",
                                        "subagent_type": "general"})
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
             Step(match=Match(system_contains="# Task\nStart a sleeper", turn=0),
                  reply=Reply(tool_calls=[_bash("sleep 301", run_in_background=True)])),
             Step(match=Match(system_contains="# Task\nStart a sleeper", turn=1), reply=Reply(text="started")),
             Step(match=Match(system_contains=MAIN, turn=1),
                  reply=Reply(tool_calls=[_bash("pgrep -f 'sleep 30[1]' || echo gone")])),
             Step(match=Match(system_contains=MAIN, turn=2),
                  reply=Reply(tool_calls=[_bash("sleep 302", run_in_background=True)])),
             Step(match=Match(system_contains=MAIN, turn=3), reply=Reply(text="Done."))]
    _, server = _run(tmp_path, ws, steps)
    out = _results(server)
    assert out["Bash#1"].strip() == "gone"  # the subagent's sleeper ended with its task
    assert _alive("sleep 301") == [] and _alive("sleep 302") == []  # the main agent's ended with the session


def test_a_subagent_hands_a_background_command_to_its_parent(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    task = ToolCall(name="Task", input={"description": "Start a server", "prompt": "start it for me",
                                        "subagent_type": "general"})
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
             Step(match=Match(system_contains="# Task\nStart a server", turn=0),
                  reply=Reply(tool_calls=[_bash("sleep 303", run_in_background=True, hand_to_parent=True)])),
             Step(match=Match(system_contains="# Task\nStart a server", turn=1), reply=Reply(text="it runs")),
             Step(match=Match(system_contains=MAIN, turn=1, any_message_contains="is yours now"),
                  reply=Reply(tool_calls=[_bash("pgrep -f 'sleep 30[3]' >/dev/null && echo alive")])),
             Step(match=Match(system_contains=MAIN, turn=2),
                  reply=Reply(tool_calls=[ToolCall(name="TaskCancel", input={"task_id": "bash_1"})])),
             Step(match=Match(system_contains=MAIN, turn=3), reply=Reply(text="Done."))]
    _, server = _run(tmp_path, ws, steps)
    out = _results(server)
    assert out["Bash#1"].strip() == "alive"  # the subagent's task ended, its server did not
    assert "Stopped background command bash_1" in out["TaskCancel#1"]  # the parent's to stop now
    assert _alive("sleep 303") == []


def test_run_stream_json_writes_local_bash_task_lines(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    steps = _main(_bash("true", description="Check it"),  # a foreground call is no task
                  _bash("exit 0", description="Check it", run_in_background=True),
                  ToolCall(name="TaskOutput", input={"task_id": "bash_1", "wait_seconds": 60}))  # no output: its end
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--yes", "--output-format", "stream-json", "--verbose", "--cwd", str(ws), "go"],
                       cli_env("anthropic", server, tmp_path))
        assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    calls = [b["id"] for ln in lines if ln["type"] == "assistant" for b in ln["message"]["content"]
             if b["type"] == "tool_use"]
    tasks = [ln for ln in lines if ln.get("subtype") in ("task_started", "task_notification")]
    assert [(ln["subtype"], ln["task_id"], ln["tool_use_id"], ln["task_type"]) for ln in tasks] == [
        ("task_started", "bash_1", calls[1], "local_bash"), ("task_notification", "bash_1", calls[1], "local_bash")]
    assert (tasks[1]["status"], tasks[1]["summary"]) == ("completed", 'Background command "Check it" completed (exit '
                                                                       "code 0)")
    assert tasks[0]["session_id"] == lines[0]["session_id"] and tasks[1]["output_file"].endswith("bash_1.log")
