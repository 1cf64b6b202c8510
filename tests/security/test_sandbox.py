"""Bash in the sandbox: a command cannot write past the workspace, read credentials, or reach the network.

Each escape is tried the way a model (or a prompt injected into a file it read) would try it: a Bash command
run unasked (`--yes`, auto mode). The home folder is the suite's fake one (`tests/conftest.isolated_env`), with
a fake `~/.ssh/id_rsa`.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.config.schema import PermissionsSettings
from agentcli.testing.fake_llm import FakeLLMServer
from agentcli.tools.base import FileLocks, ToolContext, ToolResult
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.sandbox import landlock, netns
from agentcli.tools.sandbox.policy import Mechanisms, Sandbox, SandboxSpec
from agentcli.tools.shell.bash import BashArgs, BashTool
from tests.e2e.helpers import cli_env, run_cli
from tests.security.scripted import bash_calls, tool_results

ABI = landlock.abi_version()
pytestmark = pytest.mark.skipif(ABI == 0, reason="no Landlock on this kernel")
NETNS = ABI > 0 and netns.probe() is None
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- fake-key-material"


@pytest.fixture
def home(isolated_env: Path) -> Path:
    """The fake home folder, with a private key and a file a link could reach."""
    (isolated_env / ".ssh").mkdir(exist_ok=True)
    (isolated_env / ".ssh" / "id_rsa").write_text(KEY + "\n")
    (isolated_env / "notes.txt").write_text("original\n")
    return isolated_env


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = (tmp_path / "ws").resolve()
    path.mkdir()
    return path


def _sandbox(workspace: Path, **kwargs: object) -> Iterator[Sandbox]:
    sandbox = Sandbox(SandboxSpec(workspace, **kwargs))  # type: ignore[arg-type]
    try:
        yield sandbox
    finally:
        sandbox.close()


@pytest.fixture
def sandbox(workspace: Path, home: Path) -> Iterator[Sandbox]:
    yield from _sandbox(workspace)


def _bash(command: str, sandbox: Sandbox, policy: PermissionPolicy | None = None) -> ToolResult:
    ctx = ToolContext(workspace=sandbox.spec.workspace, agent="main", session_id="s-sandbox",
                      permissions=policy or PermissionPolicy("auto"), file_locks=FileLocks(), sandbox=sandbox)
    return asyncio.run(BashTool().run(BashArgs(command=command), ctx))




def test_with_yes_no_bash_command_writes_past_the_workspace_or_reads_a_key(tmp_path: Path, home: Path) -> None:
    """Through the real CLI with --yes: $HOME, /tmp outside the session folder, `..`, a symlink out, a hard link
    it makes to an outside file, and ~/.ssh/id_rsa; while a write inside the workspace goes through."""
    repo = tmp_path / "repo"
    repo.mkdir()
    loose_tmp = Path(tempfile.gettempdir()) / f"agentcli-escape-{os.getpid()}-{tmp_path.name}"
    commands = (
        f"echo pwned > {home}/pwned.txt",
        f"echo pwned > {loose_tmp}",
        "echo pwned > ../escaped.txt",
        f"ln -s {home}/notes.txt out-link && echo pwned > out-link",
        f"ln {home}/notes.txt hard-link && echo pwned >> hard-link",
        "cat ~/.ssh/id_rsa",
        'echo fine > inside.txt && echo "$TMPDIR" && touch "$TMPDIR/scratch" && echo tmp-ok',
    )
    with FakeLLMServer(bash_calls(*commands)) as server:
        proc = run_cli(["run", "--yes", "--cwd", str(repo), "escape"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert not (home / "pwned.txt").exists()
    assert not loose_tmp.exists()
    assert not (tmp_path / "escaped.txt").exists()
    assert (home / "notes.txt").read_text() == "original\n"
    assert not (repo / "hard-link").exists()
    results = tool_results(server)
    assert len(results) == len(commands)
    assert KEY not in "".join(results)
    for result in results[:6]:
        assert "[sandbox]" in result, result
    assert "read deny list" in results[5]
    assert (repo / "inside.txt").read_text() == "fine\n"
    assert "tmp-ok" in results[6] and "agentcli-bash-" in results[6]
    assert not Path(results[6].splitlines()[0]).exists()  # the session's temp folder goes with the session


def test_a_symlink_the_repository_ships_cannot_be_read_or_written_through(workspace: Path, home: Path,
                                                                          sandbox: Sandbox) -> None:
    os.symlink(home / ".ssh" / "id_rsa", workspace / "key.txt")
    os.symlink(home / "notes.txt", workspace / "notes.txt")
    result = _bash("cat key.txt; echo pwned > notes.txt", sandbox)
    assert KEY not in result.content
    assert (home / "notes.txt").read_text() == "original\n"
    assert f"{home}/.ssh/id_rsa is on the Bash sandbox's read deny list" in result.content
    assert f"{home}/notes.txt is outside the folders the Bash sandbox lets commands write to" in result.content


def test_agentclis_own_folders_and_deny_read_paths_are_unreadable(workspace: Path, home: Path) -> None:
    config = home / ".config" / "agentcli"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text('api_key = "sk-secret"\n')
    private = home / "private"
    private.mkdir()
    (private / "diary.txt").write_text("dear diary\n")
    for sandbox in _sandbox(workspace, deny_read=(str(private),)):
        result = _bash(f"cat {config}/config.toml {private}/diary.txt; cat {home}/notes.txt; ls {home}", sandbox)
    assert "sk-secret" not in result.content and "dear diary" not in result.content
    assert "original" in result.content  # the rest of the home folder stays readable
    assert "notes.txt" in result.content  # and listable


def test_other_processes_environment_cannot_be_read(workspace: Path, home: Path, sandbox: Sandbox,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERSONS_TOKEN", "tok-visible-to-ptrace-only")  # this test process stands for the shell
    result = _bash(f"tr '\\0' '\\n' < /proc/{os.getpid()}/environ", sandbox)
    assert "tok-visible-to-ptrace-only" not in result.content
    assert f"/proc/{os.getpid()}/environ: the Bash sandbox keeps commands from inspecting processes" in result.content


def _accept_all(server: socket.socket) -> None:
    try:
        while True:
            server.accept()[0].close()
    except OSError:  # the test closed the listener
        pass


def _listener() -> tuple[socket.socket, int]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    threading.Thread(target=_accept_all, args=(server,), daemon=True).start()
    return server, server.getsockname()[1]


def _connect(port: int) -> str:
    return (f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); "
            "print('connected')\"")


@pytest.mark.parametrize("mechanism", [
    pytest.param("namespace", marks=pytest.mark.skipif(not NETNS, reason="no user namespaces here")),
    pytest.param("landlock-tcp", marks=pytest.mark.skipif(ABI < 4, reason="Landlock ABI < 4 has no TCP rules")),
])
def test_a_local_tcp_server_is_unreachable_with_the_network_off(workspace: Path, home: Path, mechanism: str) -> None:
    server, port = _listener()
    with server:
        for sandbox in _sandbox(workspace):
            sandbox._mechanisms = Mechanisms(ABI, mechanism)  # type: ignore[arg-type]
            result = _bash(_connect(port), sandbox)
    assert "connected" not in result.content.replace("not connected", "")
    assert "[sandbox] The network is off for Bash commands" in result.content


def test_a_local_tcp_server_is_reachable_with_network_allow(workspace: Path, home: Path) -> None:
    server, port = _listener()
    with server:
        for sandbox in _sandbox(workspace, network="allow"):
            result = _bash(_connect(port), sandbox)
    assert result.content.strip() == "connected"


@pytest.mark.skipif(not NETNS, reason="no user namespaces here")
def test_the_network_namespace_stops_udp_too(workspace: Path, home: Path, sandbox: Sandbox) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        receiver.setblocking(False)
        port = receiver.getsockname()[1]
        script = (f"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                  f".sendto(b'leak', ('127.0.0.1', {port}))")
        _bash(f'{sys.executable} -c "{script}"', sandbox)
        with pytest.raises(BlockingIOError):  # loopback delivery is synchronous: it would be queued by now
            receiver.recv(16)


def test_building_and_testing_inside_the_workspace_still_works(workspace: Path, home: Path,
                                                              sandbox: Sandbox) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (workspace / "test_calc.py").write_text("from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    result = _bash(f"{sys.executable} -m compileall -q . && {sys.executable} -m pytest -q -p no:xdist -p no:randomly"
                   " test_calc.py && mkdir -p build && cp calc.py build/ && ls build", sandbox)
    assert "1 passed" in result.content, result.content
    assert result.metadata["exit_code"] == 0
    assert (workspace / "build" / "calc.py").exists() and (workspace / ".pytest_cache").is_dir()


def test_ask_mode_may_rerun_one_refused_command_outside_the_sandbox(workspace: Path, home: Path,
                                                                    sandbox: Sandbox) -> None:
    asked: list[str] = []

    async def approve(request: object) -> str:
        asked.append(getattr(request, "summary", ""))
        return "allow_once"

    result = _bash(f"echo approved > {home}/approved.txt", sandbox, PermissionPolicy("ask", approver=approve))
    assert asked == [f"run again OUTSIDE the sandbox: echo approved > {home}/approved.txt"]
    assert (home / "approved.txt").read_text() == "approved\n"
    assert result.content.startswith("[ran again OUTSIDE the sandbox, approved by the person")
    assert result.metadata["outside_sandbox"] is True


@pytest.mark.parametrize("policy", [
    PermissionPolicy("auto", approver=lambda request: asyncio.sleep(0, "allow_once")),  # auto mode: never asked
    PermissionPolicy.from_settings(PermissionsSettings(), oneshot=True, yes=True),  # --yes
], ids=["auto-mode", "yes"])
def test_auto_mode_and_yes_never_escape_the_sandbox(workspace: Path, home: Path, sandbox: Sandbox,
                                                    policy: PermissionPolicy) -> None:
    result = _bash(f"echo pwned > {home}/pwned.txt", sandbox, policy)
    assert not (home / "pwned.txt").exists()
    assert "[sandbox]" in result.content and "outside_sandbox" not in result.metadata
