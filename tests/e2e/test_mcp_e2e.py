"""MCP end to end: the real `mcp-server-time` from PyPI (the dev extra installs it), driven by a scripted model
through the real CLI. The server is started through `sh -c 'echo $$ > PIDFILE; exec python -m mcp_server_time'`,
so the test knows its pid (exec keeps it) and can check that no server process is left."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli
from tests.processes import alive, wait_dead

pytest.importorskip("mcp_server_time")

TOOL = "mcp__time__get_current_time"


def _server_def(pid_file: Path) -> dict[str, object]:
    script = f'echo $$ > "{pid_file}"; exec "{sys.executable}" -m mcp_server_time --local-timezone UTC'
    return {"command": "sh", "args": ["-c", script]}


def _user_config(home: Path, text: str) -> None:
    path = home / "config" / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_main_agent_calls_a_real_mcp_server_from_mcp_json(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    pid_file = tmp_path / "server.pid"
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": _server_def(pid_file)}}))
    _user_config(tmp_path, '[permissions]\nallow = ["mcp__time"]\n')  # a rule naming the whole server
    script = Script(steps=[
        # MCP tools are deferred ([tools] defer = "auto"): named in the system prompt, loaded through ToolSearch
        Step(match=Match(system_contains=f"- {TOOL}: ", turn=0, tools_exclude=[TOOL]),
             reply=Reply(tool_calls=[ToolCall(name="ToolSearch", input={"query": "select:" + TOOL})])),
        Step(match=Match(system_contains=MAIN, turn=1, tools_include=[TOOL], tools_exclude=["mcp__time__convert_time"]),
             reply=Reply(text="Asking the clock.", tool_calls=[ToolCall(name=TOOL, input={"timezone": "UTC"})])),
        Step(match=Match(system_contains=MAIN, turn=2, last_user_contains='"timezone": "UTC"'),
             reply=Reply(text="It is a fine day in UTC.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--trust", "--output-format", "stream-json", "--cwd", str(ws), "what time is it?"],
                       cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    server.assert_done()
    init = json.loads(proc.stdout.splitlines()[0])
    assert init["subtype"] == "init" and init["mcp_servers"] == [{"name": "time", "status": "connected"}]
    assert TOOL in init["tools"]
    result = last_json(proc.stdout)
    assert result["result"] == "It is a fine day in UTC."
    answer = str(server.requests[-1].body["messages"][-1])
    assert "mcp_result server=" in answer and "get_current_time" in answer  # framed as the server's data
    assert "day_of_week" in answer  # the server's own output reached the model
    pid = int(pid_file.read_text())
    assert wait_dead(pid), "the MCP server outlived agentcli"


def test_subagent_whose_agent_file_names_the_tool_calls_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude" / "agents").mkdir(parents=True)
    (ws / ".claude" / "agents" / "clock.md").write_text(
        f"---\nname: clock\ndescription: Tells the time.\ntools: Read, {TOOL}\n---\nYou tell the time.\n"
    )
    pid_file = tmp_path / "server.pid"
    server_def = _server_def(pid_file)
    args = ", ".join(json.dumps(a) for a in server_def["args"])  # type: ignore[union-attr]
    _user_config(tmp_path, f'[mcp.servers.time]\ncommand = "sh"\nargs = [{args}]\n')  # the person's own server
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Task", input={
                 "description": "Ask the clock", "prompt": "What time is it in UTC?", "subagent_type": "clock"})])),
        Step(match=Match(system_contains="# Task\nAsk the clock", turn=0, tools_include=["Read", "ToolSearch"],
                         tools_exclude=["Bash", TOOL]),  # the agent file's deferred tool: loaded as the main's are
             reply=Reply(tool_calls=[ToolCall(name="ToolSearch", input={"query": "current time"})])),
        Step(match=Match(system_contains="# Task\nAsk the clock", turn=1, tools_include=[TOOL],
                         tools_exclude=["Bash", "mcp__time__convert_time"]),
             reply=Reply(tool_calls=[ToolCall(name=TOOL, input={"timezone": "UTC"})])),
        Step(match=Match(system_contains="# Task\nAsk the clock", turn=2, last_user_contains="day_of_week"),
             reply=Reply(text="The clock says it is Tuesday-ish in UTC.")),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="Tuesday-ish"),
             reply=Reply(text="The subagent says: Tuesday-ish in UTC.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "time?"],
                       cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    result = last_json(proc.stdout)
    assert result["result"] == "The subagent says: Tuesday-ish in UTC."
    (task,) = result["tasks"]
    assert task["status"] == "completed" and {"tool": TOOL, "count": 1} in task["tool_summary"]
    assert wait_dead(int(pid_file.read_text())), "the MCP server outlived agentcli"


def test_an_untrusted_workspace_cannot_start_its_mcp_json_server(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    pid_file = tmp_path / "server.pid"
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": _server_def(pid_file)}}))
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0, tools_exclude=[TOOL]), reply=Reply(text="No clock here.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--cwd", str(ws), "time?"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert not pid_file.exists()  # no process was started
    lines = [line for line in proc.stderr.splitlines() if "MCP server 'time' (" in line]  # the refusal
    assert len(lines) == 1 and "untrusted workspace" in lines[0] and "agentcli trust" in lines[0], proc.stderr
    # and the untrusted workspace's warning line at start names what trusting would start
    assert "not run until trusted: MCP server 'time' starts: sh -c" in proc.stderr


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_mid_run_leaves_no_server_process(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    pid_file = tmp_path / "server.pid"
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": _server_def(pid_file)}}))
    script = Script(steps=[
        Step(match=Match(turn=0), reply=Reply(tool_calls=[ToolCall(name=TOOL, input={"timezone": "UTC"})])),
        Step(match=Match(turn=1), latency_ms=60_000, reply=Reply(text="too late")),
    ])
    with FakeLLMServer(script) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "run", "--trust", "--yes", "--cwd", str(ws), "time?"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env("anthropic", server, tmp_path),
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 2:  # the tool ran; the next request hangs
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the second request never came"
            time.sleep(0.02)
        pid = int(pid_file.read_text())
        assert alive(pid)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert wait_dead(pid), f"the MCP server outlived agentcli after {sig.name}"
