"""The session's MCP servers against real servers: start, call, trust refusal, crash and one restart, time limits,
streamable HTTP with configured headers."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from agentcli.mcp.manager import McpManager
from agentcli.mcp.specs import ServerSpec
from agentcli.tools.base import ToolError
from tests.mcp.conftest import pids, time_server
from tests.processes import alive, wait_dead

pytest.importorskip("mcp_server_time")


class Told(McpManager):
    """A manager that keeps the lines it says."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.told: list[str] = []
        self.notice = self.told.append


def _manager(tmp_path: Path, *specs: ServerSpec, trusted: bool = True, **kwargs: float) -> Told:
    return Told(specs, workspace=tmp_path, trusted=lambda: trusted, log_dir=tmp_path, **kwargs)


async def test_a_server_starts_lists_its_tools_answers_and_stops(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    manager = _manager(tmp_path, time_server(pid_file))
    added: list[str] = []
    manager.on_tools = lambda tools: added.extend(t.name for t in tools)
    assert pids(pid_file) == []  # nothing starts before it is needed
    await manager.start_all()
    assert added == ["mcp__time__get_current_time", "mcp__time__convert_time"]
    tool = manager.tools()[0]
    assert tool.read_only and tool.mutating  # readOnlyHint narrows, never skips an approval
    text, is_error = await manager.call("time", "get_current_time", {"timezone": "UTC"}, "main")
    assert not is_error and '"timezone": "UTC"' in text
    text, is_error = await manager.call("time", "get_current_time", {"timezone": "Nowhere/Land"}, "main")
    assert is_error and "Nowhere/Land" in text  # the server's own error reaches the model as an error result
    (pid,) = pids(pid_file)
    assert alive(pid)
    await manager.aclose()
    assert wait_dead(pid)
    assert manager.servers["time"].status == "stopped"


async def test_an_untrusted_workspace_cannot_start_a_project_server(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    manager = _manager(tmp_path, time_server(pid_file, project=True), trusted=False)
    await manager.start_all()
    state = manager.servers["time"]
    assert state.status == "refused" and manager.tools() == []
    assert pids(pid_file) == []  # no process
    (line,) = manager.told
    assert line.startswith("MCP server 'time' (test): not started") and f"agentcli trust {tmp_path}" in line
    with pytest.raises(ToolError, match="not available"):
        await manager.call("time", "get_current_time", {"timezone": "UTC"}, "main")
    assert pids(pid_file) == []


async def test_a_crashed_server_restarts_once_then_stays_failed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    manager = _manager(tmp_path, time_server(pid_file))
    await manager.start_all()
    try:
        first = pids(pid_file)[0]
        os.kill(first, signal.SIGKILL)
        assert wait_dead(first)
        text, is_error = await manager.call("time", "get_current_time", {"timezone": "UTC"}, "explore#1")
        assert not is_error and "UTC" in text  # restarted, and the call went through
        second = pids(pid_file)[1]
        assert second != first and alive(second) and manager.servers["time"].restarts == 1
        os.kill(second, signal.SIGKILL)
        assert wait_dead(second)
        with pytest.raises(ToolError, match="crashed again"):
            await manager.call("time", "get_current_time", {"timezone": "UTC"}, "main")
        assert manager.servers["time"].status == "failed"
        assert len(pids(pid_file)) == 2  # no second restart
        assert any("crashed again" in line for line in manager.told)
    finally:
        await manager.aclose()


async def test_calls_that_meet_one_crash_together_restart_it_once(tmp_path: Path) -> None:
    import asyncio

    pid_file = tmp_path / "pids"
    manager = _manager(tmp_path, time_server(pid_file))
    await manager.start_all()
    try:
        first = pids(pid_file)[0]
        os.kill(first, signal.SIGKILL)
        assert wait_dead(first)
        results = await asyncio.gather(*(
            manager.call("time", "get_current_time", {"timezone": "UTC"}, f"agent#{i}") for i in range(3)
        ))
        assert all(not is_error for _text, is_error in results)
        assert manager.servers["time"].restarts == 1 and len(pids(pid_file)) == 2
    finally:
        await manager.aclose()


async def test_a_server_that_never_answers_fails_within_its_start_limit(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    silent = ServerSpec("mute", "stdio", "test", False, command="sh",
                        args=("-c", f'echo $$ >> "{pid_file}"; exec sleep 60'))
    manager = _manager(tmp_path, silent, startup_timeout=1.5)
    await manager.start_all()
    assert manager.servers["mute"].status == "failed"
    assert "did not start within 1.5 s" in manager.servers["mute"].error
    (line,) = manager.told
    assert line.startswith("MCP server 'mute'")
    assert wait_dead(pids(pid_file)[0])  # the stuck process was killed
    await manager.aclose()


async def test_a_missing_variable_and_a_missing_command_are_one_line_each(tmp_path: Path) -> None:
    missing_var = ServerSpec("envy", "stdio", "cfg.toml", False, command="${AGENTCLI_TEST_NO_SUCH_VAR}")
    missing_cmd = ServerSpec("ghost", "stdio", "cfg.toml", False, command="agentcli-no-such-command-xyz")
    manager = _manager(tmp_path, missing_var, missing_cmd)
    await manager.start_all()
    assert manager.servers["envy"].error == (
        "${AGENTCLI_TEST_NO_SUCH_VAR} is not set (write ${AGENTCLI_TEST_NO_SUCH_VAR:-default} for a default)"
    )
    assert "agentcli-no-such-command-xyz" in manager.servers["ghost"].error
    assert all("\n" not in line for line in manager.told)
    await manager.aclose()


async def test_streamable_http_server_with_expanded_headers(
    tmp_path: Path, http_server: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, token = http_server
    monkeypatch.setenv("NOTES_TOKEN", token)
    spec = ServerSpec("notes", "http", "test", False, url=url,
                      headers=(("Authorization", "Bearer ${NOTES_TOKEN}"),))
    manager = _manager(tmp_path, spec)
    await manager.start_all()
    try:
        assert manager.servers["notes"].status == "running", manager.servers["notes"].error
        assert [t.name for t in manager.tools()] == ["mcp__notes__shout"]
        assert await manager.call("notes", "shout", {"text": "hello"}, "main") == ("HELLO", False)
    finally:
        await manager.aclose()


async def test_streamable_http_without_the_header_fails_cleanly(tmp_path: Path, http_server: tuple[str, str]) -> None:
    url, _token = http_server
    manager = _manager(tmp_path, ServerSpec("notes", "http", "test", False, url=url), startup_timeout=10)
    await manager.start_all()
    state = manager.servers["notes"]
    assert state.status == "failed" and state.error
    await manager.aclose()


def test_the_sdk_is_not_imported_to_configure_servers(tmp_path: Path) -> None:
    import subprocess

    code = ("import sys; from pathlib import Path; from agentcli.mcp.manager import McpManager; "
            "from agentcli.mcp.specs import ServerSpec; "
            "McpManager([ServerSpec('t', 'stdio', 'x', False, command='x')], workspace=Path('.'), "
            "trusted=lambda: True); "
            "print('mcp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
